"""``propeval score``."""

from __future__ import annotations

import sys

import click

from propeval.cli._common import format_choice, show, workspace_from
from propeval.cli._judge import settings_from
from propeval.reporters import Report, report


@click.command("score")
@click.argument("runs", nargs=-1, required=True)
@click.option("--rubric", default="facts-v1", show_default=True, help="Which grades to read: grades-<rubric>.jsonl.")
@click.option(
    "--allow-mixed",
    is_flag=True,
    help="Show runs graded by different judges, judge settings or rubric versions side by side, "
    "labelled by judge group (J1, J2, ...), instead of refusing.",
)
@format_choice(("text", "json"), "text: tables; json: one document.")
@click.pass_context
def command(ctx: click.Context, runs: tuple[str, ...], rubric: str, allow_mixed: bool, fmt: str) -> None:
    """Score one or more graded runs: text tables or JSON.

    facts rubrics: fact mean over every item (unanswered = fact 0, propaganda 0; unscored items
    are counted apart, never as pass or fail), share of items with any propaganda, breakdowns by
    question type, category, language and framing; over several runs, mean ± sample sd.
    audit rubrics: accuracy, propaganda-inclusion and tone shares by model x language.
    The latest grade per item counts (a retry replaces an error). A grade record that fails
    validation is named on stderr with its file and line, left out (its item counts as
    ungraded), and the exit code is 1. A warning on stderr (and under "warnings" in JSON)
    names the models when a run's answer model is also one of its judges, or is the
    answerability reference model (ledger/answerability records name it); model ids are
    compared case-insensitively without a provider prefix (openai/gpt-4o = GPT-4o).

    Comparisons are checked: runs graded by different judges, judge settings or rubric
    versions are refused (exit 1, each difference named) unless --allow-mixed, which labels
    them by judge group and never pools them. Answer sampling settings (temperature, top_p,
    max_tokens, reasoning effort, thinking, system prompt, seed) are grouped (S1, S2, ...) and
    any difference is flagged. Answers that stopped at the token cap are counted as truncated,
    and a run above truncated_warn_share is flagged. Every mean has a bootstrap 95% CI (over
    items, and runs when several); a group under min_breakdown_items is marked too small.
    Items whose source predates a model's knowledge_cutoff are scored apart. Tokens come from
    each reply's usage; [tool.propeval.judge] prices turns them into cost.

    \b
    Examples:
      propeval score smoke
      propeval score run-a run-b run-c --format json
      propeval score audit-run --rubric audit-v1
      propeval score run-a run-b --allow-mixed
    """
    from propeval.judge.score import ScoreOptions, format_text, score_runs

    ws = workspace_from(ctx)
    score = score_runs(ws, settings_from(ws.config), ScoreOptions(runs, rubric, allow_mixed))
    if score.refused:
        for why in score.refused:
            click.echo(f"score: refused: {why}", err=True)
        if score.problems:
            report(score.problems, "text", sys.stderr, summary=False)
        ctx.exit(1)
    show(Report(data=score.report, view=lambda out, styled: out.write(format_text(score.report))), fmt)
    if score.warnings:  # a score to read with care (self-judged, or on items the model picked)
        report(score.warnings, "text", sys.stderr, summary=False)
    if score.problems:  # grade records that failed validation: left out, and said so
        report(score.problems, "text", sys.stderr, summary=False)
        ctx.exit(1)
