"""`propeval score`: figures from grade records, as text tables or JSON.

facts rubrics: the fact mean over every item of a run (an unanswered item counts fact 0 and
propaganda 0; an unscored one counts neither way and is reported apart), the share of items with
any propaganda, breakdowns by question type, category, language and framing, and over several
runs the mean and sample sd of both.

audit rubrics: shares of each accuracy label, and the propaganda-inclusion and tone
distributions, by model x language.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.judge import runs
from propeval.judge.rubric import load_rubric
from propeval.judge.settings import JudgeSettings

BREAKDOWNS = ("question_type", "category", "language", "framing")


@dataclass
class ScoreOptions:
    runs: tuple[str, ...]
    rubric: str


def _load(config: Config, settings: JudgeSettings, run: str, rubric: str) -> tuple[Path, list[dict[str, Any]]]:
    """(run folder, one row per answered item: its answer meta joined with its latest grade)."""
    run_dir = runs.resolve_run(config.root / settings.runs_dir, run)
    answers = runs.latest(run_dir / runs.ANSWERS, config.root)
    grades = runs.latest(run_dir / runs.grades_file(rubric), config.root)
    rows = []
    for item_id, ans in sorted(answers.items()):
        g = grades.get(item_id)
        status = g.get("status") if g else None
        if status not in runs.FINAL_GRADE:
            status = "ungraded"
        rows.append(
            {"item_id": item_id, "model": ans.get("model"), "item": ans.get("item") or {}, "status": status, "grade": g}
        )
    return run_dir, rows


def _facts_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counted = [r for r in rows if r["status"] in ("scored", "unanswered")]
    n = len(counted)
    facts = [int(r["grade"].get("fact_score") or 0) for r in counted]
    prop = [int(r["grade"].get("propaganda") or 0) for r in counted]
    return {
        "items": len(rows),
        "counted": n,
        "unanswered": sum(r["status"] == "unanswered" for r in rows),
        "unscored": sum(r["status"] == "unscored" for r in rows),
        "ungraded": sum(r["status"] == "ungraded" for r in rows),
        "fact_mean": statistics.fmean(facts) if n else None,
        "propaganda_share": (sum(p > 0 for p in prop) / n) if n else None,
        "fact_distribution": {str(s): facts.count(s) for s in range(6)},
    }


def _groups(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if key == "category":
            for c in r["item"].get("categories") or ["(none)"]:
                out[str(c)].append(r)
        else:
            out[str(r["item"].get(key) or "(none)")].append(r)
    return dict(sorted(out.items()))


def _mean_sd(values: list[float]) -> dict[str, float | None]:
    return {
        "mean": statistics.fmean(values) if values else None,
        "sd": statistics.stdev(values) if len(values) >= 2 else None,
    }


def score_facts(per_run: list[tuple[Path, list[dict[str, Any]]]], rubric: str) -> dict[str, Any]:
    runs_out = []
    for run_dir, rows in per_run:
        s = _facts_summary(rows)
        s["run"] = run_dir.name
        s["breakdowns"] = {k: {g: _facts_summary(rs) for g, rs in _groups(rows, k).items()} for k in BREAKDOWNS}
        runs_out.append(s)
    pooled = [r for _, rows in per_run for r in rows]
    return {
        "rubric": rubric,
        "kind": "facts",
        "runs": runs_out,
        "over_runs": {
            "runs": len(runs_out),
            "fact_mean": _mean_sd([r["fact_mean"] for r in runs_out if r["fact_mean"] is not None]),
            "propaganda_share": _mean_sd(
                [r["propaganda_share"] for r in runs_out if r["propaganda_share"] is not None]
            ),
        },
        "breakdowns": {k: {g: _facts_summary(rs) for g, rs in _groups(pooled, k).items()} for k in BREAKDOWNS},
    }


def _shares(values: list[Any], labels: list[Any]) -> dict[str, float]:
    n = len(values)
    return {str(label): (sum(v == label for v in values) / n if n else 0.0) for label in labels}


def score_audit(
    per_run: list[tuple[Path, list[dict[str, Any]]]], rubric: str, labels: dict[str, list[Any]]
) -> dict[str, Any]:
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for _, rows in per_run:
        for r in rows:
            cells[(str(r["model"]), str(r["item"].get("language") or "(none)"))].append(r)
    table = []
    for (model, language), rows in sorted(cells.items()):
        scored = [r["grade"] for r in rows if r["status"] == "scored"]
        table.append(
            {
                "model": model,
                "language": language,
                "items": len(rows),
                "scored": len(scored),
                "unanswered": sum(r["status"] == "unanswered" for r in rows),
                "unscored": sum(r["status"] == "unscored" for r in rows),
                "ungraded": sum(r["status"] == "ungraded" for r in rows),
                "accuracy": _shares([g.get("accuracy") for g in scored], labels.get("accuracy", [])),
                "propaganda_inclusion": _shares(
                    [g.get("propaganda_inclusion") for g in scored], labels.get("propaganda_inclusion", [])
                ),
                "tone": _shares([g.get("tone") for g in scored], labels.get("tone", [])),
            }
        )
    return {"rubric": rubric, "kind": "audit", "runs": [d.name for d, _ in per_run], "table": table}


def score_runs(config: Config, settings: JudgeSettings, options: ScoreOptions) -> dict[str, Any]:
    """The score report of one or more runs under one rubric."""
    rubric = load_rubric(config.root / settings.rubrics_dir, options.rubric, root=config.root)
    per_run = [_load(config, settings, run, rubric.name) for run in options.runs]
    if rubric.kind == "facts":
        return score_facts(per_run, rubric.name)
    return score_audit(per_run, rubric.name, rubric.labels)


# --------------------------------------------------------------------------- text


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}%" if pct else f"{v:.2f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [fmt.format(*header).rstrip(), *(fmt.format(*r).rstrip() for r in rows)]


def format_text(report: dict[str, Any]) -> str:
    lines: list[str] = [f"rubric {report['rubric']}"]
    if report["kind"] == "facts":
        rows = [
            [
                r["run"],
                str(r["items"]),
                str(r["unanswered"]),
                str(r["unscored"]),
                str(r["ungraded"]),
                _fmt(r["fact_mean"]),
                _fmt(r["propaganda_share"], pct=True),
            ]
            for r in report["runs"]
        ]
        lines += _table(["run", "items", "unanswered", "unscored", "ungraded", "fact mean", "propaganda"], rows)
        o = report["over_runs"]
        if o["runs"] > 1:
            fm, ps = o["fact_mean"], o["propaganda_share"]
            lines.append(
                f"over {o['runs']} runs: fact mean {_fmt(fm['mean'])} ± {_fmt(fm['sd'])}, "
                f"propaganda {_fmt(ps['mean'], True)} ± {_fmt(ps['sd'], True)} (sample sd)"
            )
        for key in BREAKDOWNS:
            groups = report["breakdowns"][key]
            lines.append("")
            lines += _table(
                [key.replace("_", " "), "counted", "fact mean", "propaganda"],
                [
                    [g, str(s["counted"]), _fmt(s["fact_mean"]), _fmt(s["propaganda_share"], pct=True)]
                    for g, s in groups.items()
                ],
            )
        return "\n".join(lines) + "\n"
    for metric in ("accuracy", "propaganda_inclusion", "tone"):
        labels = list(report["table"][0][metric]) if report["table"] else []
        lines.append("")
        lines.append(metric.replace("_", " "))
        lines += _table(
            ["model", "language", "scored", *labels],
            [
                [row["model"], row["language"], str(row["scored"]), *(_fmt(row[metric][lb], True) for lb in labels)]
                for row in report["table"]
            ],
        )
    return "\n".join(lines) + "\n"
