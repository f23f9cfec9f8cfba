"""The score table as dense arrays over (items, models), for the statistics and the IRT fits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from propeval.difficulty.graded import N_CATEGORIES
from propeval.difficulty.inputs import ScoreTable
from propeval.settings import DifficultySettings


@dataclass
class Matrices:
    """Dense arrays over (items, models): mean normalised score, pass share, and the mask."""

    items: list[str]
    models: list[str]
    norm: Any  # items x models, NaN where missing
    passed: Any  # items x models, share of the model's runs at or above the pass mark
    mask: Any  # items x models, bool
    cats: Any = None  # items x models x 6 (0-5 scale): the share of the model's runs at each score


def build_matrices(table: ScoreTable, settings: DifficultySettings) -> Matrices:
    import numpy as np

    items, models = table.items, table.models
    ii = {x: n for n, x in enumerate(items)}
    mi = {x: n for n, x in enumerate(models)}
    n_items, n_models = len(items), len(models)
    mark = 1.0 if table.scale == "binary" else settings.pass_score
    # One row per observation: (cell, score); a cell is one item and one model.
    cell = np.array(
        [ii[item] * n_models + mi[model] for (item, model), scores in table.obs.items() for _ in scores], dtype=np.intp
    )
    score = np.array([s for scores in table.obs.values() for s in scores], dtype=float)
    size = n_items * n_models
    runs = np.bincount(cell, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = np.where(runs > 0, np.bincount(cell, score, size) / runs / table.top, np.nan)
        passed = np.where(runs > 0, np.bincount(cell, score >= mark, size) / runs, np.nan)
    cats = None
    if table.scale == "0-5":
        # A fractional score from a matrix is split between its neighbours.
        lo = np.minimum(np.floor(score), N_CATEGORIES - 1).astype(np.intp)
        frac = score - lo
        share = 1 / runs[cell]
        cats = np.bincount(cell * N_CATEGORIES + lo, (1 - frac) * share, size * N_CATEGORIES)
        up = frac > 0
        cats += np.bincount(cell[up] * N_CATEGORIES + lo[up] + 1, frac[up] * share[up], size * N_CATEGORIES)
        cats = cats.reshape(n_items, n_models, N_CATEGORIES)
    norm = norm.reshape(n_items, n_models)
    return Matrices(items, models, norm, passed.reshape(n_items, n_models), ~np.isnan(norm), cats)
