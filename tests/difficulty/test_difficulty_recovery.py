"""The IRT fits recover known parameters from simulated panels (seeded).

Simulation: 1000 items x 20 models, abilities ~ N(0, 1), item locations ~ N(0, 1.5),
discriminations ~ logNormal(0, 0.3). The bar is Spearman's rho >= 0.9 against the true locations.
benchmarks/difficulty_recovery.py prints the same figures over more seeds and designs.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from propeval.difficulty import fit_2pl, fit_grm

N_ITEMS, N_MODELS = 1000, 20
TAU = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])


def _truth(seed: int) -> tuple[np.random.Generator, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng, rng.normal(0, 1.5, N_ITEMS), np.exp(rng.normal(0, 0.3, N_ITEMS)), rng.normal(0, 1, N_MODELS)


def test_graded_model_recovers_difficulties_with_missing_cells() -> None:
    rng, b, a, theta = _truth(11)
    star = 1 / (1 + np.exp(-a[:, None, None] * (theta[None, :, None] - b[:, None, None] - TAU)))
    score = (rng.random((N_ITEMS, N_MODELS))[:, :, None] < star).sum(axis=2)
    w = (rng.random((N_ITEMS, N_MODELS)) >= 0.1).astype(float)  # 10% of cells missing
    fit = fit_grm(np.eye(6)[score], w)
    assert spearmanr(fit.b, b).statistic >= 0.9
    assert spearmanr(fit.theta, theta).statistic >= 0.95
    assert np.all(np.diff(fit.thresholds) > 0)


def test_2pl_recovers_difficulties_from_binary_outcomes() -> None:
    rng, b, a, theta = _truth(12)
    p = 1 / (1 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))
    y = (rng.random((N_ITEMS, N_MODELS)) < p).astype(float)
    fit = fit_2pl(y, np.ones_like(y))
    assert spearmanr(fit.b, b).statistic >= 0.9
    assert spearmanr(fit.theta, theta).statistic >= 0.95
