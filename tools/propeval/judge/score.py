"""`propeval score`: figures from grade records, as text tables or JSON.

The runs are read by :func:`propeval.judge.runs.read_graded` (the latest, validated record per
item) and scored by the rubric's kind (``propeval.judge.kinds``):

facts rubrics: the fact mean over every item of a run (an unanswered item counts fact 0 and
propaganda 0; an unscored one counts neither way and is reported apart), the share of items with
any propaganda, breakdowns by question type, category, language and framing, and over several
runs the mean and sample sd of both.

audit rubrics: shares of each accuracy label, and the propaganda-inclusion and tone
distributions, by model x language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from propeval.config import Config
from propeval.judge import runs
from propeval.judge.rubric import load_rubric
from propeval.judge.settings import JudgeSettings
from propeval.result import Problem


@dataclass
class ScoreOptions:
    runs: tuple[str, ...]
    rubric: str


@dataclass
class Score:
    """The score report (``report``, printed as JSON or text) and the grade records that failed
    validation (``problems``: left out of the figures, their items counted as ungraded)."""

    report: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)  # self-judged and reference-model scores


def judge_models(grade: dict[str, Any] | None) -> list[str]:
    """The judge model(s) of a grade record: each panel judge's, else its ``judge_model``."""
    if not grade:
        return []
    panel = grade.get("judges")
    if isinstance(panel, list):
        return [str(j["judge_model"]) for j in panel if isinstance(j, dict) and isinstance(j.get("judge_model"), str)]
    return [grade["judge_model"]] if isinstance(grade.get("judge_model"), str) else []


def self_judging(graded: list[runs.GradedRun], config: Config) -> list[Problem]:
    """A warning per run whose answer model judged itself or is the answerability reference model."""
    from propeval.judge import selfjudge
    from propeval.loader import relative_path
    from propeval.result import Severity

    ledger = selfjudge.ledger_for(config)
    out = []
    for g in graded:
        models = {r.model for r in g.rows if r.model != "?"}
        judges = {j for r in g.rows for j in judge_models(r.grade)}
        for rule, message in selfjudge.warnings(models, judges, ledger):
            out.append(Problem(relative_path(g.path, config.root), 0, 0, rule, message, severity=Severity.WARNING))
    return out


def score_runs(config: Config, settings: JudgeSettings, options: ScoreOptions) -> Score:
    """The score report of one or more runs under one rubric."""
    rubric = load_rubric(config.root / settings.rubrics_dir, options.rubric, root=config.root)
    graded = [
        runs.read_graded(
            runs.resolve_run(config.root / settings.runs_dir, run) / runs.grades_file(rubric.name),
            rubric.spec,
            root=config.root,
            rubric=rubric,
        )
        for run in options.runs
    ]
    report = rubric.spec.score([(g.run, g.rows) for g in graded], rubric)
    warnings = self_judging(graded, config)
    report["warnings"] = [{"path": w.path, "rule": w.rule, "message": w.message} for w in warnings]
    return Score(report, [p for g in graded for p in g.problems], warnings)


def format_text(report: dict[str, Any]) -> str:
    from propeval.judge.kinds import KINDS

    return "\n".join([f"rubric {report['rubric']}", *KINDS[report["kind"]].format_text(report)]) + "\n"
