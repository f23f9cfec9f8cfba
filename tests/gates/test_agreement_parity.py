"""Cohen's kappa, F1 and the confusion matrix are numpy in propeval.agreement: held to scikit-learn here.

propeval.agreement.stats computes them by scikit-learn's own formulas so that the processes
computing agreement need not import sklearn (and scipy.stats with it). These tests compare the two
on seeded random rating pairs (scales with labels that a rater, or nobody, uses; every weighting)
and on the edge cases, where an undefined figure must be ``None`` exactly where sklearn gives NaN.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from propeval import agreement as ag
from propeval.agreement.stats import _kappa

# scikit-learn is imported where it is compared against: at the top, every xdist worker paid about
# 1.5 CPU-s for it (and scipy, pandas) at collection, whether or not it ran these tests.
WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}
TOL = {"rtol": 1e-12, "atol": 1e-12}


def sklearn_kappa(a: list[int], b: list[int], k: int, weights: str) -> float:
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(a, b, labels=list(range(k)), weights=WEIGHTS[weights], replace_undefined_by=np.nan))


def assert_kappa_parity(a: list[int], b: list[int], k: int) -> None:
    """Every weighting of ``ag.cohen_kappa`` on the scale 0..k-1 against sklearn's."""
    scale = list(range(k))
    for w in WEIGHTS:
        mine = ag.cohen_kappa(a, b, weights=w, labels=scale)
        with warnings.catch_warnings():  # sklearn warns where the figure is undefined; the value says it
            warnings.simplefilter("ignore")
            theirs = sklearn_kappa(a, b, k, w)
        assert mine.n == len(a)
        if np.isnan(theirs):
            assert mine.value is None, (w, a, b)
            assert mine.reason
        else:
            assert mine.value is not None, (w, a, b, mine.reason)
            assert np.isclose(mine.value, theirs, **TOL), (w, a, b, mine.value, theirs)


def skewed(rng: random.Random, used: list[int], n: int) -> list[int]:
    """``n`` ratings drawn from ``used`` with uneven weights, so marginals differ between raters."""
    weights = [rng.random() + 0.05 for _ in used]
    return rng.choices(used, weights=weights, k=n)


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_cohen_kappa_equals_sklearn_on_random_pairs(k: int) -> None:
    rng = random.Random(1000 + k)
    for _ in range(20):
        scale_size = k + rng.choice([0, 1, 2])  # labels on the scale that nobody uses
        n = rng.randint(1, 40)
        a = skewed(rng, rng.sample(range(scale_size), rng.randint(1, k)), n)
        # b: some agreement with a, and its own labels (some of which a never uses)
        own = rng.sample(range(scale_size), rng.randint(1, k))
        p = rng.random()
        b = [x if rng.random() < p else rng.choice(own) for x in a]
        assert_kappa_parity(a, b, scale_size)


@pytest.mark.parametrize(
    ("a", "b", "k"),
    [
        ([0, 1, 2, 0, 1], [0, 1, 2, 0, 1], 3),  # all agree
        ([0, 1, 2, 0, 1], [0, 1, 2, 0, 1], 5),  # all agree, two labels unused
        ([1, 1, 1, 1], [0, 1, 2, 1], 3),  # one rater uses a single label
        ([0, 1, 2, 1], [2, 2, 2, 2], 4),  # the other one does
        ([0, 0, 0], [1, 1, 1], 2),  # each rater one label, not the same one
        ([0, 0, 0], [2, 2, 2], 4),
        ([2, 2, 2], [2, 2, 2], 4),  # both one and the same label: undefined
        ([0], [0], 2),
        ([0], [1], 2),
        ([0, 1], [1, 0], 2),  # complete disagreement
        ([0, 3], [3, 0], 4),
    ],
)
def test_cohen_kappa_equals_sklearn_on_the_edge_cases(a: list[int], b: list[int], k: int) -> None:
    assert_kappa_parity(a, b, k)


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("weights", list(WEIGHTS))
def test_chance_agreement_one_is_nan_like_sklearn(k: int, weights: str) -> None:
    # Both raters put every unit on one label: sum(w * expected) is 0, sklearn gives NaN, and so does
    # the numpy formula (cohen_kappa turns it into None before it gets there).
    counts = np.zeros((k, k), dtype=np.int64)
    counts[k - 1, k - 1] = 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklearn_kappa([k - 1] * 7, [k - 1] * 7, k, weights)
    assert np.isnan(theirs)
    assert np.isnan(_kappa(np, counts, WEIGHTS[weights]))
    assert np.isnan(_kappa(np, np.zeros((k, k), dtype=np.int64), WEIGHTS[weights]))  # no unit at all


