"""Classical and IRT numbers on small hand-computed matrices; missing versus zero; bands."""

from __future__ import annotations

import math

import numpy as np
import pytest
from difficulty_helpers import HAND, grade, write_run

from propeval.config import load_config
from propeval.difficulty import (
    BANDS,
    ScoreTable,
    band_of,
    build_matrices,
    classical,
    compute,
    cut_values,
    fit_2pl,
    fit_grm,
    load_runs,
)
from propeval.difficulty.bands import band_codes
from propeval.difficulty.graded import GradedModel
from propeval.difficulty.irt import _grm_neg_log_posterior, _neg_log_posterior
from propeval.settings import DifficultySettings


def hand_table() -> ScoreTable:
    t = ScoreTable(scale="0-5")
    for item, row in HAND.items():
        for model, score in row.items():
            if score is not None:
                t.add(item, model, score)
    return t


def test_classical_numbers_match_hand_computation() -> None:
    m = build_matrices(hand_table(), DifficultySettings())
    c = classical(m, 4 / 5)
    assert list(c["n"]) == [4, 4, 4, 3]
    assert c["mean"] == pytest.approx([0.9, 0.45, 0.0, 0.4])
    assert c["share_pass"] == pytest.approx([1.0, 0.25, 0.0, 1 / 3])
    # corrected item-total: the item against each model's mean normalised score on the other items
    assert c["discrimination"][0] == pytest.approx(0.180070601516405)
    assert c["discrimination"][1] == pytest.approx(0.9113223768657672)
    assert math.isnan(c["discrimination"][2])  # constant item: undefined, not a number
    assert c["discrimination"][3] == pytest.approx(0.9933992677987826)


def test_binary_discrimination_is_the_point_biserial() -> None:
    from scipy.stats import pointbiserialr

    rows = {"a": [1, 1, 0, 0, 1], "b": [1, 0, 0, 0, 1], "c": [1, 1, 1, 0, 0], "d": [1, 1, 1, 1, 0]}
    t = ScoreTable(scale="binary")
    for item, row in rows.items():
        for n, y in enumerate(row):
            t.add(item, f"m{n}", y)
    c = classical(build_matrices(t, DifficultySettings()), 1.0)
    rest = (np.array([rows[k] for k in "bcd"]).sum(axis=0)) / 3
    assert c["discrimination"][0] == pytest.approx(pointbiserialr(rows["a"], rest).statistic)
    assert c["mean"][0] == pytest.approx(0.6)
    assert c["share_pass"][0] == pytest.approx(0.6)


def test_unscored_is_missing_unanswered_is_zero_and_runs_average(corpus) -> None:
    write_run(corpus.root, "r1", [grade("i1", "m1", 5), grade("i2", "m1", None, "unscored")])
    write_run(corpus.root, "r2", [grade("i1", "m1", 3), grade("i2", "m1", None, "unanswered")])
    write_run(corpus.root, "r3", [grade("i1", "m2", None, "unscored"), grade("i2", "m2", 4)])
    write_run(corpus.root, "r4", [grade("i2", "m2", None, "error")])  # the endpoint failed for good
    config = load_config(corpus.root)
    files = sorted(corpus.root.glob("runs/*/grades-facts-v1.jsonl"))
    table = load_runs(config, DifficultySettings(), files)
    assert table.problems == []
    assert table.obs[("i1", "m1")] == [5.0, 3.0]  # two runs, averaged below
    assert table.obs[("i1", "m2")] == []  # unscored: seen, but no score
    assert table.obs[("i2", "m1")] == [0.0]  # unanswered counts 0; the unscored run adds nothing
    assert table.obs[("i2", "m2")] == [4.0]  # an error grade adds nothing either
    m = build_matrices(table, DifficultySettings())
    c = classical(m, 0.8)
    assert list(c["n"]) == [1, 2]
    assert c["mean"] == pytest.approx([0.8, 0.4])  # (5+3)/2/5; (0 + 4/5)/2, not (0+0+4/5)/3


def test_last_grade_line_of_an_item_wins_within_a_run(corpus) -> None:
    write_run(corpus.root, "r1", [grade("i1", "m1", None, "unscored"), grade("i1", "m1", 4)])
    table = load_runs(load_config(corpus.root), DifficultySettings(), [corpus.root / "runs/r1/grades-facts-v1.jsonl"])
    assert table.obs == {("i1", "m1"): [4.0]}


