"""What a rubric kind is: its verdict (:class:`Kind`) and its view (:class:`KindView`).

Every place that treats a ``facts`` rubric differently from an ``audit`` one asks the rubric's
kind (``rubric.spec``, an instance of a :class:`Kind` subclass) instead of testing its name.

* The verdict, :class:`Kind`: the kind's keys of ``rubric.yaml``, the verdict's JSON schema and its
  validation, the grade-record fields, panels' combined verdicts, the labels raters compare, and
  the scores of a run (``propeval score``'s report as data).
* The view, :class:`KindView` (``rubric.spec.view``): that report as text, the kind's panel in
  ``propeval report``, and its figures in the harness adapters.
* The agreement statistics between a judge and human raters are not the kind's: they are measured
  in :mod:`propeval.agreement.verdicts` over the fields the kind names in ``agreement_fields``.

Adding a kind is one module in this package with a :class:`Kind` subclass and a :class:`KindView`
subclass, and its line in ``KINDS`` (``__init__.py``): ``Name(NameView())``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeGuard

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric
    from propeval.loader import LoadError

Fail = Callable[[str, str], "LoadError"]  # (JSON pointer, message) -> the rubric file's LoadError


class VerdictError(ValueError):
    """The verdict is unusable; ``str(e)`` is the feedback for the judge."""


@dataclass
class Outcome:
    """What a valid verdict gives the grade record."""

    verdict: dict[str, Any]
    fields: dict[str, Any]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Row:
    """One item of a graded run: its latest answer joined with its latest grade under one rubric.

    ``status`` is ``scored``, ``unscored`` (the judge failed: not a verdict), ``unanswered`` (the
    model gave no text) or ``ungraded`` (no final grade yet: none, or a grade request that failed).
    """

    run: str
    item_id: str
    model: str
    status: str
    item: dict[str, Any]
    grade: dict[str, Any] | None
    answer: dict[str, Any] | None = None  # the latest answer record (finish_reason, usage, settings)


@dataclass(frozen=True)
class HarnessScore:
    """One grade as the harness adapters (inspect_ai, lm-eval, promptfoo) report it.

    ``score`` is the grade's one figure in 0-1 (promptfoo's ``score``), or None when the grade has
    no figures under its kind (a judge failure, which is not a verdict): the harnesses count it
    neither way. ``named`` holds the named figures, the same names for every item of a rubric (all
    None when ``score`` is None); ``reason`` says the grade in words.
    """

    score: float | None
    named: dict[str, int | None]
    reason: str


@dataclass(frozen=True)
class ScoreContext:
    """How `score` computes what every kind shares: bootstrap intervals (``draws``, ``seed``),
    the size under which a breakdown group is too small to compare, each run's knowledge cutoff,
    and each run's judge group (J1, ...) and sampling-settings group (S1, ...) from
    :mod:`propeval.judge.compare`."""

    draws: int = 2000
    seed: int = 0
    min_items: int = 30
    cutoffs: Mapping[str, str | None] = field(default_factory=dict)
    judge_groups: Mapping[str, str] = field(default_factory=dict)
    settings_groups: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Any]]


@dataclass
class Image:
    uri: str
    alt: str


@dataclass
class Panel:
    """A rubric's part of the report's scored-runs section: its plots and tables, in order."""

    rubric: str
    kind: str
    images: list[Image] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)  # the numbers behind the tables


class Drawer(Protocol):
    """The report's plotting toolkit, handed to a kind so that kinds never import matplotlib."""

    def heatmaps(
        self, rows: Sequence[str], cols: Sequence[str], maps: Sequence[tuple[str, list[list[float]], str]]
    ) -> str: ...

    def bars(self, groups: Sequence[str], series: dict[str, list[float]], title: str, ylabel: str) -> str: ...


class KindView:
    """How one rubric kind's verdicts and scores are shown. Subclasses override what differs."""

    # ------------------------------------------------------------------ harness adapters

    def harness_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        """A grade's figures for the harness adapters. A grade that is neither scored nor
        unanswered (the judge failed, or the request did) is not a verdict: it has no figures."""
        status = fields.get("status")
        if status not in ("scored", "unanswered"):
            return HarnessScore(
                None, dict.fromkeys(self.harness_names(rubric)), f"{status} (not a verdict): {fields.get('reason')}"
            )
        return self.verdict_score(rubric, fields)

    def harness_names(self, rubric: Rubric) -> list[str]:
        """The names of :class:`HarnessScore`'s figures under ``rubric``, in order."""
        raise NotImplementedError

    def verdict_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        """:meth:`harness_score` of a scored or unanswered grade."""
        raise NotImplementedError

    # ------------------------------------------------------------------ reports

    def format_text(self, report: dict[str, Any]) -> list[str]:
        """``report`` (from :meth:`Kind.score`) as text lines."""
        raise NotImplementedError

    def report_panel(self, rubric: Rubric, rows: list[Row], draw: Drawer | None) -> Panel:
        """The rubric's panel in ``propeval report``; ``draw`` None leaves the images out."""
        raise NotImplementedError


