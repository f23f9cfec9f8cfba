"""The agreement statistics: Cohen's and Fleiss' kappa, Krippendorff's alpha, F1, confusion matrices.

Fleiss' kappa comes from statsmodels and Krippendorff's alpha from the ``krippendorff`` package.
Cohen's kappa (unweighted, linear, quadratic), positive-class F1 and the confusion matrix are a few
lines of numpy here, written by scikit-learn's own formulas in its order of float operations (the
figures are the same to the last bit): importing ``sklearn.metrics``, which pulls in scipy.stats,
cost about 2 CPU-s in every process that computes agreement (``run``, ``report``, ``ci``, ``stats``,
the judge gate) for three small sums. ``tests/gates/test_agreement_parity.py`` holds them to
scikit-learn on seeded random rating pairs and on the edge cases. Beyond that, this module aligns
the ratings, maps labels to codes, and decides when a statistic is *undefined*. An undefined
statistic (kappa when both raters use one class, alpha with a single value in the data, F1 with no
positive case anywhere) is ``Stat.value is None`` with a reason, so a gate can refuse it instead of
passing on a NaN.

Ratings are a raters x units table of labels; ``None`` is a missing rating. Cohen's kappa and F1
use the units both raters rated; Fleiss' kappa uses the units every rater rated (statsmodels needs
a full table) and says how many it kept; Krippendorff's alpha uses every pairable unit, which is
what it was made for. The bootstrap resamples only the units its statistic can use, and says how
many resamples it dropped because the statistic was undefined on them.

numpy, statsmodels and ``krippendorff`` are imported inside the functions that use them, so that
importing this module costs nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from propeval.errors import DependencyError, UsageError

Label = Hashable
Ratings = Sequence[Sequence[Label | None]]  # raters x units

LEVELS = ("nominal", "ordinal", "interval")
KAPPA_WEIGHTS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}


@dataclass(frozen=True)
class Stat:
    """One agreement figure. ``value is None`` means undefined; ``reason`` says why."""

    name: str
    value: float | None
    n: int
    reason: str = ""
    ci: tuple[float, float] | None = None
    units: int | None = None  # the units it could have used, when it keeps fewer (Fleiss' kappa)
    resamples: int | None = None  # bootstrap resamples drawn
    undefined_resamples: int | None = None  # ... of which the statistic was undefined (dropped)
    caveat: str = ""  # why the figure is weak (too few units), said wherever it is printed

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "value": self.value,
            "n": self.n,
            "reason": self.reason or None,
            "ci": list(self.ci) if self.ci is not None else None,
        }
        if self.units is not None:
            out["units"] = self.units
        if self.resamples is not None:
            out["resamples"] = self.resamples
            out["undefined_resamples"] = self.undefined_resamples
        if self.caveat:
            out["caveat"] = self.caveat
        return out


def _np() -> Any:
    try:
        import numpy as np
    except ImportError as e:  # pragma: no cover - numpy comes with every stats extra
        raise DependencyError("numpy", "stats") from e
    return np


def _confusion_counts(np: Any, xi: Sequence[int], yi: Sequence[int], k: int) -> Any:
    """The k x k matrix of counts (rows: ``xi``, columns: ``yi``), as ``sklearn.metrics.confusion_matrix``
    gives it for ``labels=range(k)``: int64."""
    flat = np.asarray(xi, dtype=np.int64) * k + np.asarray(yi, dtype=np.int64)
    return np.bincount(flat, minlength=k * k).reshape(k, k)


def _kappa(np: Any, counts: Any, weights: str | None) -> float:
    """Cohen's kappa of a confusion matrix; NaN when undefined.

    ``sklearn.metrics.cohen_kappa_score`` step by step, in its float order, so the figures (and the
    JSON that prints them) are the same to the last bit.
    """
    confusion = counts.astype(np.float64)
    k = confusion.shape[0]
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    total = np.sum(sum0)
    if total == 0:
        return float("nan")
    expected = np.outer(sum0, sum1) / total
    if weights is None:
        w_mat = np.ones([k, k], dtype=np.float64)
        np.fill_diagonal(w_mat, 0)
    else:
        w_mat = np.zeros([k, k], dtype=np.float64)
        w_mat += np.arange(k)
        w_mat = np.abs(w_mat - w_mat.T) if weights == "linear" else (w_mat - w_mat.T) ** 2
    denominator = np.sum(w_mat * expected)
    if denominator == 0:
        return float("nan")
    return float(1 - np.sum(w_mat * confusion) / denominator)


def label_order(ratings: Ratings, labels: Sequence[Label] | None = None) -> list[Label]:
    """The labels in scale order: ``labels`` when given (every rating must be among them), else sorted."""
    seen = {x for row in ratings for x in row if x is not None}
    if labels is not None:
        unknown = seen - set(labels)
        if unknown:
            raise UsageError(
                f"ratings use labels that are not on the scale {list(labels)}: {sorted(map(str, unknown))}; "
                "add them to --labels or fix the label files"
            )
        return list(labels)
    try:
        return sorted(seen)  # type: ignore[type-var]
    except TypeError:
        return sorted(seen, key=str)


def _codes(values: Sequence[Label], order: Sequence[Label]) -> list[int]:
    """Each label's position on the scale: the statistics count by position, so a scale may mix numbers
    and strings (audit-v1's propaganda inclusion is 0-3 or "Refusal"), and positions keep the order
    weighted kappa needs."""
    index = {label: i for i, label in enumerate(order)}
    return [index[v] for v in values]


def _pairs(a: Sequence[Label | None], b: Sequence[Label | None]) -> tuple[list[Label], list[Label]]:
    if len(a) != len(b):
        raise UsageError(f"the two raters rate different numbers of units ({len(a)} and {len(b)})")
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    return [x for x, _ in both], [y for _, y in both]


def cohen_kappa(
    a: Sequence[Label | None],
    b: Sequence[Label | None],
    *,
    weights: str = "unweighted",
    labels: Sequence[Label] | None = None,
) -> Stat:
    """Cohen's kappa of two raters over the units both rated (as sklearn's ``cohen_kappa_score``).

    ``weights`` is ``unweighted``, ``linear`` or ``quadratic``; weighted kappa uses ``labels`` as
    the order of the scale.
    """
    if weights not in KAPPA_WEIGHTS:
        raise UsageError(f"weights must be one of {sorted(KAPPA_WEIGHTS)}, not {weights!r}")
    name = "cohen_kappa" if weights == "unweighted" else f"cohen_kappa_{weights}"
    x, y = _pairs(a, b)
    if not x:
        return Stat(name, None, 0, "no unit was rated by both raters")
    order = label_order([x, y], labels)
    if len({*x, *y}) < 2:
        return Stat(name, None, len(x), f"both raters used a single label ({x[0]!r}); kappa is undefined")
    np = _np()
    counts = _confusion_counts(np, _codes(x, order), _codes(y, order), len(order))
    value = _kappa(np, counts, KAPPA_WEIGHTS[weights])
    if not np.isfinite(value):
        return Stat(name, None, len(x), "chance agreement is 1 (each rater used one label); kappa is undefined")
    return Stat(name, float(value), len(x))


def fleiss_kappa(ratings: Ratings, *, labels: Sequence[Label] | None = None) -> Stat:
    """Fleiss' kappa (statsmodels) over the units that every rater rated; ``units`` counts the rated ones."""
    name = "fleiss_kappa"
    if len(ratings) < 2:
        return Stat(name, None, 0, "Fleiss' kappa needs at least two raters")
    rated = sum(any(x is not None for x in u) for u in zip(*ratings, strict=True))
    full = [u for u in zip(*ratings, strict=True) if all(x is not None for x in u)]
    if not full:
        return Stat(name, None, 0, "no unit was rated by every rater", units=rated)
    order = label_order(ratings, labels)
    if len({x for u in full for x in u}) < 2:
        return Stat(name, None, len(full), "every rating is the same label; kappa is undefined", units=rated)
    try:
        from statsmodels.stats.inter_rater import aggregate_raters
        from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
    except ImportError as e:
        raise DependencyError("statsmodels", "stats") from e
    np = _np()
    codes = {lab: i for i, lab in enumerate(order)}
    data = np.array([[codes[x] for x in u] for u in full], dtype=int)
    table, _ = aggregate_raters(data, n_cat=len(order))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(sm_fleiss(table, method="fleiss"))
    if not np.isfinite(value):
        return Stat(name, None, len(full), "chance agreement is 1; kappa is undefined", units=rated)
    return Stat(name, value, len(full), units=rated)