def test_cohen_kappa_on_labels_equals_sklearn_on_their_codes() -> None:
    # The public path: labels of any JSON type, mapped to their place on the scale.
    rng = random.Random(5)
    scale: list[int | str] = [0, 1, 2, 3, "Refusal"]
    for _ in range(10):
        a = [rng.choice(scale) for _ in range(30)]
        b = [x if rng.random() < 0.5 else rng.choice(scale[1:]) for x in a]
        code = {lab: i for i, lab in enumerate(scale)}
        for w in WEIGHTS:
            mine = ag.cohen_kappa(a, b, weights=w, labels=scale).value
            theirs = sklearn_kappa([code[x] for x in a], [code[x] for x in b], len(scale), w)
            assert mine is not None and np.isclose(mine, theirs, **TOL)


def test_f1_positive_equals_sklearn() -> None:
    from sklearn.metrics import f1_score

    rng = random.Random(11)
    cases: list[tuple[list[str], list[str]]] = [
        (["y", "y", "y"], ["y", "y", "y"]),  # all positive, all agree
        (["y", "n", "n"], ["n", "n", "n"]),  # positive only in truth: F1 0
        (["n", "n", "n"], ["y", "n", "y"]),  # positive only in the prediction: F1 0
        (["y", "n"], ["n", "y"]),  # no true positive
    ]
    for _ in range(60):
        n = rng.randint(1, 40)
        p, q = rng.random(), rng.random()
        truth = [rng.choice("yn?") if rng.random() < p else "n" for _ in range(n)]
        pred = [t if rng.random() < q else rng.choice("yn?") for t in truth]
        cases.append((truth, pred))
    compared = 0
    for truth, pred in cases:
        mine = ag.f1_positive(truth, pred, positive="y")
        if "y" not in truth and "y" not in pred:
            assert mine.value is None and "F1 is undefined" in mine.reason
            continue
        tx, ty = [v == "y" for v in truth], [v == "y" for v in pred]
        theirs = float(f1_score(tx, ty, pos_label=True, zero_division=0.0))
        assert mine.value is not None and np.isclose(mine.value, theirs, **TOL), (truth, pred)
        compared += 1
    assert compared > 40


def test_confusion_equals_sklearn() -> None:
    from sklearn.metrics import confusion_matrix

    rng = random.Random(13)
    for _ in range(40):
        k = rng.randint(1, 6)
        scale = [f"L{i}" for i in range(k)]
        n = rng.randint(1, 30)
        a = [rng.choice(scale[: rng.randint(1, k)]) for _ in range(n)]
        b = [rng.choice(scale) for _ in range(n)]
        order, mine = ag.confusion(a, b, labels=scale)
        assert order == scale
        code = {lab: i for i, lab in enumerate(scale)}
        with warnings.catch_warnings():  # sklearn warns on a 1 x 1 matrix
            warnings.simplefilter("ignore")
            theirs = confusion_matrix([code[x] for x in a], [code[x] for x in b], labels=list(range(k)))
        assert mine == theirs.tolist()
        assert all(type(v) is int for row in mine for v in row)
