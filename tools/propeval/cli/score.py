"""``propeval score``."""

from __future__ import annotations

import json

import click

from propeval.cli._common import config_from
from propeval.cli._judge import settings_from


@click.command("score")
@click.argument("runs", nargs=-1, required=True)
@click.option("--rubric", default="facts-v1", show_default=True, help="Which grades to read: grades-<rubric>.jsonl.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
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
    if fmt == "json":
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(format_text(report), nl=False)