def krippendorff_alpha(ratings: Ratings, *, level: str = "nominal", labels: Sequence[Label] | None = None) -> Stat:
    """Krippendorff's alpha (the ``krippendorff`` package) at ``level``, with missing ratings allowed.

    Nominal and ordinal labels are coded by their place in ``labels`` (the scale order); interval
    labels must be numbers and are used as they are.
    """
    if level not in LEVELS:
        raise UsageError(f"level must be one of {list(LEVELS)}, not {level!r}")
    name = f"krippendorff_alpha_{level}"
    try:
        import krippendorff
    except ImportError as e:
        raise DependencyError("krippendorff", "stats") from e
    np = _np()
    order = label_order(ratings, labels)
    if level == "interval":
        bad = [x for x in order if isinstance(x, bool) or not isinstance(x, int | float)]
        if bad:
            raise UsageError(f"interval alpha needs numeric labels; found {bad[:3]}; use --level ordinal or nominal")
        data = np.array([[np.nan if x is None else float(x) for x in row] for row in ratings], dtype=float)  # type: ignore[arg-type]
    else:
        codes = {lab: float(i) for i, lab in enumerate(order)}
        data = np.array([[np.nan if x is None else codes[x] for x in row] for row in ratings], dtype=float)
    pairable = int((np.sum(~np.isnan(data), axis=0) >= 2).sum()) if data.size else 0
    if pairable == 0:
        return Stat(name, None, 0, "no unit has two or more ratings")
    values = {float(v) for v in data[~np.isnan(data)]}
    if len(values) < 2:
        return Stat(name, None, pairable, "every rating is the same value; alpha is undefined")
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))  # type: ignore[arg-type]
    if not np.isfinite(value):
        return Stat(name, None, pairable, "expected disagreement is 0; alpha is undefined")
    return Stat(name, value, pairable)


