"""Bands (easy / medium / hard) from a basis value and two cut points, fixed or quantile."""

from __future__ import annotations

import math
from typing import Any

from propeval.settings import DifficultySettings

BANDS = ("easy", "medium", "hard")


def band_codes(values: Any, settings: DifficultySettings, cut_values: tuple[float, float]) -> Any:
    """:func:`band_of` as indices into BANDS (-1 for none), for a whole draw at once."""
    import numpy as np

    lo, hi = cut_values
    with np.errstate(invalid="ignore"):
        if settings.basis == "irt":
            codes = np.where(values < lo, 0, np.where(values >= hi, 2, 1))
        else:
            codes = np.where(values < lo, 2, np.where(values >= hi, 0, 1))
    return np.where(np.isnan(values), -1, codes)


def band_of(values: Any, settings: DifficultySettings, cut_values: tuple[float, float]) -> list[str | None]:
    """Band of each basis value (NaN -> None)."""
    out: list[str | None] = []
    lo, hi = cut_values
    for v in values:
        if v is None or math.isnan(v):
            out.append(None)
        elif settings.basis == "irt":
            out.append("easy" if v < lo else "hard" if v >= hi else "medium")
        else:
            out.append("hard" if v < lo else "easy" if v >= hi else "medium")
    return out


def cut_values(values: Any, settings: DifficultySettings) -> tuple[float, float]:
    """The cut points on the basis scale: fixed, or quantiles of the banded items' values."""
    import numpy as np

    if settings.cuts == "score":
        return settings.cut_points
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return (math.nan, math.nan)
    q_lo, q_hi = settings.quantile_cuts
    if settings.basis == "mean":  # a low mean is hard: the easiest share sits at the top
        q_lo, q_hi = 1 - q_hi, 1 - q_lo
    return float(np.quantile(finite, q_lo)), float(np.quantile(finite, q_hi))
