"""The view of the ``audit`` rubric kind: its score report as text, its panel in ``propeval report`` and its
figures in the harness adapters. The verdict (keys, schema, validation, scores) is :mod:`propeval.judge.kinds.audit`."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from propeval.judge.kinds.audit import FIELDS, shares
from propeval.judge.kinds.base import (
    Drawer,
    HarnessScore,
    Image,
    KindView,
    Panel,
    Row,
    Table,
    ci_legend,
    fmt,
    status_counts,
    text_table,
)

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric


# The label the report plots.
PLOTTED = "accuracy"


class AuditView(KindView):
    """How a ``audit`` rubric's verdicts and scores are shown."""

    def harness_names(self, rubric: Rubric) -> list[str]:
        return [f"{name}={label}" for name in FIELDS for label in rubric.labels.get(name, [])]

    def verdict_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        """One 0/1 figure per label of each metric (``accuracy=Correct``, ...), so that their means
        are the label shares; an unanswered item has no labels (``score`` leaves it out too)."""
        if fields["status"] != "scored":
            return HarnessScore(None, dict.fromkeys(self.harness_names(rubric)), f"{fields['status']}: no labels")
        named: dict[str, int | None] = {
            f"{name}={label}": int(fields.get(name) == label)
            for name in FIELDS
            for label in rubric.labels.get(name, [])
        }
        return HarnessScore(1, named, ", ".join(f"{name} {fields.get(name)}" for name in FIELDS))

    def format_text(self, report: dict[str, Any]) -> list[str]:
        lines: list[str] = []
        conf = report.get("confidence")

        def share(row: dict[str, Any], metric: str, label: str) -> str:
            ci = (row.get("ci") or {}).get(metric, {}).get(label)
            return fmt(row[metric][label], True) + (f" [{fmt(ci[0], True)}, {fmt(ci[1], True)}]" if ci else "")

        for metric in FIELDS:
            labels = list(report["table"][0][metric]) if report["table"] else []
            lines.append("")
            lines.append(metric.replace("_", " ") + (" (share [95% CI])" if conf else ""))
            lines += text_table(
                ["model", "language", "scored", "truncated", *labels, *(["note"] if conf else [])],
                [
                    [
                        row["model"],
                        row["language"],
                        str(row["scored"]),
                        str(row.get("truncated", 0)),
                        *(share(row, metric, lb) for lb in labels),
                        *([f"too small (<{conf['min_items']})" if row.get("too_small") else ""] if conf else []),
                    ]
                    for row in report["table"]
                ],
            )
        if conf:
            lines += ci_legend(conf, "a cell with fewer than {n} scored items")
        return lines

    def report_panel(self, rubric: Rubric, rows: list[Row], draw: Drawer | None) -> Panel:
        """The share of each factual-accuracy label (the rubric's own labels) by model."""
        panel = Panel(rubric.name, rubric.spec.name)
        labels = [str(lb) for lb in rubric.labels.get(PLOTTED, [])]
        by_model: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            by_model[r.model].append(r)
        for model, model_rows in sorted(by_model.items()):
            scored = [str((r.grade or {}).get(PLOTTED)) for r in model_rows if r.status == "scored"]
            counts = status_counts(model_rows)
            panel.cells.append({"model": model, "n": len(scored), **counts, **shares(scored, labels)})
        if draw is not None and any(c["n"] for c in panel.cells):
            uri = draw.bars(
                [c["model"] for c in panel.cells],
                {lb: [100 * c[lb] for c in panel.cells] for lb in labels},
                f"Factual {PLOTTED} ({rubric.name}) by model",
                "% of scored answers",
            )
            panel.images.append(Image(uri, f"{rubric.name}: {PLOTTED} by model"))
        panel.tables.append(
            Table(
                ["model", "scored", "unanswered", "unscored", "ungraded", *[f"% {lb}" for lb in labels]],
                [
                    [
                        c["model"],
                        c["n"],
                        c["unanswered"],
                        c["unscored"],
                        c["ungraded"],
                        *[f"{100 * c[lb]:.1f}%" for lb in labels],
                    ]
                    for c in panel.cells
                ],
            )
        )
        return panel
