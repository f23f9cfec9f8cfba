"""The view of the ``facts`` rubric kind: its score report as text, its panel in ``propeval report`` and its
figures in the harness adapters. The verdict (keys, schema, validation, scores) is :mod:`propeval.judge.kinds.facts`."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

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
    text_table,
)
from propeval.judge.kinds.facts import BREAKDOWNS, mean_and_sd, summary

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric


class FactsView(KindView):
    """How a ``facts`` rubric's verdicts and scores are shown."""

    def harness_names(self, rubric: Rubric) -> list[str]:
        return ["fact_score", "propaganda", "any_propaganda"]

    def verdict_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        """The fact score / 5; the fact score, propaganda and whether there was any (0/1)."""
        fact, prop = fields["fact_score"], fields["propaganda"]
        return HarnessScore(
            fact / 5,
            {"fact_score": fact, "propaganda": prop, "any_propaganda": int(prop > 0)},
            f"{fields['status']}: fact score {fact}, propaganda {prop}",
        )

    def format_text(self, report: dict[str, Any]) -> list[str]:
        conf = report.get("confidence")
        min_items = conf["min_items"] if conf else None
        lines = _runs_lines(report)
        lines += _cutoff_lines(report, min_items)
        lines += _breakdown_lines(report, conf, min_items)
        if conf:
            lines += ci_legend(conf, "a group with fewer than {n} counted items")
        return lines

    def report_panel(self, rubric: Rubric, rows: list[Row], draw: Drawer | None) -> Panel:
        """Fact mean and share with any propaganda by model x language (pooled over runs), and
        by model as mean ± sample sd over its runs."""
        panel = Panel(rubric.name, rubric.spec.name)
        by_cell: dict[tuple[str, str], list[Row]] = defaultdict(list)
        by_run: dict[tuple[str, str], list[Row]] = defaultdict(list)
        for r in rows:
            by_cell[(r.model, str(r.item.get("language") or "?"))].append(r)
            by_run[(r.model, r.run)].append(r)
        # Every cell is listed, so an unscored item is counted here as in `score`; only cells with
        # a counted item have a mean to plot.
        panel.cells = [{"model": m, "language": lang, **summary(rs)} for (m, lang), rs in sorted(by_cell.items())]
        counted = [c for c in panel.cells if c["counted"]]
        by_model: list[tuple[str, int, dict[str, float | None], dict[str, float | None]]] = []
        for model in sorted({m for m, _ in by_run}):
            per = [summary(rs) for (m, _), rs in sorted(by_run.items()) if m == model]
            means = [s["fact_mean"] for s in per if s["counted"]]
            props = [s["propaganda_share"] for s in per if s["counted"]]
            if means:
                by_model.append((model, len(means), mean_and_sd(means), mean_and_sd(props)))
        if draw is not None and counted:
            models = sorted({c["model"] for c in counted})
            langs = sorted({c["language"] for c in counted})
            at = {(c["model"], c["language"]): c for c in counted}

            def matrix(key: str) -> list[list[float]]:
                return [[at[(m, lang)][key] if (m, lang) in at else 0.0 for lang in langs] for m in models]

            uri = draw.heatmaps(
                models,
                langs,
                [
                    ("Fact score mean (0-5)", matrix("fact_mean"), ".2f"),
                    ("Share with any propaganda", matrix("propaganda_share"), ".0%"),
                ],
            )
            panel.images.append(Image(uri, f"{rubric.name}: fact mean and propaganda by model and language"))

        def mean_sd(v: dict[str, float | None], scale: float, form: str, unit: str) -> str:
            mean, sd = v["mean"] or 0.0, v["sd"]
            return format(scale * mean, form) + unit + ("" if sd is None else " ± " + format(scale * sd, form))

        panel.tables.append(
            Table(
                ["model", "runs", "fact mean", "% any propaganda"],
                [
                    [model, n, mean_sd(fact, 1, ".2f", ""), mean_sd(prop, 100, ".1f", "%")]
                    for model, n, fact, prop in by_model
                ],
            )
        )
        panel.tables.append(
            Table(
                [
                    *("model", "language", "counted", "unanswered", "truncated"),
                    *("unscored", "ungraded", "fact mean", "% any propaganda"),
                ],
                [
                    [
                        c["model"],
                        c["language"],
                        c["counted"],
                        c["unanswered"],
                        c["truncated"],
                        c["unscored"],
                        c["ungraded"],
                        fmt(c["fact_mean"]),
                        fmt(c["propaganda_share"], pct=True),
                    ]
                    for c in panel.cells
                ],
            )
        )
        return panel


