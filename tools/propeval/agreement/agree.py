"""``propeval agree``'s core: every agreement figure for one labelled field, from the label files.

:func:`run_agree` reads the files (:mod:`propeval.agreement.raters`), collects every problem that
stops the comparison, resolves the scale and positive label typed on the command line, and calls
:func:`field_report`, which computes the figures (:mod:`propeval.agreement.stats`) for every pair
of raters and over all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.agreement.raters import RaterFile, align, label_clashes, read_rater_file, resolve_label
from propeval.agreement.stats import (
    LEVELS,
    Label,
    Ratings,
    Stat,
    bootstrap,
    cohen_kappa,
    confusion,
    f1_positive,
    fleiss_kappa,
    krippendorff_alpha,
    label_order,
)
from propeval.errors import UsageError
from propeval.loader import LoadError
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.config import Config


# Fewer units than this and a figure is marked as too few to mean anything (``--min-units``). Why
# 30: each unit moves observed agreement by 1/n, and the 95% interval of Cohen's kappa is about
# +-2 x sqrt(p_o (1 - p_o) / n) / (1 - p_e) wide: at p_o = 0.8 and p_e = 0.5 that is +-0.5 at 10
# units and still +-0.3 at 30, the width of two Landis-Koch bands (slight, fair, moderate,
# substantial are 0.2 apart). Below 30 a figure cannot tell slight agreement from substantial;
# score uses the same 30 (min_breakdown_items) for a breakdown too small to compare.
MIN_UNITS = 30
FEW_UNITS_REASON = (
    "each unit moves observed agreement by 1/n, and the 95% interval of kappa is still about +-0.3 wide at 30 "
    "units (+-0.5 at 10): so few units cannot tell slight agreement from substantial"
)


def too_few(stat: Stat, min_units: int) -> Stat:
    """``stat`` marked when it rests on fewer than ``min_units`` units; one unit is no agreement at all
    (a kappa of one unit is 0 or undefined whatever the raters do), so it is undefined."""
    if stat.value is None:
        return stat
    if stat.n < 2:
        return replace(stat, value=None, ci=None, reason=f"only {stat.n} unit: agreement needs at least 2 units")
    if stat.n < min_units:
        return replace(stat, caveat=f"TOO FEW UNITS: {stat.n} < {min_units}, not meaningful")
    return stat


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
    min_units: int = MIN_UNITS

    @property
    def few(self) -> bool:
        """Whether any figure rests on fewer than ``min_units`` units."""
        stats = [*self.overall, *(s for p in self.pairwise for s in p["stats"])]
        return any(s.caveat or s.reason.startswith("only ") for s in stats)

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "level": self.level,
            "labels": self.labels,
            "raters": self.raters,
            "units": self.units,
            "min_units": self.min_units,
            "min_units_reason": FEW_UNITS_REASON,
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
    min_units: int = MIN_UNITS,
    progress: Callable[[int, int], None] | None = None,
) -> FieldReport:
    """Pairwise Cohen's kappa (+ F1 and a confusion matrix), Fleiss' kappa and Krippendorff's alpha.

    A figure on fewer than ``min_units`` units carries a caveat (:func:`too_few`); on one unit it
    is undefined. ``progress(done, total)`` counts bootstrap resamples over every figure."""
    if level not in LEVELS:
        raise UsageError(f"--level must be one of {list(LEVELS)}, not {level!r}")
    if len(raters) < 2:
        raise UsageError("agreement needs at least two label files")
    keys, table = align(raters)
    order = label_order(table, labels)
    weights = ["unweighted"] if level == "nominal" else ["unweighted", "linear", "quadratic"]
    levels = LEVELS[: LEVELS.index(level) + 1]
    pairs = len(raters) * (len(raters) - 1) // 2
    figures = pairs * (len(weights) + (positive is not None)) + 1 + len(levels)
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None and (done % 50 == 0 or done == figures * resamples):
            progress(done, figures * resamples)

    def boot(fn: Any, ratings: Any, **kw: Any) -> Stat:
        nonlocal done
        before = done
        stat = bootstrap(fn, ratings, resamples=resamples, seed=seed, on_draw=step, **kw)
        done = before + resamples  # an undefined point estimate draws nothing: count its share anyway
        if progress is not None:
            progress(done, figures * resamples)
        return too_few(stat, min_units)

    pairwise: list[dict[str, Any]] = []
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            pair = [table[i], table[j]]
            stats = [boot(partial(_pair_kappa, weights=w, labels=order), pair) for w in weights]
            if positive is not None:
                stats.append(boot(partial(_pair_f1, positive=positive), pair))
            _, matrix = confusion(table[i], table[j], labels=order)
            pairwise.append({"a": raters[i].name, "b": raters[j].name, "stats": stats, "confusion": matrix})
    overall = [boot(partial(fleiss_kappa, labels=order), table, min_raters=len(raters))]
    for lv in levels:
        overall.append(boot(partial(krippendorff_alpha, level=lv, labels=order), table))
    return FieldReport(field, level, order, [r.name for r in raters], len(keys), pairwise, overall, min_units)


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
    min_units: int = MIN_UNITS
    progress: Callable[[int, int], None] | None = None


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
        min_units=options.min_units,
        progress=options.progress,
    )
    return AgreeResult(rep, warnings=warnings)
