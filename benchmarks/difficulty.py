"""Time and memory of `propeval difficulty` with ``basis = "irt"`` on a synthetic 41,871 x 12 matrix.

Simulation (seeded): item locations b ~ N(0, 1.5), discriminations a ~ logNormal(0, 0.3), model
abilities theta ~ N(0, 1), 0-5 scores from the graded model with thresholds (-2, -1, 0, 1, 2), 5% of
cells missing. Each case runs in a fresh subprocess, so its peak memory (ru_maxrss) is its own.

Cases:

* ``new``: the whole computation (`difficulty.compute`: classical statistics, the IRT fit, 200
  bootstrap draws over models, bands, flags), as `propeval difficulty` runs it.
* ``old fit``: the code path before this change: one joint L-BFGS-B fit of the same objective with
  its old options, and its bootstrap (a joint refit per draw, warm-started). It is timed on a
  subsample of items, where it finishes, with 3 refits; the old full-run time is extrapolated as
  fit + 200 x median refit.
* ``new fit``: the new fit and bootstrap draws on the same subsample, for the like-for-like ratio.

Figures are medians over ``--repeats`` runs; wall time depends on what else runs on the machine,
so CPU time is printed beside it, with the load average.

Run: PYTHONPATH=tools python benchmarks/difficulty.py [--items 41871] [--subsample 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

TAU = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
MODELS = 12
DRAWS = 200


def simulate(n_items: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Scores (items x models, -1 where missing) and the true item locations."""
    rng = np.random.default_rng(seed)
    b = rng.normal(0, 1.5, n_items)
    a = np.exp(rng.normal(0, 0.3, n_items))
    theta = rng.normal(0, 1, MODELS)
    star = 1 / (1 + np.exp(-a[:, None, None] * (theta[None, :, None] - b[:, None, None] - TAU)))
    score = (rng.random((n_items, MODELS))[:, :, None] < star).sum(axis=2)
    return np.where(rng.random((n_items, MODELS)) < 0.05, -1, score), b


def case_new(n_items: int) -> dict[str, Any]:
    from propeval.difficulty import ScoreTable, compute
    from propeval.settings import DifficultySettings

    score, _ = simulate(n_items)
    table = ScoreTable(scale="0-5")
    for j in range(n_items):
        for i in range(MODELS):
            if score[j, i] >= 0:
                table.add(f"i{j:05d}", f"m{i:02d}", int(score[j, i]))
    wall, cpu = time.perf_counter(), time.process_time()
    ledger = compute(table, DifficultySettings(basis="irt", bootstrap=DRAWS))
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "converged": ledger["irt"]["converged"],
    }


def _old_fit(cats: np.ndarray, w: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The fit as it was: scipy L-BFGS-B on the whole parameter vector, with its old options."""
    from scipy.optimize import minimize

    from propeval.difficulty.irt import _grm_neg_log_posterior

    n, m, _ = cats.shape
    res = minimize(
        _grm_neg_log_posterior,
        start,
        args=(np.where(w[:, :, None] > 0, cats, 0.0), w, n, m, (1.0, 2.0, 0.5)),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 3000, "ftol": 1e-7, "gtol": 1e-3, "maxcor": 30},
    )
    return res.x


def _draws(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.bincount(rng.integers(0, MODELS, MODELS), minlength=MODELS).astype(float) for _ in range(count)]


def case_fits(n_items: int, which: str, refits: int) -> dict[str, Any]:
    from propeval.difficulty import N_CATEGORIES, build_matrices, fit_grm
    from propeval.difficulty.irt import _start, graded_model
    from propeval.settings import DifficultySettings

    score, _ = simulate(n_items)
    w = (score >= 0).astype(float)
    cats = np.where(w[:, :, None] > 0, np.eye(N_CATEGORIES)[np.maximum(score, 0)], 0.0)
    mean = (cats * np.arange(N_CATEGORIES)).sum(axis=2) / (N_CATEGORIES - 1)
    t0, b0 = _start(mean, w)
    start = np.concatenate([t0, b0, np.zeros(n_items), np.zeros(N_CATEGORIES - 2)])
    wall, cpu = time.perf_counter(), time.process_time()
    if which == "old":
        params = _old_fit(cats, w, start)
    else:
        fit = fit_grm(cats, w)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    times, cpus = [], []
    if which == "new":
        from propeval.difficulty import ScoreTable
        from propeval.difficulty.bootstrap import _basis

        table = ScoreTable(scale="0-5")
        for j in range(n_items):
            for i in range(MODELS):
                if score[j, i] >= 0:
                    table.add(f"i{j:05d}", f"m{i:02d}", int(score[j, i]))
        matrices = build_matrices(table, DifficultySettings())
        graded = graded_model(matrices, DifficultySettings(basis="irt"), "grm")
    for counts in _draws(1, refits):
        t, c = time.perf_counter(), time.process_time()
        if which == "old":
            _old_fit(cats, w * counts[None, :], params)
        else:
            _basis(matrices, counts, DifficultySettings(basis="irt"), fit, graded)
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return {
        "fit_wall": fit_wall,
        "draw_wall": statistics.median(times),
        "wall": fit_wall + DRAWS * statistics.median(times),
        "cpu": fit_cpu + DRAWS * statistics.median(cpus),
    }


def run_case(args: list[str]) -> dict[str, Any]:
    """One case in a fresh interpreter: its result and its peak resident memory."""
    out = subprocess.run(
        [sys.executable, __file__, "--case", *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "tools")},
    )
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=41871)
    parser.add_argument("--subsample", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--case", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case is not None:
        kind, n = args.case[0], int(args.case[1])
        result = case_new(n) if kind == "new" else case_fits(n, kind.removesuffix("-fits"), int(args.case[2]))
        result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return

    print(f"IRT difficulty (graded model), {MODELS} models, {DRAWS} bootstrap draws; medians of {args.repeats} run(s)")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} core(s)")
    print(f"{'case':<34} {'items':>6} {'wall s':>8} {'cpu s':>7} {'fit s':>7} {'draw s':>7} {'peak MB':>8}")
    rows = [
        ("new: whole computation", ["new", str(args.items)]),
        ("new: fit + 200 draws (extrap.)", ["new-fits", str(args.subsample), "20"]),
        ("old: fit + 200 refits (extrap.)", ["old", str(args.subsample), "3"]),
    ]
    for label, case in rows:
        results = [run_case(case) for _ in range(args.repeats)]

        def med(key: str, digits: int = 1, results: list[dict[str, Any]] = results) -> str:
            values = [r[key] for r in results if key in r]
            return f"{statistics.median(values):.{digits}f}" if values else "-"

        print(
            f"{label:<34} {case[1]:>6} {med('wall'):>8} {med('cpu'):>7} {med('fit_wall'):>7} "
            f"{med('draw_wall', 3):>7} {med('peak_mb'):>8}"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
