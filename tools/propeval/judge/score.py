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

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.config import Config
from propeval.judge import runs
from propeval.result import Problem
from propeval.settings import JudgeSettings

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class ScoreOptions:
    runs: tuple[str, ...]
    rubric: str
    allow_mixed: bool = False


@dataclass
class Score:
    """The score report (``report``, printed as JSON or text), the grade records that failed
    validation (``problems``: left out of the figures, their items counted as ungraded), and why
    the runs may not share one table (``refused``: different judges, judge settings or rubric
    versions, without ``--allow-mixed``; the report is then not shown)."""

    report: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)  # self-judged and reference-model scores
    refused: list[str] = field(default_factory=list)


def judge_models(grade: dict[str, Any] | None) -> list[str]:
    """The judge model(s) of a grade record: each panel judge's, else its ``judge_model``."""
    if not grade:
        return []
    panel = grade.get("judges")
    if isinstance(panel, list):
        return [str(j["judge_model"]) for j in panel if isinstance(j, dict) and isinstance(j.get("judge_model"), str)]
    return [grade["judge_model"]] if isinstance(grade.get("judge_model"), str) else []


def self_judging(graded: list[runs.GradedRun], ws: Workspace) -> list[Problem]:
    """A warning per run whose answer model judged itself or is the answerability reference model."""
    from propeval.judge import selfjudge
    from propeval.loader import relative_path
    from propeval.result import Severity

    ledger = selfjudge.ledger_for(ws)
    out = []
    for g in graded:
        models = {r.model for r in g.rows if r.model != "?"}
        judges = {j for r in g.rows for j in judge_models(r.grade)}
        for rule, message in selfjudge.warnings(models, judges, ledger):
            out.append(Problem(relative_path(g.path, ws.root), 0, 0, rule, message, severity=Severity.WARNING))
    return out


def _cutoffs(settings: JudgeSettings) -> dict[str, str]:
    """Model -> knowledge cutoff, from the endpoints that declare one (for runs that did not record it)."""
    out: dict[str, str] = {}
    for ep in settings.endpoints.values():
        if ep.knowledge_cutoff:
            out.setdefault(ep.model, ep.knowledge_cutoff)
    return out


def score_runs(ws: Workspace, settings: JudgeSettings, options: ScoreOptions) -> Score:
    """The score report of one or more runs under one rubric, with what produced each run, the
    refusals and flags of comparing them (:mod:`propeval.judge.compare`), tokens and cost."""
    from propeval.judge.compare import compare, describe
    from propeval.judge.kinds.base import ScoreContext

    config = ws.config
    rubric = ws.rubrics.load(options.rubric)
    graded = [
        runs.read_graded(
            runs.resolve_run(config.root / settings.runs_dir, run) / runs.grades_file(rubric.name),
            rubric.spec,
            root=config.root,
            rubric=rubric,
        )
        for run in options.runs
    ]
    cutoffs = _cutoffs(settings)
    prices = settings.prices or None
    infos = [describe(g.run, g.meta, g.rows, cutoffs=cutoffs, prices=prices) for g in graded]
    comparison = compare(infos, truncated_warn_share=settings.truncated_warn_share)
    problems = [p for g in graded for p in g.problems]
    warnings = self_judging(graded, ws) + partial_runs(graded, config)
    if comparison.refusals and not options.allow_mixed:
        return Score({}, problems, warnings=warnings, refused=comparison.refusals)
    ctx = ScoreContext(
        draws=settings.bootstrap_draws,
        seed=settings.bootstrap_seed,
        min_items=settings.min_breakdown_items,
        cutoffs={i.run: i.knowledge_cutoff for i in infos},
        judge_groups=comparison.groups,
        settings_groups=comparison.settings_groups,
    )
    report = rubric.spec.score([(g.run, g.rows) for g in graded], rubric, ctx)
    report["comparison"] = {**comparison.to_dict(), "mixed_allowed": bool(comparison.refusals)}
    report["provenance"] = [i.to_dict() for i in infos]
    report["prices"] = {m: list(p) for m, p in sorted(settings.prices.items())}
    report["warnings"] = [{"path": w.path, "rule": w.rule, "message": w.message} for w in warnings]
    report["partial_runs"] = {g.run: g.partial for g in graded if g.partial}
    return Score(report, problems, warnings=warnings)


