"""Agreement between raters: Cohen's and Fleiss' kappa, Krippendorff's alpha, F1, confusion matrices.

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

Labels keep their JSON type: ``1`` and ``"1"`` are different labels to the statistics, so label
files that write one label both ways are refused (:func:`label_clashes`) rather than coerced: a
coercion rule ("1.0"? " 1"? "01"?) would be a guess, and the figure would describe data that are
not in the files. ``true`` and ``1`` are refused together too, since Python treats them as equal.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import DependencyError, UsageError
from propeval.fsutil import atomic_write
from propeval.loader import LoadError, dumps_json, load_jsonl, load_written
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.config import Config

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
) -> Stat:
    """``fn(ratings)`` with a percentile bootstrap interval over units (resampled with replacement).

    Only the units that at least ``min_raters`` raters rated are resampled: the others do not
    enter the statistic, and resampling them would only shrink the effective sample of each draw.
    Resamples on which the statistic is undefined are dropped and counted
    (``undefined_resamples``); with none defined there is no interval.
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
    point = replace(point, resamples=resamples, undefined_resamples=resamples - len(values))
    if not values:
        return point
    lo, hi = np.percentile(values, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return replace(point, ci=(float(lo), float(hi)))


# --------------------------------------------------------------------------- label files


@dataclass
class RaterFile:
    """One rater's labels for one field, keyed by unit id, and what the file held."""

    name: str
    labels: dict[tuple[str, ...], Label | None]
    path: str = ""
    lines: int = 0  # non-blank lines (units)
    fields: set[str] = field(default_factory=set)  # every key on any line
    with_field: int = 0  # lines that have the labelled field at all (null included)
    first_line: dict[tuple[str, Label], int] = field(default_factory=dict)  # (kind, label) -> first line
    problems: list[Problem] = field(default_factory=list)  # a grades file's records left out, and warnings


def align(raters: Sequence[RaterFile]) -> tuple[list[tuple[str, ...]], list[list[Label | None]]]:
    """The union of unit ids (sorted) and the raters x units table, ``None`` where a rater is silent."""
    keys = sorted({k for r in raters for k in r.labels})
    return keys, [[r.labels.get(k) for k in keys] for r in raters]


@dataclass
class FieldReport:
    """Every agreement figure for one labelled field."""

    field: str
    level: str
    labels: list[Label]
    raters: list[str]
    units: int
    pairwise: list[dict[str, Any]]
    overall: list[Stat]

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "level": self.level,
            "labels": self.labels,
            "raters": self.raters,
            "units": self.units,
            "pairwise": [{**p, "stats": [s.to_dict() for s in p["stats"]]} for p in self.pairwise],
            "overall": [s.to_dict() for s in self.overall],
        }


def _pair_kappa(r: Ratings, *, weights: str, labels: Sequence[Label]) -> Stat:
    return cohen_kappa(r[0], r[1], weights=weights, labels=labels)


def _pair_f1(r: Ratings, *, positive: Label) -> Stat:
    return f1_positive(r[0], r[1], positive=positive)


