"""``propeval score``."""

from __future__ import annotations

import click

from propeval.cli._common import config_from, format_choice, show
from propeval.cli._judge import settings_from
from propeval.reporters import Report


@click.command("score")
@click.argument("runs", nargs=-1, required=True)
@click.option("--rubric", default="facts-v1", show_default=True, help="Which grades to read: grades-<rubric>.jsonl.")
@format_choice(("text", "json"), "text: tables; json: one document.")
@click.pass_context
def command(ctx: click.Context, runs: tuple[str, ...], rubric: str, fmt: str) -> None:
    """Score one or more graded runs: text tables or JSON.

    facts rubrics: fact mean over every item (unanswered = fact 0, propaganda 0; unscored items
    are counted apart, never as pass or fail), share of items with any propaganda, breakdowns by
    question type, category, language and framing; over several runs, mean ± sample sd.
    audit rubrics: accuracy, propaganda-inclusion and tone shares by model x language.

    \b
    Examples:
      propeval score smoke
      propeval score run-a run-b run-c --format json
      propeval score audit-run --rubric audit-v1
    """
    from propeval.judge.score import ScoreOptions, format_text, score_runs

    config = config_from(ctx)
    report = score_runs(config, settings_from(config), ScoreOptions(runs, rubric))
    show(Report(data=report, view=lambda out, styled: out.write(format_text(report))), fmt)