def f1_positive(truth: Sequence[Label | None], pred: Sequence[Label | None], *, positive: Label) -> Stat:
    """Positive-class F1 of ``pred`` against ``truth`` over units both rated.

    As sklearn's ``f1_score(pos_label=True, zero_division=0.0)``: 2 tp / (true + predicted positives).
    """
    name = "f1_positive"
    x, y = _pairs(truth, pred)
    if not x:
        return Stat(name, None, 0, "no unit was rated by both")
    if positive not in x and positive not in y:
        return Stat(name, None, len(x), f"no unit is labelled {positive!r} by either; F1 is undefined")
    np = _np()
    tx = np.array([v == positive for v in x], dtype=bool)
    ty = np.array([v == positive for v in y], dtype=bool)
    tp = int(np.count_nonzero(tx & ty))
    true, predicted = int(np.count_nonzero(tx)), int(np.count_nonzero(ty))
    value = 2 * tp / (true + predicted) if true + predicted else 0.0  # zero_division=0.0
    return Stat(name, float(value), len(x))


def accuracy_per_class(
    truth: Sequence[Label | None], pred: Sequence[Label | None], *, labels: Sequence[Label]
) -> dict[Label, Stat]:
    """For each class of ``truth``: the share of its units that ``pred`` labels the same (per-class recall)."""
    x, y = _pairs(truth, pred)
    out: dict[Label, Stat] = {}
    for lab in labels:
        hits = [b == lab for a, b in zip(x, y, strict=True) if a == lab]
        if not hits:
            out[lab] = Stat(f"accuracy[{lab}]", None, 0, f"no gold unit is labelled {lab!r}")
        else:
            out[lab] = Stat(f"accuracy[{lab}]", sum(hits) / len(hits), len(hits))
    return out


def confusion(
    a: Sequence[Label | None], b: Sequence[Label | None], *, labels: Sequence[Label] | None = None
) -> tuple[list[Label], list[list[int]]]:
    """Labels and the confusion matrix (rows: ``a``, columns: ``b``) over units both rated."""
    x, y = _pairs(a, b)
    order = label_order([x, y], labels)
    if not x:
        return order, [[0] * len(order) for _ in order]
    matrix = _confusion_counts(_np(), _codes(x, order), _codes(y, order), len(order))
    return order, [[int(v) for v in row] for row in matrix]


def bootstrap(
    fn: Callable[[Ratings], Stat],
    ratings: Ratings,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    min_raters: int = 2,
    on_draw: Callable[[], None] | None = None,
) -> Stat:
    """``fn(ratings)`` with a percentile bootstrap interval over units (resampled with replacement).

    Only the units that at least ``min_raters`` raters rated are resampled: the others do not
    enter the statistic, and resampling them would only shrink the effective sample of each draw.
    Resamples on which the statistic is undefined are dropped and counted
    (``undefined_resamples``); with none defined there is no interval. ``on_draw`` is called after
    each resample (progress).
    """
    point = fn(ratings)
    if not point.defined or resamples <= 0:
        return point
    np = _np()
    rng = np.random.default_rng(seed)
    usable = [i for i, u in enumerate(zip(*ratings, strict=True)) if sum(x is not None for x in u) >= min_raters]
    cols = [[row[i] for i in usable] for row in ratings]
    values = []
    for _ in range(resamples):
        idx = rng.integers(0, len(usable), size=len(usable))
        sample = [[row[i] for i in idx] for row in cols]
        s = fn(sample)
        if s.value is not None:
            values.append(s.value)
        if on_draw is not None:
            on_draw()
    point = replace(point, resamples=resamples, undefined_resamples=resamples - len(values))
    if not values:
        return point
    lo, hi = np.percentile(values, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return replace(point, ci=(float(lo), float(hi)))