class Kind:
    """One rubric kind's verdict. Subclasses set the class attributes and override what differs;
    ``view`` shows its verdicts and scores."""

    name: ClassVar[str]
    # The fields of a grade record the verdict fills (None until scored), in record order.
    record_fields: ClassVar[tuple[str, ...]]
    # The kind's own keys of rubric.yaml, beside every rubric's (rubric.COMMON_KEYS): check_rubric
    # reads them, and any other key is refused.
    rubric_keys: ClassVar[tuple[str, ...]] = ()
    # The fields compared between a human label and a judge's verdict (the judge gate's agreement).
    agreement_fields: ClassVar[tuple[str, ...]]
    # How :meth:`combine` makes a panel's verdict, in one line (kept in each panel grade record).
    combine_rule: ClassVar[str] = ""

    def __init__(self, view: KindView) -> None:
        self.view = view

    def harness_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        """The view's :meth:`KindView.harness_score`, for harness adapters copied by an earlier
        propeval (``propeval harness ... --out``), which call it here: they keep working."""
        return self.view.harness_score(rubric, fields)

    # ------------------------------------------------------------------ the rubric file

    def check_rubric(self, data: dict[str, Any], placeholders: set[str], fail: Fail) -> Any:
        """Check the kind's own part of ``rubric.yaml`` and return what the kind keeps of it (its
        rules: kept as ``Rubric.kind_data``, read only by the kind)."""
        return None

    # ------------------------------------------------------------------ verdicts

    def item_schema(self, rubric: Rubric, fact_ids: list[str]) -> dict[str, Any]:
        """The verdict schema for one item (a copy of the rubric's; a kind may narrow it)."""
        import copy

        return copy.deepcopy(rubric.verdict_schema)

    def validate(self, data: dict[str, Any], rubric: Rubric, fact_ids: list[str], answer: str, shown: str) -> Outcome:
        raise NotImplementedError

    def empty_fields(self) -> dict[str, Any]:
        """The verdict's fields of a grade record before (or without) a verdict."""
        return dict.fromkeys(self.record_fields)

    def unanswered_fields(self) -> dict[str, Any]:
        """What an unanswered item scores under this kind (the methodology's rule)."""
        return {}

    # ------------------------------------------------------------------ judge panels

    def combine(self, verdicts: Sequence[dict[str, Any]], rubric: Rubric) -> tuple[dict[str, Any], dict[str, Any]]:
        """The panel's verdict fields from the record fields of each judge that scored (one or
        more), and the ties: field -> the votes that tied. A panel of one is that judge's verdict."""
        raise NotImplementedError

    def rating_units(self, fields: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """A verdict's labels for agreement between raters: field -> unit suffix -> label (a facts
        verdict rates each fact apart, ``fact_state`` per fact id)."""
        return {f: {"": fields.get(f)} for f in self.agreement_fields}

    def rating_scales(self, labels: dict[str, list[Any]]) -> dict[str, tuple[str, list[Any] | None]]:
        """field -> (Krippendorff level, the scale in order) for :meth:`rating_units`' fields."""
        return {f: ("nominal", list(labels[f]) if f in labels else None) for f in self.agreement_fields}

    # ------------------------------------------------------------------ grade records

    def check_record(self, record: dict[str, Any], rubric: Rubric | None) -> str | None:
        """Why a scored grade record is unusable (a message saying what to do), or None."""
        return None

    # ------------------------------------------------------------------ scores

    def score(
        self, per_run: list[tuple[str, list[Row]]], rubric: Rubric, ctx: ScoreContext | None = None
    ) -> dict[str, Any]:
        """The ``propeval score`` report of some runs under one rubric."""
        raise NotImplementedError


# Where an item's source stands against a model's knowledge cutoff (the report's cutoff table).
CUTOFF_GROUPS = ("before cutoff", "after cutoff", "undated source", "no cutoff declared")


def cutoff_group(row: Row, cutoff: str | None) -> str:
    """Whether the row's source predates the model's knowledge cutoff (compared at the cutoff's
    precision: a source of 2024-06-15 is not before a cutoff of 2024-06)."""
    if not cutoff:
        return "no cutoff declared"
    date = row.item.get("source_date")
    if not isinstance(date, str) or not date:
        return "undated source"
    return "before cutoff" if date[: len(cutoff)] < cutoff else "after cutoff"


def fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}%" if pct else f"{v:.2f}"


def ci_legend(conf: dict[str, Any], too_small: str) -> list[str]:
    """The closing lines of a score table with confidence intervals; ``too_small`` names what a
    small group is ("a group with fewer than {n} counted items")."""
    return [
        "",
        f"95% CI: {conf['method']} ({conf['draws']} draws, seed {conf['seed']}); "
        f"{too_small.format(n=conf['min_items'])} is too small to compare",
    ]


def text_table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    form = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [form.format(*header).rstrip(), *(form.format(*r).rstrip() for r in rows)]


def status_counts(rows: Sequence[Row]) -> dict[str, int]:
    return {s: sum(r.status == s for r in rows) for s in ("unanswered", "unscored", "ungraded")}


def truncated(rows: Sequence[Row]) -> int:
    """Rows whose answer stopped at the token cap (finish_reason ``length``)."""
    return sum(1 for r in rows if r.answer is not None and r.answer.get("finish_reason") == "length")


def schema_errors(data: dict[str, Any], schema: dict[str, Any]) -> None:
    """Raise :class:`VerdictError` naming the first place ``data`` breaks ``schema``."""
    import jsonschema

    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(map(str, e.absolute_path))
    )
    if errors:
        e = errors[0]
        where = "/".join(map(str, e.absolute_path)) or "the verdict"
        raise VerdictError(f"{where}: {e.message}; follow the verdict schema")


def median_low(values: Sequence[Any], scale: Sequence[Any]) -> tuple[Any, list[Any] | None]:
    """The median of ordinal ``values`` by their place on ``scale``, and the tie: with an even
    count whose two middle values differ, the lower one on the scale (``statistics.median_low``)
    is taken and the two middle values are returned as the tie, else None."""
    place = {v: i for i, v in enumerate(scale)}
    ordered = sorted(values, key=lambda v: place.get(v, len(scale)))
    n = len(ordered)
    low = ordered[(n - 1) // 2]
    if n % 2 == 0 and ordered[n // 2] != low:
        return low, [low, ordered[n // 2]]
    return low, None


def is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)