def partial_runs(graded: list[runs.GradedRun], config: Config) -> list[Problem]:
    """A warning per run whose answers are incomplete (see :func:`runs.answers_incomplete`)."""
    from propeval.loader import relative_path
    from propeval.result import Severity

    return [
        Problem(
            relative_path(g.path.parent / runs.ANSWERS, config.root),
            0,
            0,
            "partial-run",
            f"run {g.run} is PARTIAL: {g.partial}; its figures cover only the items answered so far",
            severity=Severity.WARNING,
        )
        for g in graded
        if g.partial
    ]


def _tokens_table(report: dict[str, Any]) -> list[str]:
    from propeval.judge.kinds.base import text_table

    rows = []
    for p in report.get("provenance", []):
        t = p["tokens"]
        rows.append(
            [
                p["run"],
                str(t["answer_calls"]),
                str(t["answer_prompt_tokens"]),
                str(t["answer_completion_tokens"]),
                str(t["judge_calls"]),
                str(t["judge_prompt_tokens"]),
                str(t["judge_completion_tokens"]),
                "-"
                if p["cost"] is None
                else f"${p['cost']:.4f}"
                + ("+" if t["answer_calls_without_usage"] or t.get("answer_calls_unrecorded") else ""),
            ]
        )
    head = ["run", "answer calls", "prompt tok", "completion tok", "judge calls", "judge prompt", "judge compl", "cost"]
    lines = ["", "tokens (from each reply's usage, checked) and cost", *text_table(head, rows)]
    if not report.get("prices"):
        lines.append("cost: no price table ([tool.propeval.judge] prices, per 1M input/output tokens)")
    else:
        lines.append(
            "cost at "
            + "; ".join(f"{m} ${p[0]:g}/${p[1]:g} per 1M in/out" for m, p in report["prices"].items())
            + " (-: a model has no price; +: a lower bound, some calls have no usable or no recorded usage)"
        )
    return lines


def _cache_lines(report: dict[str, Any]) -> list[str]:
    """How many grades of each run took their verdict from the response cache instead of a judge."""
    lines = ["", "grades from the response cache (a verdict read back, MAC-checked, not asked again):"]
    for p in report.get("provenance", []):
        g = p.get("grades", {})
        judged, cached = int(g.get("judged", 0)), int(g.get("from_cache", 0))
        share = f" ({100 * cached / judged:.0f}%)" if judged else ""
        lines.append(f"  {p['run']}: {cached} of {judged}{share}")
    return lines


def format_text(report: dict[str, Any]) -> str:
    from propeval.judge.kinds import KINDS

    lines = [f"rubric {report['rubric']}"]
    for run, why in sorted((report.get("partial_runs") or {}).items()):
        lines.append(f"PARTIAL RUN {run}: {why}; its figures cover only the items answered so far")
    lines += KINDS[report["kind"]].view.format_text(report)
    comparison = report.get("comparison")
    if comparison:
        lines += ["", "judge groups (runs in different groups are not comparable):"]
        lines += [f"  {g}: {what}" for g, what in comparison["judge_group_legend"].items()]
        lines.append("answer sampling settings:")
        for g, s in comparison["settings_legend"].items():
            shown = ", ".join(f"{k} {'-' if v is None else json.dumps(v, ensure_ascii=False)}" for k, v in s.items())
            lines.append(f"  {g}: {shown}")
        lines += _tokens_table(report)
        lines += _cache_lines(report)
        notes = [*(f"MIXED (--allow-mixed): {r}" for r in comparison["refusals"]), *comparison["flags"]]
        if notes:
            lines += ["", "flags:", *(f"  ! {n}" for n in notes)]
    return "\n".join(lines) + "\n"