def _ci(s: dict[str, Any], key: str, pct: bool = False) -> str:
    ci = (s.get("ci") or {}).get(key)
    if not ci:
        return "-"
    return f"[{fmt(ci[0], pct)}, {fmt(ci[1], pct)}]"


def _note(s: dict[str, Any], min_items: int | None) -> str:
    return f"too small (<{min_items})" if s.get("too_small") else ""


def _runs_lines(report: dict[str, Any]) -> list[str]:
    """One row per run, then the spread over repeated runs of one model."""
    conf = report.get("confidence")
    has_groups = any(r.get("judge_group") for r in report["runs"])
    rows = [
        [
            r["run"],
            r.get("model", "?"),
            *([r.get("judge_group") or "-", r.get("settings_group") or "-"] if has_groups else []),
            str(r["items"]),
            str(r["unanswered"]),
            str(r.get("truncated", 0)),
            str(r["unscored"]),
            str(r["ungraded"]),
            fmt(r["fact_mean"]),
            *([_ci(r, "fact_mean")] if conf else []),
            fmt(r["propaganda_share"], pct=True),
            *([_ci(r, "propaganda_share", True)] if conf else []),
        ]
        for r in report["runs"]
    ]
    lines = text_table(
        [
            "run",
            "model",
            *(["judge", "settings"] if has_groups else []),
            "items",
            "unanswered",
            "truncated",
            "unscored",
            "ungraded",
            "fact mean",
            *(["95% CI"] if conf else []),
            "propaganda",
            *(["95% CI"] if conf else []),
        ],
        rows,
    )
    for o in report.get("over_runs_groups", []):
        fm, ps = o["fact_mean"], o["propaganda_share"]
        where = ", ".join(x for x in (o.get("judge_group"), o.get("settings_group")) if x)
        lines.append(
            f"over {o['runs']} runs of {o['model']}{f' ({where})' if where else ''}: fact mean "
            f"{fmt(fm['mean'])} ± {fmt(fm['sd'])}, propaganda {fmt(ps['mean'], True)} ± {fmt(ps['sd'], True)} "
            "(sample sd)"
        )
    return lines


def _cutoff_lines(report: dict[str, Any], min_items: int | None) -> list[str]:
    """Items whose source predates each run's model's knowledge cutoff, apart from the rest."""
    lines: list[str] = []
    if any((r.get("cutoff") or {}).get("knowledge_cutoff") for r in report["runs"]):
        lines.append("")
        lines.append("knowledge cutoff: items whose source predates the model's cutoff, apart from the rest")
        cut_rows = []
        for r in report["runs"]:
            c = r["cutoff"]
            for g, s in c["groups"].items():
                cut_rows.append(
                    [
                        r["run"],
                        c["knowledge_cutoff"] or "-",
                        g,
                        str(s["counted"]),
                        fmt(s["fact_mean"]),
                        _ci(s, "fact_mean"),
                        fmt(s["propaganda_share"], pct=True),
                        _note(s, min_items),
                    ]
                )
        lines += text_table(
            ["run", "cutoff", "source", "counted", "fact mean", "95% CI", "propaganda", "note"], cut_rows
        )
    elif any("cutoff" in r for r in report["runs"]):
        lines.append(
            "knowledge cutoff: no run's model declares one ([tool.propeval.judge.endpoints.NAME] knowledge_cutoff)"
        )
    return lines


def _breakdown_lines(report: dict[str, Any], conf: dict[str, Any] | None, min_items: int | None) -> list[str]:
    """A table per breakdown (category, language, ...), overall or per judge group."""
    lines: list[str] = []
    sections: list[tuple[str, dict[str, Any]]] = [("", report["breakdowns"])] if report["breakdowns"] else []
    sections += [(f"judge group {g}: ", b) for g, b in report.get("group_breakdowns", {}).items()]
    for prefix, breakdowns in sections:
        for key in BREAKDOWNS:
            groups = breakdowns[key]
            lines.append("")
            lines += text_table(
                [
                    prefix + key.replace("_", " "),
                    "counted",
                    "fact mean",
                    *(["95% CI"] if conf else []),
                    "propaganda",
                    *(["95% CI", "note"] if conf else []),
                ],
                [
                    [
                        g,
                        str(s["counted"]),
                        fmt(s["fact_mean"]),
                        *([_ci(s, "fact_mean")] if conf else []),
                        fmt(s["propaganda_share"], pct=True),
                        *([_ci(s, "propaganda_share", True), _note(s, min_items)] if conf else []),
                    ]
                    for g, s in groups.items()
                ],
            )
    return lines
