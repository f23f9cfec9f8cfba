"""Candidate generation and scoring: which pairs each pass looks at, and their scores.

* exact: equal normalised-text hashes;
* semantic: faiss k nearest neighbours of each text among other claims' texts of its kind, in each
  language (:class:`SemanticSpace`), scored by cosine (a second model's for languages the first
  does not know);
* lexical: rapidfuzz over pairs that share a rare word bigram, plus the semantic neighbours.

Pairs are ``(i, j)`` with ``i < j``, indices into the run's list of units; a pair of one claim, or
of an item and a fact, is never a candidate.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from propeval.dedup.settings import Settings
from propeval.dedup.units import Unit
from propeval.langtags import language_key

PairIndex = tuple[int, int]


def lang(u: Unit) -> str:
    return language_key(u.language)


def comparable(a: Unit, b: Unit) -> bool:
    return a.kind == b.kind and a.claim_id != b.claim_id


def _by_claim(units: Sequence[Unit]) -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        out[(u.kind, u.claim_id)].append(i)
    return out


def exact_pairs(units: Sequence[Unit], focus: set[int] | None) -> Iterable[PairIndex]:
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        groups[(u.kind, u.key)].append(i)
    for members in groups.values():
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                if comparable(units[i], units[j]) and (focus is None or i in focus or j in focus):
                    yield (i, j)


def bigram_candidates(units: Sequence[Unit], focus: set[int] | None, max_df: int) -> set[PairIndex]:
    """Pairs that share a word bigram used by at most ``max_df`` texts (blocking for rapidfuzz)."""
    postings: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        words = re.findall(r"\w+", u.norm)
        for bg in {(u.kind, words[n], words[n + 1]) for n in range(len(words) - 1)}:
            postings[bg].append(i)
    out: set[PairIndex] = set()
    for members in postings.values():
        if len(members) < 2 or len(members) > max_df:
            continue
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                if comparable(units[i], units[j]) and (focus is None or i in focus or j in focus):
                    out.add((i, j))
    return out


def lexical_scores(units: Sequence[Unit], candidates: Iterable[PairIndex]) -> dict[PairIndex, float]:
    """rapidfuzz ``token_sort_ratio`` / 100 of each candidate pair's normalised texts."""
    from rapidfuzz import fuzz

    return {(i, j): fuzz.token_sort_ratio(units[i].norm, units[j].norm) / 100.0 for i, j in candidates}


