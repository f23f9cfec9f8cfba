"""The dedup engine: the one pass sequence every comparison of texts runs.

exact groups -> semantic space -> embed -> second model -> search -> lexical decision, then each
flagged pair explained the same way. ``propeval dedup`` (and through it the hook, ``ci``, ``run``,
``import`` and the review app: :func:`propeval.dedup.find.find_duplicates`), ``dedup calibrate``'s
corpus level (:func:`propeval.dedup.calibrate_corpus.corpus_candidates`) and ``overlap``
(:func:`propeval.ingest.overlap.find_overlap`) call :func:`compare` and read what it found; none
runs a pass of its own.

Three shapes of comparison, by two arguments:

* ``focus``: only pairs touching these texts (a commit's changed texts); None: every pair.
* ``across``: ``units[:across]`` are the corpus and the rest external texts; only pairs of one of
  each (``overlap``), every pair of identical texts its own finding, neighbours of the other side.
* ``every_pair``: every pair of identical texts its own finding (calibration).
* otherwise (``dedup``) a group of identical texts is one finding, stood for by its first two
  claims' texts, and no other pass flags a pair inside it; two texts of two languages are compared
  through a claim's translation when either has one.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from propeval.dedup.candidates import SemanticSpace
from propeval.dedup.embedding import Progress, embed_units, reporting_notes
from propeval.dedup.explain import differing_terms, shared_terms
from propeval.dedup.lexical import PairIndex, bigram_candidates, decide_lexical, exact_groups, lang, lexical_scores
from propeval.dedup.result import PASSES, DedupResult, Pair
from propeval.dedup.units import Unit
from propeval.embed.protocol import Encoder
from propeval.embed.registry import BACKENDS, configured_encoder, rescore_encoder
from propeval.progress import Phase
from propeval.settings import DedupSettings

Flagged = dict[PairIndex, dict[str, float]]  # pair -> pass -> score, for the passes that flag it


@dataclass
class Found:
    """What the passes found: the pairs each flagged, those the evidence vetoed, those just under
    their threshold (the review band's), the groups of identical texts, every lexical score that
    reached its threshold, and the searched space."""

    units: Sequence[Unit]
    settings: DedupSettings
    passes: Sequence[str]
    space: SemanticSpace
    across: int | None = None
    groups: list[list[int]] = field(default_factory=list)
    representative: dict[PairIndex, list[int]] = field(default_factory=dict)  # dedup: pair -> its group
    flagged: Flagged = field(default_factory=lambda: defaultdict(dict))
    lexical: dict[PairIndex, float] = field(default_factory=dict)
    vetoed: dict[PairIndex, str] = field(default_factory=dict)  # pair -> the evidence, semantic first
    near: dict[PairIndex, float] = field(default_factory=dict)  # pair -> its score, just under its threshold
    encoder: Encoder | None = None  # the first model, when the semantic space was embedded

    def explain(self, i: int, j: int, scores: dict[str, float]) -> Pair:
        """A pair with its scores (also those of passes it stayed below), its neighbour rank(s), what
        the texts share and what only one writes, and the threshold it is held to with its source.
        ``a`` is the corpus text with ``across``, else the pair's first id."""
        units, space, settings = self.units, self.space, self.settings
        if self.across is None:
            a, b = sorted((units[i], units[j]), key=lambda u: u.id)
            i, j = (i, j) if a is units[i] else (j, i)
        else:
            a, b = units[i], units[j]
        pair = Pair(a=a, b=b, scores={p: scores[p] for p in PASSES if p in scores})
        row_of = space.row_of
        embedded = space.vectors is not None and i in row_of and j in row_of
        if embedded:
            ra, rb = row_of[i], row_of[j]
            pair.semantic, cosine, means = space.scored(ra, rb)
            if settings.score == "margin":
                pair.cosine, pair.means = cosine, means
            pair.rank_a = space.rank(ra, rb)
            if self.across is None:  # overlap ranks the external text among the corpus's only
                pair.rank_b = space.rank(rb, ra)
        if "lexical" in self.passes:
            key = (min(i, j), max(i, j))
            pair.lexical = self.lexical[key] if key in self.lexical else lexical_scores(units, [key])[key]
        same = lang(a) == lang(b)
        pair.shared_terms = shared_terms(a.text, b.text, lang(a) if same else "")
        pair.differing_terms = differing_terms(a.text, b.text, same_language=same, language=lang(a))
        pair.threshold, pair.threshold_source = settings.pair_limit(lang(a), lang(b), a.kind)
        if embedded and space.grey:  # a grey zone's bound
            pair.threshold, pair.threshold_source = space.limit(row_of[i], row_of[j], settings)
        return pair

    def languages(self, span: Sequence[int]) -> tuple[dict[str, int], dict[str, int]]:
        """How many texts of ``span`` (unit indices) of each language the semantic pass embeds, and
        how many it leaves out."""
        embedded: dict[str, int] = {}
        left: dict[str, int] = {}
        rows = self.space.row_of
        for i in span:
            bucket = embedded if i in rows else left
            key = lang(self.units[i]) or "und"
            bucket[key] = bucket.get(key, 0) + 1
        return embedded, left


def compare(
    units: Sequence[Unit],
    settings: DedupSettings,
    root: Path,
    report: DedupResult,
    *,
    passes: Sequence[str] = PASSES,
    focus: set[int] | None = None,
    across: int | None = None,
    every_pair: bool = False,
    encoder: Encoder | None = None,
    second: bool | None = None,
    every_zone: bool = False,
    progress_factory: Callable[[int], Progress | None] | None = None,
    second_progress: Callable[[int], Progress | None] | None = None,
    announce: Callable[[str], None] | None = None,
    step: Phase | None = None,
) -> Found:
    """Run the passes over ``units``.

    Args:
        units: the texts compared (items' prompts, claim facts, external texts).
        settings: ``[tool.propeval.dedup]``.
        root: the corpus root (the caches' and the models' folders are under it).
        report: told the embedding's problems and counts (encoder notes, cache warnings, truncation).
        passes: the passes run (``exact``, ``lexical``, ``semantic``).
        focus: only pairs touching these unit indices; None: every pair.
        across: only pairs of a unit before this index and one from it (``overlap``).
        every_pair: each pair of identical texts is its own finding (calibration counts them all);
            with ``across`` too.
        encoder: the first model; default: the configured one.
        second: ask the second model (default: when no encoder is given: a caller's encoder scores
            every pair itself).
        every_zone: score every pair a grey zone may hold both ways (calibration places the zones).
        progress_factory, second_progress: called with the number of texts each model embeds;
            return a per-batch callback.
        announce: told about slow one-off work as it starts (a model's ONNX export).
        step: hears each step as it starts (``overlap``'s progress line).
    """
    tell: Phase = step or (lambda what, done, total: None)
    if across is not None:
        focus = set(range(across))
    found = Found(units, settings, passes, SemanticSpace.select(units, settings), across)
    flagged = found.flagged

    # exact: identical texts
    found.groups = exact_groups(units, focus)
    as_one = across is None and not every_pair
    if as_one:
        found.representative = {_representative(units, members): members for members in found.groups}
        exact: Sequence[PairIndex] = list(found.representative)
    else:
        exact = [
            (i, j) for g in found.groups for i, j in itertools.combinations(g, 2) if across is None or i < across <= j
        ]
    if "exact" in passes:
        for pair in exact:
            flagged[pair]["exact"] = 1.0
    in_group = {i: g for g, members in enumerate(found.groups) for i in members}

    def identical(pair: PairIndex) -> bool:  # a pair inside a group that is one finding
        if not as_one:
            return False
        g = in_group.get(pair[0])
        return g is not None and g == in_group.get(pair[1]) and pair not in found.representative

    # semantic: each text's nearest in each language, scored and decided
    space = found.space
    space.via_translations = as_one
    if across is not None:
        space.side = [0 if i < across else 1 for i in space.rows]
    queries = space.focus_rows(focus)
    # The lexical pass alone embeds nothing (it meets the pairs that share a rare word bigram), but
    # overlap's takes the semantic neighbours as candidates too.
    wanted = "semantic" in passes or (across is not None and "lexical" in passes)
    if wanted and (queries if across is None else space.rows):
        if encoder is None:
            tell("loading the model", 0, 0)
            found.encoder = reporting_notes(announce, lambda say: configured_encoder(settings, root, announce=say))
        else:
            found.encoder = encoder
        space.vectors = embed_units(
            space.units,
            settings,
            root,
            report,
            encoder=found.encoder,
            progress_factory=progress_factory,
            announce=announce,
        )
        if encoder is None if second is None else second:
            second_model(space, settings, root, report, second_progress or progress_factory, announce)
        space.grey_everywhere = every_zone and space.grey
        tell("searching nearest neighbours", 0, 0)
        hits = space.search(queries, settings)
        if "semantic" in passes:
            for pair, decision in space.decisions.items():
                if decision.veto and not identical(pair):
                    found.vetoed[pair] = decision.veto
            for pair, score in hits.items():
                if not identical(pair):
                    flagged[pair]["semantic"] = score
            for pair, decision in space.near.items():
                if not identical(pair):
                    found.near[pair] = decision.score

    # lexical: rapidfuzz over the pairs that share a rare word bigram, and the semantic neighbours
    if "lexical" in passes:
        tell("lexical comparison", 0, 0)
        candidates = bigram_candidates(units, focus, settings.max_bigram_df)
        if across is not None:
            candidates = {(i, j) for i, j in candidates if i < across <= j}
        # only the pairs that can be flagged: the rest are scored when explained (Found.explain)
        found.lexical = lexical_scores(units, candidates | space.neighbour_pairs, settings.lexical_threshold)
        decided = decide_lexical(units, {p: s for p, s in found.lexical.items() if not identical(p)}, settings)
        found.vetoed.update(decided.vetoed)
        for pair, score in decided.flagged.items():
            flagged[pair]["lexical"] = score
    return found


def _representative(units: Sequence[Unit], members: Sequence[int]) -> PairIndex:
    """The pair that stands for a group of identical texts: its first text and the first text of
    another claim."""
    first = members[0]
    other = next(k for k in members if units[k].claim_id != units[first].claim_id)
    return (min(first, other), max(first, other))


def second_model(
    space: SemanticSpace,
    settings: DedupSettings,
    root: Path,
    report: DedupResult,
    progress_factory: Callable[[int], Progress | None] | None,
    announce: Callable[[str], None] | None,
) -> None:
    """The backend's second model (:meth:`propeval.embed.registry.Backend.second_encoder`), and the
    pairs it scores (:meth:`~propeval.embed.registry.Backend.arrange_second`)."""
    second = reporting_notes(announce, lambda say: rescore_encoder(settings, root, announce=say))
    if second is None:
        return

    def rescorer(units: list[Unit]) -> np.ndarray:
        return embed_units(
            units, settings, root, report, encoder=second, progress_factory=progress_factory, announce=announce
        )

    BACKENDS[settings.backend].arrange_second(space, settings)
    space.rescorer = rescorer
