"""Parameter recovery of propeval's IRT fits on simulated panels (seeded), against the mean score.

Simulation: 1000 items x 20 models; abilities theta ~ N(0, 1); item locations b ~ N(0, SD_B);
discriminations a ~ logNormal(0, 0.3); 0-5 scores from the graded model with thresholds
(-2, -1, 0, 1, 2); binary outcomes from the 2PL. Prints Spearman's rho between the fitted and the
true locations, and the same for the classical mean score (the peer: no model at all), as medians
over seeds, with fit times.

Run: PYTHONPATH=tools python benchmarks/difficulty_recovery.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from propeval.difficulty import fit_2pl, fit_grm

TAU = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])


def simulate(seed: int, sd_b: float, kind: str, n_items: int = 1000, n_models: int = 20, missing: float = 0.0):
    rng = np.random.default_rng(seed)
    b = rng.normal(0, sd_b, n_items)
    a = np.exp(rng.normal(0, 0.3, n_items))
    theta = rng.normal(0, 1, n_models)
    w = (rng.random((n_items, n_models)) >= missing).astype(float)
    if kind == "grm":
        star = 1 / (1 + np.exp(-a[:, None, None] * (theta[None, :, None] - b[:, None, None] - TAU)))
        score = (rng.random((n_items, n_models))[:, :, None] < star).sum(axis=2)
        return b, np.eye(6)[score], score / 5, w
    p = 1 / (1 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))
    y = (rng.random((n_items, n_models)) < p).astype(float)
    return b, y, y, w


def main() -> None:
    print(f"{'model':<6} {'sd_b':>5} {'missing':>8} {'rho fit':>8} {'rho mean':>9} {'ratio':>6} {'fit s':>6}")
    for kind, sd_b, missing in (("grm", 1.5, 0.1), ("grm", 1.5, 0.0), ("grm", 1.0, 0.0), ("2pl", 1.5, 0.0)):
        fits, means, times = [], [], []
        for seed in range(5):
            b, data, norm, w = simulate(seed, sd_b, kind, missing=missing)
            t = time.perf_counter()
            fit = fit_grm(data, w) if kind == "grm" else fit_2pl(data, w)
            times.append(time.perf_counter() - t)
            fits.append(spearmanr(fit.b, b).statistic)
            with np.errstate(invalid="ignore"):
                mean = (norm * w).sum(axis=1) / w.sum(axis=1)
            means.append(spearmanr(-mean, b, nan_policy="omit").statistic)
        f, m = statistics.median(fits), statistics.median(means)
        print(f"{kind:<6} {sd_b:>5} {missing:>8} {f:>8.4f} {m:>9.4f} {f / m:>6.3f} {statistics.median(times):>6.2f}")


if __name__ == "__main__":
    main()