@dataclass
class SemanticSpace:
    """The units the semantic pass embeds (all facts; items in the model's languages), their vectors
    once embedded, and what the neighbour search found.

    ``rows[n]`` is the index into the run's units of row ``n``; ``knn_rank`` maps (query row,
    neighbour row) to the neighbour's 1-based rank among the query's other-claim neighbours.

    With a ``rescorer`` (the ``use`` backend), a pair in which a text's language is not one the
    model knows (``known_languages``: USE multilingual v3 was not trained on Ukrainian) is scored by
    the second model instead (multilingual-e5-small): the first model's neighbours of such a text
    are its candidates, and only their texts are embedded by the slower second model. So is a pair
    of items in one language of ``second_same`` (ru, zh: USE cannot tell related questions of one
    topic from paraphrases there) whose first-model cosine reaches ``second_gate``.
    """

    units: list[Unit]
    rows: list[int]
    vectors: np.ndarray | None = None
    neighbour_pairs: set[PairIndex] = field(default_factory=set)
    knn_rank: dict[tuple[int, int], int] = field(default_factory=dict)
    rescorer: Callable[[list[Unit]], np.ndarray] | None = None
    known_languages: frozenset[str] | None = None  # the first model's languages; None: every one
    second_same: frozenset[str] = frozenset()  # languages whose same-language pairs the second model scores
    second_gate: float = 1.0  # ... when the first model's cosine is at least this
    second_across: frozenset[str] | None = None  # the second model scores items of two of these languages
    second: dict[int, np.ndarray] = field(default_factory=dict)  # row -> the second model's vector

    @classmethod
    def select(cls, units: Sequence[Unit], settings: Settings) -> SemanticSpace:
        langs = settings.languages()
        rows = [i for i, u in enumerate(units) if u.kind == "fact" or not langs or lang(u) in langs]
        return cls([units[i] for i in rows], rows)

    def focus_rows(self, focus: set[int] | None) -> list[int]:
        """Rows whose neighbours are searched: every row, or those of changed texts."""
        return [n for n, i in enumerate(self.rows) if focus is None or i in focus]

    def search(self, queries: Sequence[int], settings: Settings) -> dict[PairIndex, float]:
        """Find each query row's nearest other-claim neighbours in each language (``neighbours``
        per language, so a text's translations are not crowded out by same-language neighbours);
        return the scores (:meth:`score`) of the pairs at or above their language pair's threshold."""
        assert self.vectors is not None, "embed the space before searching it"
        hits: dict[PairIndex, float] = {}
        unknown: set[PairIndex] = set()  # (row, row) pairs the second model scores
        for target, found in self._neighbours(list(queries), settings):
            for qn, kept in found.items():
                q_unit = self.units[qn]
                for rank, (s_, jn) in enumerate(kept, start=1):
                    self.knn_rank[(qn, jn)] = rank
                    qi, j = self.rows[qn], self.rows[jn]
                    pair = (min(qi, j), max(qi, j))
                    self.neighbour_pairs.add(pair)
                    if self.second_scores(qn, jn):
                        if not self.same_language_second(qn, jn) or s_ >= self.second_gate - 1e-6:
                            unknown.add((min(qn, jn), max(qn, jn)))
                    elif s_ >= settings.pair_limit(lang(q_unit), target, q_unit.kind)[0] - 1e-6:
                        hits[pair] = s_
        self.rescore({r for pair in unknown for r in pair})
        for a, b in unknown:
            score = self.score(a, b)
            ua = self.units[a]
            if score >= settings.pair_limit(lang(ua), lang(self.units[b]), ua.kind)[0] - 1e-6:
                ia, ib = self.rows[a], self.rows[b]
                hits[(min(ia, ib), max(ia, ib))] = score
        return hits

    def second_scores(self, a: int, b: int) -> bool:
        """Whether the second model scores the pair of rows ``a`` and ``b``: a text's language is
        one the first model does not know."""
        if self.rescorer is None:
            return False
        if self.second_across is not None:
            ua, ub = self.units[a], self.units[b]
            across = self.second_across
            return ua.kind == ub.kind == "item" and lang(ua) != lang(ub) and lang(ua) in across and lang(ub) in across
        known = self.known_languages
        if known is None:
            return False
        if self.same_language_second(a, b):
            return True
        return not all(u.kind == "fact" or lang(u) in known for u in (self.units[a], self.units[b]))

    def same_language_second(self, a: int, b: int) -> bool:
        """Whether rows ``a`` and ``b`` are items of one language (``second_same``) that the second
        model scores, when the first model's cosine reaches ``second_gate``."""
        ua, ub = self.units[a], self.units[b]
        return ua.kind == ub.kind == "item" and lang(ua) == lang(ub) and lang(ua) in self.second_same

    def rescore(self, rows: Iterable[int]) -> None:
        """Embed the texts of ``rows`` with the second model (those it has not embedded yet)."""
        todo = sorted(set(rows) - set(self.second))
        if todo and self.rescorer is not None:
            vecs = self.rescorer([self.units[r] for r in todo])
            self.second.update(zip(todo, vecs, strict=True))

    def _neighbours(
        self, queries: list[int], settings: Settings, targets: Iterable[str] | None = None
    ) -> Iterable[tuple[str, dict[int, list[tuple[float, int]]]]]:
        """Per target language: each query row's nearest other-claim rows of its kind there, up to
        ``neighbours`` of them, as (cosine, row), nearest first."""
        from propeval.embed.index import IndexSettings, neighbours

        assert self.vectors is not None
        idx_settings = IndexSettings(
            settings.exact_index_below,
            settings.hnsw_m,
            ef_search=settings.ef_search,
            approximate=settings.approximate_index,
            ivf_nprobe=settings.ivf_nprobe,
        )
        qvecs = self.vectors[queries]
        for target in sorted(self.by_language if targets is None else targets):
            rows = self.by_language[target]
            # Ask for extra neighbours: same-claim ones are dropped afterwards.
            widest = max(len(v) for v in _by_claim([self.units[r] for r in rows]).values())
            k = min(len(rows), settings.neighbours + widest)
            scores, ids = neighbours(self.vectors[rows], qvecs, k, idx_settings)
            found: dict[int, list[tuple[float, int]]] = {}
            for row, qn in enumerate(queries):
                q_unit = self.units[qn]
                kept: list[tuple[float, int]] = []
                for s_, local in zip(scores[row], ids[row], strict=True):
                    if local < 0:
                        continue
                    jn = rows[int(local)]
                    if jn == qn or not comparable(q_unit, self.units[jn]):
                        continue
                    kept.append((float(s_), jn))
                    if len(kept) == settings.neighbours:
                        break
                found[qn] = kept
            yield target, found

    def score(self, a: int, b: int) -> float:
        """The cosine of rows ``a`` and ``b``: the second model's when it scores the pair."""
        assert self.vectors is not None
        if self.second_scores(a, b):
            self.rescore((a, b))
            return float(self.second[a] @ self.second[b])
        return float(self.vectors[a] @ self.vectors[b])

    @functools.cached_property
    def by_language(self) -> dict[str, list[int]]:
        """Rows of each language (primary subtag)."""
        out: dict[str, list[int]] = defaultdict(list)
        for n, u in enumerate(self.units):
            out[lang(u)].append(n)
        return dict(out)

    def similarity(self, ia: int, ib: int) -> tuple[float, int, int] | None:
        """(score, rank of b among a's neighbours, rank of a among b's) of two units by their
        index in the run (see :meth:`score`); None when either was not embedded."""
        if self.vectors is None:
            return None
        row_of = self.row_of
        if ia not in row_of or ib not in row_of:
            return None
        ra, rb = row_of[ia], row_of[ib]
        return (
            self.score(ra, rb),
            self.knn_rank.get((ra, rb)) or self._rank(ra, rb),
            self.knn_rank.get((rb, ra)) or self._rank(rb, ra),
        )

    @functools.cached_property
    def row_of(self) -> dict[int, int]:
        """Row of each embedded unit, by its index in the run."""
        return {i: n for n, i in enumerate(self.rows)}

    @functools.cached_property
    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """Integer codes of each row's kind and claim, for vectorised comparability masks."""
        kinds: dict[str, int] = {}
        claims: dict[str, int] = {}
        k = np.array([kinds.setdefault(u.kind, len(kinds)) for u in self.units], dtype=np.int32)
        c = np.array([claims.setdefault(u.claim_id, len(claims)) for u in self.units], dtype=np.int32)
        return k, c

    def _rank(self, q: int, other: int) -> int:
        """1-based rank of row ``other`` among row ``q``'s neighbours from other claims (same kind) in
        ``other``'s language."""
        assert self.vectors is not None
        kind, claim = self.codes
        sims = self.vectors @ self.vectors[q]
        same = np.zeros(len(self.units), dtype=bool)
        same[self.by_language[lang(self.units[other])]] = True
        mask = (kind == kind[q]) & (claim != claim[q]) & same
        return int(np.count_nonzero((sims > sims[other]) & mask)) + 1
