"""The IRT fits recover known parameters from simulated panels (seeded).

Simulation: 1000 items x 20 models, abilities ~ N(0, 1), item locations ~ N(0, 1.5),
discriminations ~ logNormal(0, 0.3). The bar is Spearman's rho >= 0.9 against the true locations.
benchmarks/difficulty_recovery.py prints the same figures over more seeds and designs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from propeval.difficulty import fit_2pl, fit_grm

if TYPE_CHECKING:
    import numpy as np

# numpy and scipy.stats are imported in the tests, not here: scipy.stats alone costs each xdist
# worker about 1 CPU-s at collection, paid even by a worker that never runs these tests.
N_ITEMS, N_MODELS = 1000, 20
TAU = (-2.0, -1.0, 0.0, 1.0, 2.0)


def _truth(seed: int) -> tuple[np.random.Generator, np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng, rng.normal(0, 1.5, N_ITEMS), np.exp(rng.normal(0, 0.3, N_ITEMS)), rng.normal(0, 1, N_MODELS)


def test_graded_model_recovers_difficulties_with_missing_cells() -> None:
    import numpy as np
    from scipy.stats import spearmanr

    rng, b, a, theta = _truth(11)
    star = 1 / (1 + np.exp(-a[:, None, None] * (theta[None, :, None] - b[:, None, None] - np.array(TAU))))
    score = (rng.random((N_ITEMS, N_MODELS))[:, :, None] < star).sum(axis=2)
    w = (rng.random((N_ITEMS, N_MODELS)) >= 0.1).astype(float)  # 10% of cells missing
    fit = fit_grm(np.eye(6)[score], w)
    assert spearmanr(fit.b, b).statistic >= 0.9
    assert spearmanr(fit.theta, theta).statistic >= 0.95
    assert np.all(np.diff(fit.thresholds) > 0)


def test_2pl_recovers_difficulties_from_binary_outcomes() -> None:
    import numpy as np
    from scipy.stats import spearmanr

    rng, b, a, theta = _truth(12)
    p = 1 / (1 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))
    y = (rng.random((N_ITEMS, N_MODELS)) < p).astype(float)
    fit = fit_2pl(y, np.ones_like(y))
    assert spearmanr(fit.b, b).statistic >= 0.9
    assert spearmanr(fit.theta, theta).statistic >= 0.95
