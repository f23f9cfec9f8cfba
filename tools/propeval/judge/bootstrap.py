"""95% confidence intervals of a mean by bootstrap, over items, and over runs when several.

A percentile bootstrap with numpy (``numpy.random.default_rng(seed)``): each draw resamples the
runs with replacement, then the items with replacement, and takes the mean of every value of a
drawn item in a drawn run (an item a run did not count is left out of that draw's mean). With
one run it is the plain bootstrap over items.

Why not ``scipy.stats.bootstrap``: it resamples one flat sample (or paired samples of equal
length); the two-stage draw over runs and items, with items missing from some runs, is not one
of its designs. Written by hand, it is about twenty lines of numpy, vectorised in blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from propeval.errors import DependencyError

METHOD = "percentile bootstrap, numpy default_rng(seed); resamples items, and runs when several"
_BLOCK = 4_000_000  # values per vectorised block of draws (about 32 MB of float64)


def describe(draws: int, seed: int) -> dict[str, Any]:
    """How every interval of a report was computed (stated in the report)."""
    return {"level": 0.95, "method": METHOD, "draws": draws, "seed": seed}


def mean_ci(values: Mapping[str, Mapping[str, float]], *, draws: int, seed: int) -> tuple[float, float] | None:
    """The 95% interval of the mean of ``values`` (run -> item -> value); None with fewer than two
    values (no interval can be drawn)."""
    try:
        import numpy as np
    except ImportError as e:
        raise DependencyError("numpy", "stats") from e
    runs = sorted(values)
    items = sorted({i for r in runs for i in values[r]})
    if sum(len(values[r]) for r in runs) < 2:
        return None
    m = np.full((len(runs), len(items)), np.nan)
    col = {i: k for k, i in enumerate(items)}
    for j, r in enumerate(runs):
        for i, v in values[r].items():
            m[j, col[i]] = v
    present = ~np.isnan(m)
    filled = np.where(present, m, 0.0)
    rng = np.random.default_rng(seed)
    n_runs, n_items = m.shape
    block = max(1, _BLOCK // (n_runs * n_items))
    means: list[Any] = []
    left = draws
    while left > 0:
        b = min(block, left)
        left -= b
        rr = rng.integers(0, n_runs, (b, n_runs)) if n_runs > 1 else np.zeros((b, 1), dtype=np.intp)
        ii = rng.integers(0, n_items, (b, n_items))
        sums = filled[rr[:, :, None], ii[:, None, :]].sum(axis=(1, 2))
        counts = present[rr[:, :, None], ii[:, None, :]].sum(axis=(1, 2))
        ok = counts > 0
        means.append(sums[ok] / counts[ok])
    drawn = np.concatenate(means)
    if drawn.size == 0:
        return None
    lo, hi = np.percentile(drawn, [2.5, 97.5])
    return float(lo), float(hi)