def test_bad_grade_lines_are_problems(corpus) -> None:
    path = write_run(corpus.root, "r1", [grade("i1", "m1", 7), {"item_id": "i2", "model": "m1", "status": "odd"}])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("{not json}\n")
    table = load_runs(load_config(corpus.root), DifficultySettings(), [path])
    assert [(p.line, p.rule) for p in table.problems] == [(3, "json-syntax")]
    path.write_text(path.read_text(encoding="utf-8").rsplit("{not", 1)[0], encoding="utf-8")
    table = load_runs(load_config(corpus.root), DifficultySettings(), [path])
    assert [(p.line, p.message) for p in table.problems] == [
        (1, "status is scored but fact_score is 7, not an integer 0-5; re-grade the item"),
        (2, "status 'odd' is not one of scored, unscored, unanswered, error"),
    ]


def test_2pl_objective_matches_hand_value() -> None:
    # theta 0.5, b -0.5, log a 0: z = 1; -log sigmoid(1) + 0.5^2/2 + 0.5^2/(2*2^2)
    nll, _ = _neg_log_posterior(np.array([0.5, -0.5, 0.0]), np.ones((1, 1)), np.ones((1, 1)), 1, 1, (1.0, 2.0, 0.5))
    assert nll == pytest.approx(0.46951168751822286)


def test_graded_objective_matches_hand_value() -> None:
    # all zero: tau = (-2, -1, 0, 1, 2); P(score = 3) = sigmoid(0) - sigmoid(-1)
    cats = np.zeros((1, 1, 6))
    cats[0, 0, 3] = 1
    nll, _ = _grm_neg_log_posterior(np.zeros(7), cats, np.ones((1, 1)), 1, 1, (1.0, 2.0, 0.5))
    assert nll == pytest.approx(1.4650840134652499)


def test_gradients_match_finite_differences() -> None:
    from scipy.optimize import check_grad  # here, not at the top: collection would pay for it

    rng = np.random.default_rng(3)
    n, m = 4, 3
    w = rng.random((n, m))
    cats = rng.dirichlet(np.ones(6), (n, m))
    y = rng.random((n, m))
    sd = (1.0, 2.0, 0.5)
    x = rng.normal(0, 0.5, m + 2 * n + 4)
    assert (
        check_grad(
            lambda p: _grm_neg_log_posterior(p, cats, w, n, m, sd)[0],
            lambda p: _grm_neg_log_posterior(p, cats, w, n, m, sd)[1],
            x,
        )
        < 1e-4
    )
    x2 = x[: m + 2 * n]
    assert (
        check_grad(
            lambda p: _neg_log_posterior(p, y, w, n, m, sd)[0], lambda p: _neg_log_posterior(p, y, w, n, m, sd)[1], x2
        )
        < 1e-4
    )


def test_irt_orders_items_and_models_on_the_hand_matrix() -> None:
    m = build_matrices(hand_table(), DifficultySettings())
    fit = fit_grm(m.cats, m.mask.astype(float))
    assert fit.converged
    b = dict(zip(m.items, fit.b, strict=True))
    assert b["i0001"] < b["i0002"] < b["i0003"]
    assert b["i0004"] < b["i0003"]
    theta = dict(zip(m.models, fit.theta, strict=True))
    assert theta["m1"] > theta["m2"] > theta["m4"]
    assert list(fit.thresholds) == sorted(fit.thresholds)
    # a symmetric binary matrix gives symmetric difficulties
    y = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    two = fit_2pl(y, np.ones_like(y))
    assert two.b[0] < two.b[1]
    sym = fit_2pl(np.array([[1.0, 0.0], [0.0, 1.0]]), np.ones((2, 2)))
    assert sym.b[0] == pytest.approx(sym.b[1], abs=1e-4)


def test_bands_by_score_and_by_quantile() -> None:
    values = np.array([0.1, 0.3, 0.5, 0.7, 0.9, np.nan])
    s = DifficultySettings()
    assert band_of(values, s, cut_values(values, s)) == ["hard", "medium", "medium", "easy", "easy", None]
    q = DifficultySettings(cuts="quantile", quantile_cuts=(0.2, 0.8))
    lo, hi = cut_values(values, q)
    assert (lo, hi) == pytest.approx((0.26, 0.74))
    assert band_of(values, q, (lo, hi)) == ["hard", "medium", "medium", "medium", "easy", None]
    irt = DifficultySettings(basis="irt")
    assert band_of(np.array([-1.0, 0.0, 0.5]), irt, irt.cut_points) == ["easy", "medium", "hard"]
    for settings, cuts in ((s, cut_values(values, s)), (q, (lo, hi)), (irt, irt.cut_points)):
        codes = [BANDS[c] if c >= 0 else None for c in band_codes(values, settings, cuts)]
        assert codes == band_of(values, settings, cuts)  # the bootstrap's vectorised bands agree


