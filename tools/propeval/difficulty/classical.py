"""Classical test theory per item: mean normalised score, pass share, corrected item-total discrimination."""

from __future__ import annotations

from typing import Any

from propeval.difficulty.matrices import Matrices


def classical(m: Matrices, pass_mark: float) -> dict[str, Any]:
    """Per-item mean, share of models at or above ``pass_mark`` (normalised), discrimination.

    Returns arrays: ``n``, ``mean``, ``share_pass``, ``discrimination`` (NaN when undefined).
    """
    import numpy as np

    x, mask = m.norm, m.mask
    n = mask.sum(axis=1)
    filled = np.where(mask, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=1) / n
        share = np.where(mask, x >= pass_mark - 1e-9, False).sum(axis=1) / n
    col_sum, col_n = filled.sum(axis=0), mask.sum(axis=0)
    # Pearson's r of each item's scores against the models' mean on the other items, all items at
    # once: per row, over the models that saw the item and saw at least one other item.
    ok = mask & (col_n[None, :] > 1)
    k = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = np.where(ok, (col_sum[None, :] - filled) / (col_n[None, :] - 1), 0.0)
        item = np.where(ok, x, 0.0)
        dx = np.where(ok, item - item.sum(axis=1, keepdims=True) / k[:, None], 0.0)
        dr = np.where(ok, rest - rest.sum(axis=1, keepdims=True) / k[:, None], 0.0)
        r = (dx * dr).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dr * dr).sum(axis=1))

    def spread(v: Any) -> Any:  # max - min over the row's usable cells: 0 means constant
        return np.where(ok, v, -np.inf).max(axis=1) - np.where(ok, v, np.inf).min(axis=1)

    defined = (k >= 3) & (spread(item) > 0) & (spread(rest) > 0)
    disc = np.where(defined, np.clip(r, -1.0, 1.0), np.nan)
    return {"n": n, "mean": mean, "share_pass": share, "discrimination": disc}