def field_report(
    raters: Sequence[RaterFile],
    *,
    field: str,
    level: str = "nominal",
    labels: Sequence[Label] | None = None,
    positive: Label | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> FieldReport:
    """Pairwise Cohen's kappa (+ F1 and a confusion matrix), Fleiss' kappa and Krippendorff's alpha."""
    if level not in LEVELS:
        raise UsageError(f"--level must be one of {list(LEVELS)}, not {level!r}")
    if len(raters) < 2:
        raise UsageError("agreement needs at least two label files")
    keys, table = align(raters)
    order = label_order(table, labels)
    weights = ["unweighted"] if level == "nominal" else ["unweighted", "linear", "quadratic"]
    pairwise: list[dict[str, Any]] = []
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            pair = [table[i], table[j]]
            stats = [
                bootstrap(
                    partial(_pair_kappa, weights=w, labels=order),
                    pair,
                    resamples=resamples,
                    seed=seed,
                )
                for w in weights
            ]
            if positive is not None:
                stats.append(bootstrap(partial(_pair_f1, positive=positive), pair, resamples=resamples, seed=seed))
            _, matrix = confusion(table[i], table[j], labels=order)
            pairwise.append({"a": raters[i].name, "b": raters[j].name, "stats": stats, "confusion": matrix})
    levels = LEVELS[: LEVELS.index(level) + 1]
    overall = [
        bootstrap(partial(fleiss_kappa, labels=order), table, resamples=resamples, seed=seed, min_raters=len(raters))
    ]
    for lv in levels:
        overall.append(
            bootstrap(
                partial(krippendorff_alpha, level=lv, labels=order),
                table,
                resamples=resamples,
                seed=seed,
            )
        )
    return FieldReport(field, level, order, [r.name for r in raters], len(keys), pairwise, overall)


def sample_rows(rows: Sequence[dict[str, Any]], *, fraction: float, seed: int) -> list[int]:
    """Indices of a seeded random ``fraction`` of ``rows`` (at least one), in shuffled order."""
    if not 0 < fraction <= 1:
        raise UsageError(f"--fraction must be in (0, 1], not {fraction}")
    rng = random.Random(seed)
    k = max(1, round(fraction * len(rows))) if rows else 0
    picked = rng.sample(range(len(rows)), k)
    rng.shuffle(picked)
    return picked


def is_grades_file(path: Path) -> bool:
    """A file `propeval grade` wrote: its name is ``grades-<rubric>.jsonl``, as in ``runs/<id>/``."""
    from propeval.judge.runs import rubric_of

    return rubric_of(path) is not None


def read_graded_units(path: Path, config: Config) -> tuple[list[tuple[int, dict[str, Any]]], list[Problem]]:
    """The units of a grades file, ``(line, record)``, and the problems of reading it.

    The file is read as `score` reads it (:func:`propeval.judge.runs.read_graded`, under the rubric
    its name gives): one unit per item with a grade record, its latest one (a retry supersedes an
    error), validated. Its labels are what `score` counts: an unanswered item's are the kind's
    unanswered values (fact 0, propaganda 0), and an unscored or errored item's are missing. A
    record that fails validation is an error Problem; a line that is not JSON raises LoadError.
    """
    from propeval.judge import runs
    from propeval.judge.rubric import load_rubric
    from propeval.judge.settings import load_settings
    from propeval.loader import relative_path

    rel = relative_path(path, config.root)
    try:
        rubric = load_rubric(
            config.root / load_settings(config).rubrics_dir, runs.rubric_of(path) or "", root=config.root
        )
    except (LoadError, UsageError) as e:
        p = e.problem if isinstance(e, LoadError) else Problem(rel, 1, 1, "labels", str(e))
        why = f"needed to read {rel} as a grades-<rubric>.jsonl file; name a hand-written label file otherwise"
        raise LoadError(Problem(p.path, p.line, p.col, p.rule, f"{p.message} ({why})")) from None
    kind = rubric.spec
    graded = runs.read_graded(path, kind, root=config.root, rubric=rubric)
    units = []
    for row in graded.rows:
        if row.grade is None:  # no grade record, or one that failed validation (a problem)
            continue
        record = dict(row.grade)
        if row.status != "scored":  # not a verdict: labels are what score counts, nothing or the rule's
            record.update(kind.empty_fields())
            if row.status == "unanswered":
                record.update(kind.unanswered_fields())
        units.append((graded.lines[row.item_id], record))
    return units, graded.problems


def read_rater_file(
    path: Path,
    *,
    field: str,
    id_fields: Sequence[str] = ("item_id",),
    root: Path | None = None,
    config: Config | None = None,
) -> RaterFile:
    """One rater's labels for ``field`` from a JSON Lines file (one unit per line).

    A unit is named by ``id_fields`` (e.g. ``item_id`` and ``model``). A missing or null label is
    a missing rating. A line without an id, or an id given twice, is a :class:`LoadError`: a
    label file is written by people and read by the strict loader. A grades file
    (:func:`is_grades_file`) was written by `propeval grade`, which appends a retry after an
    error: it is read by :func:`read_graded_units` (which needs ``config``), and the records that
    fail validation are left out and listed in ``problems``.
    """
    if not is_grades_file(path):
        return rater_labels(path, load_jsonl(path, root=root), field=field, id_fields=id_fields)
    if config is None:
        raise UsageError(f"{path}: a grades file is read under its rubric, which needs the corpus")
    units, problems = read_graded_units(path, config)
    out = rater_labels(path, units, field=field, id_fields=id_fields)
    out.problems = problems
    return out


def sample_source(path: Path, config: Config | None = None) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The rows `agree sample` draws from, and the problems of reading them: a label file's lines
    (strict loader), or a grades file's units (:func:`read_graded_units`, one per graded item)."""
    if not is_grades_file(path):
        return [row for _, row in load_jsonl(path)], []
    if config is None:
        raise UsageError(f"{path}: a grades file is read under its rubric, which needs the corpus")
    units, problems = read_graded_units(path, config)
    return [row for _, row in units], problems


def rater_labels(
    path: Path, rows: Iterable[tuple[int, dict[str, Any]]], *, field: str, id_fields: Sequence[str] = ("item_id",)
) -> RaterFile:
    """A :class:`RaterFile` from ``(line, row)`` pairs (see :func:`read_rater_file`)."""
    field_name = field
    labels: dict[tuple[str, ...], Label | None] = {}
    rel = path.as_posix()
    out = RaterFile(path.stem, labels, rel)
    for line, row in rows:
        if not isinstance(row, dict):
            raise LoadError(Problem(rel, line, 1, "labels", "each line must be a JSON object (one rated unit)"))
        out.lines += 1
        out.fields.update(row)
        missing = [f for f in id_fields if not isinstance(row.get(f), str | int) or isinstance(row.get(f), bool)]
        if missing:
            raise LoadError(
                Problem(rel, line, 1, "labels", f"line has no {missing[0]!r}; every line needs {list(id_fields)}")
            )
        key = tuple(str(row[f]) for f in id_fields)
        if key in labels:
            raise LoadError(Problem(rel, line, 1, "labels", f"unit {'/'.join(key)} is labelled twice; keep one line"))
        value = row.get(field_name)
        if isinstance(value, list | dict):
            raise LoadError(
                Problem(rel, line, 1, "labels", f"{field_name!r} must be a single label (string, number or null)")
            )
        out.with_field += field_name in row
        labels[key] = value
        if value is not None:
            out.first_line.setdefault((_kind(value), value), line)
    return out


def _kind(label: Label) -> str:
    if isinstance(label, bool):
        return "boolean"
    return "number" if isinstance(label, int | float) else "string"


def _as_number(text: str) -> float | None:
    """The number a string label spells, if it spells one (as JSON would write it)."""
    import json

    try:
        value = json.loads(text.strip())
    except ValueError:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def label_clashes(raters: Sequence[RaterFile], field_name: str) -> list[Problem]:
    """One label written two ways across the files: ``1`` and ``"1"``, ``true`` and ``"true"``, ``true`` and ``1``.

    Each is a Problem at the second spelling, naming where the first one is.
    """
    seen: dict[tuple[str, Label], tuple[str, int]] = {}
    for r in raters:
        for (kind, label), line in sorted(r.first_line.items(), key=lambda kv: kv[1]):
            seen.setdefault((kind, label), (r.path, line))
    by_number = {float(label): where for (kind, label), where in seen.items() if kind == "number"}  # type: ignore[arg-type]
    by_bool = {bool(label): where for (kind, label), where in seen.items() if kind == "boolean"}
    problems = []
    for (kind, label), (path, line) in sorted(seen.items(), key=lambda kv: kv[1]):
        other: tuple[str, int] | None = None
        spelled = ""
        if kind == "string":
            number = _as_number(str(label))
            if number is not None and number in by_number:
                other, spelled = by_number[number], f"{number:g} (a number)"
            elif str(label).strip() in ("true", "false") and (str(label).strip() == "true") in by_bool:
                other, spelled = by_bool[str(label).strip() == "true"], f"{str(label).strip()} (a boolean)"
        elif kind == "boolean" and (1.0 if label else 0.0) in by_number:
            other, spelled = by_number[1.0 if label else 0.0], f"{1 if label else 0} (a number)"
        if other is None:
            continue
        shown = f'"{label}" (a string)' if kind == "string" else f"{str(label).lower()} (a {kind})"
        problems.append(
            Problem(
                path,
                line,
                1,
                "labels",
                f"{field_name}: {shown} and {spelled} at {other[0]}:{other[1]} are one label written two ways, "
                "and would count as two; write it one way in every file",
            )
        )
    return problems


def resolve_label(token: str, seen: Sequence[Label]) -> Label:
    """The label a command-line token means: one of ``seen`` that it spells, else its JSON reading.

    ``true`` is the JSON boolean unless the files use the string "true"; ``1`` is the number unless
    they use the string "1"; anything else is a string.
    """
    import json

    for label in seen:
        if isinstance(label, str) and label == token:
            return label
    for label in seen:
        if not isinstance(label, str) and json.dumps(label) == token:
            return label
        number = _as_number(token)
        if isinstance(label, int | float) and not isinstance(label, bool) and number == float(label):
            return label
    try:
        value = json.loads(token)
    except ValueError:
        return token
    return value if isinstance(value, bool | int | float) else token


@dataclass
class AgreeOptions:
    """What ``propeval agree`` was asked: files, field, scale tokens as typed, bootstrap."""

    files: Sequence[Path]
    field: str
    id_fields: Sequence[str] = ("item_id",)
    level: str = "nominal"
    labels: Sequence[str] | None = None
    positive: str | None = None
    resamples: int = 1000
    seed: int = 0


@dataclass
class AgreeResult:
    """The report, or the problems in the label files that stopped it; ``warnings`` (records a
    grades file skipped unread) do not stop it."""

    report: FieldReport | None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def run_agree(options: AgreeOptions, root: Path | None = None, config: Config | None = None) -> AgreeResult:
    """Read the label files, refuse what cannot be compared, and compute every figure.

    A file that does not load, holds no unit, or has no line with the field is a Problem; so is a
    label written two ways, and a grades file's record that fails validation. All of them are
    collected before anything is computed. ``config`` is needed to read a grades file.
    """
    raters: list[RaterFile] = []
    problems: list[Problem] = []
    warnings: list[Problem] = []
    for path in options.files:
        try:
            r = read_rater_file(path, field=options.field, id_fields=options.id_fields, root=root, config=config)
        except LoadError as e:
            problems.append(e.problem)
            continue
        problems += [p for p in r.problems if p.severity == Severity.ERROR]
        warnings += [p for p in r.problems if p.severity != Severity.ERROR]
        example = "{" + ", ".join(f'"{f}": ...' for f in (*options.id_fields, options.field)) + "}"
        if r.lines == 0:
            problems.append(
                Problem(
                    r.path,
                    1,
                    1,
                    "labels",
                    f"the file holds no labelled unit; a label file is JSON Lines, one unit per line: {example}",
                )
            )
        elif r.with_field == 0:
            fields = ", ".join(sorted(r.fields)) or "(none)"
            problems.append(
                Problem(
                    r.path,
                    1,
                    1,
                    "labels",
                    f"no line has the field {options.field!r}; the fields in this file are: {fields}; "
                    "pass one of them with --field",
                )
            )
        raters.append(r)
    problems.extend(label_clashes(raters, options.field))
    if problems:
        return AgreeResult(None, problems, warnings)
    names = [r.name for r in raters]
    for i, r in enumerate(raters):  # two files with the same stem stay apart
        if names.count(r.name) > 1:
            r.name = f"{r.name}#{i + 1}"
    seen = label_order([list(r.labels.values()) for r in raters])
    scale = [resolve_label(t.strip(), seen) for t in options.labels] if options.labels else None
    positive = resolve_label(options.positive, seen) if options.positive is not None else None
    rep = field_report(
        raters,
        field=options.field,
        level=options.level,
        labels=scale,
        positive=positive,
        resamples=options.resamples,
        seed=options.seed,
    )
    return AgreeResult(rep, warnings=warnings)


MAX_KEY_BYTES = 1 << 30  # a key holds a few ids per sampled row; a source file is capped at this size too
HIDDEN_FIELDS = ("model", "judge_model", "base_url", "run_id", "raw", "verdict", "reason")


@dataclass
class Sheet:
    """A blinded sheet for a second rater and the key that maps it back."""

    rows: list[dict[str, Any]]
    key: dict[str, Any]


def blind_sample(
    rows: Sequence[dict[str, Any]],
    *,
    fields: Sequence[str],
    fraction: float,
    seed: int,
    show: Sequence[str] = ("prompt", "answer", "language"),
    id_fields: Sequence[str] = ("item_id", "model"),
    source: str = "",
) -> Sheet:
    """Pick a seeded ``fraction`` of ``rows``, shuffle them, hide who answered, blank the labels.

    Sheet rows carry only ``row`` (a fresh id), the ``show`` fields and the blank ``fields``. The
    key maps each row id to the source line's ``id_fields`` and must be kept away from the rater.
    """
    leaked = sorted(set(show) & {*HIDDEN_FIELDS, *id_fields, *fields})
    if leaked:
        raise UsageError(f"--show must not reveal {leaked}: they identify the model or hold the labels")
    picked = sample_rows(rows, fraction=fraction, seed=seed)
    width = max(3, len(str(len(picked))))
    out_rows: list[dict[str, Any]] = []
    key_rows: dict[str, Any] = {}
    for n, idx in enumerate(picked, start=1):
        rid = f"r{n:0{width}d}"
        src = rows[idx]
        out_rows.append({"row": rid, **{f: src.get(f) for f in show}, **{f: None for f in fields}})
        key_rows[rid] = {f: src.get(f) for f in id_fields}
    key = {"source": source, "seed": seed, "fraction": fraction, "fields": list(fields), "rows": key_rows}
    return Sheet(out_rows, key)


def write_sheet(sheet: Sheet, sheet_path: Path, key_path: Path) -> None:
    """Write the sheet (JSON Lines) and its key (JSON) to two different files."""
    if sheet_path.resolve() == key_path.resolve():
        raise UsageError("the key file must be a different file from the sheet")
    atomic_write(sheet_path, "".join(dumps_json(r) + "\n" for r in sheet.rows))
    atomic_write(key_path, json_pretty(sheet.key))


def unblind(sheet_path: Path, key_path: Path, *, root: Path | None = None) -> list[dict[str, Any]]:
    """The filled sheet's labels under the original unit ids, ready for ``propeval agree``.

    The sheet was filled by a person and is read by the strict loader; the key was written by
    :func:`write_sheet` and kept by whoever drew the sample, so it is read with the standard parser.
    """
    key = load_written(key_path, root=root, max_bytes=MAX_KEY_BYTES)
    rows = key.get("rows")
    fields = key.get("fields")
    if not isinstance(rows, dict) or not isinstance(fields, list):
        raise LoadError(Problem(key_path.as_posix(), 1, 1, "labels", "not a sheet key: it needs 'rows' and 'fields'"))
    out = []
    for line, row in load_jsonl(sheet_path, root=root):
        rid = row.get("row")
        if not isinstance(rid, str) or rid not in rows:
            raise LoadError(
                Problem(sheet_path.as_posix(), line, 1, "labels", f"row {rid!r} is not in the key; wrong key file?")
            )
        out.append({**rows[rid], **{f: row.get(f) for f in fields}})
    return out


def json_pretty(data: Any) -> str:
    """Readable, stable JSON for files people review in a diff."""
    import json

    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