def test_flags_on_the_hand_matrix() -> None:
    ledger = compute(hand_table(), DifficultySettings(bootstrap=50, min_models=4))
    flags = {k: v["flags"] for k, v in ledger["items"].items()}
    assert flags["i0001"] == ["saturated"]
    assert flags["i0003"] == ["unanswered-by-all"]
    assert flags["i0004"] == ["too-few-models"]
    assert ledger["items"]["i0004"]["band"] is None
    assert [ledger["items"][i]["band"] for i in ("i0001", "i0002", "i0003")] == ["easy", "medium", "hard"]
    assert ledger["items"]["i0001"]["stability"] == 1.0


def test_non_discriminating_and_unstable_flags() -> None:
    t = ScoreTable(scale="0-5")
    strength = {"m1": 5, "m2": 4, "m3": 2, "m4": 1, "m5": 0}
    for model, s in strength.items():
        for k in range(4):
            t.add(f"i{k}", model, s)
        t.add("odd", model, 5 - s)  # the weakest models do best
        t.add("edge", model, 2 if s > 2 else 1)  # mean 0.32: right at the hard/medium cut
        t.add("solid", model, 3 if s > 1 else 2)  # mean 0.52, 0.4-0.6 in any draw: always medium
    ledger = compute(t, DifficultySettings(bootstrap=100, unstable_share=0.2))
    assert "non-discriminating" in ledger["items"]["odd"]["flags"]
    assert ledger["items"]["odd"]["discrimination"] < -0.9
    assert ledger["items"]["edge"]["flags"] == ["unstable"]
    assert ledger["items"]["edge"]["stability"] < 0.8
    assert ledger["items"]["solid"]["flags"] == []
    assert ledger["items"]["solid"]["stability"] == 1.0


def test_bootstrap_is_seeded() -> None:
    a = compute(hand_table(), DifficultySettings(bootstrap=30, seed=7))
    b = compute(hand_table(), DifficultySettings(bootstrap=30, seed=7))
    assert a == b


def _simulated(seed: int, n: int = 300, m: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b, a, theta = rng.normal(0, 1.5, n), np.exp(rng.normal(0, 0.3, n)), rng.normal(0, 1, m)
    tau = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    star = 1 / (1 + np.exp(-a[:, None, None] * (theta[None, :, None] - b[:, None, None] - tau)))
    score = (rng.random((n, m))[:, :, None] < star).sum(axis=2)
    cats = np.eye(6)[score]
    cats[::7, 0] = [0.5, 0, 0, 0.5, 0, 0]  # two runs of one model that disagree: two categories in a cell
    weights = rng.integers(0, 4, (n, m)).astype(float)  # a bootstrap's multiplicities, 0 for missing
    return cats, weights


def test_newton_fits_are_stationary_points_of_the_objective() -> None:
    """The fits reach the optimum of the objectives the tests above check by hand (gradient ~ 0)."""
    sd = (1.0, 2.0, 0.5)
    cats, w = _simulated(4)
    n, m, _ = cats.shape
    fit = fit_grm(cats, w)
    assert fit.converged
    _, grad = _grm_neg_log_posterior(fit.params, np.where(w[:, :, None] > 0, cats, 0.0), w, n, m, sd)
    assert np.abs(grad).max() < 1e-5
    y = (cats * np.arange(6)).sum(axis=2) / 5
    two = fit_2pl(y, w)
    _, grad = _neg_log_posterior(two.params, np.where(w > 0, y, 0.0), w, n, m, sd)
    assert two.converged and np.abs(grad).max() < 1e-5


@pytest.mark.slow
def test_item_refits_with_fixed_abilities_are_stationary_in_b_and_a() -> None:
    sd = (1.0, 2.0, 0.5)
    cats, _ = _simulated(9)
    n, m, _ = cats.shape
    full = fit_grm(cats, np.ones((n, m)))
    counts = np.array([2.0, 0.0, 1.0, 3.0, 0.0, 1.0, 1.0, 4.0])
    graded = GradedModel(cats, np.ones((n, m)), 5, True, sd).reweighted(counts)
    b, la = graded.fit_items(full.theta[counts > 0], full.thresholds, full.b, np.log(full.a), 1e-8)
    x = np.concatenate([full.theta, b, la, full.params[m + 2 * n :]])
    _, grad = _grm_neg_log_posterior(x, cats, np.ones((n, m)) * counts, n, m, sd)
    assert np.abs(grad[m : m + 2 * n]).max() < 1e-6  # every item's b and log a
    assert np.abs(b - full.b).max() > 0.1  # the draw moved them
