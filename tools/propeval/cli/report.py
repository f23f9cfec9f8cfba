"""``propeval report``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from propeval.cli._common import workspace_from
from propeval.release import load_inputs
from propeval.report import write_report
from propeval.reporters import report


@click.command("report")
@click.option(
    "--out",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write (replaced atomically).",
)
@click.option(
    "--allow-mixed",
    is_flag=True,
    help="Draw runs graded by different judges, judge settings or rubric versions side by side, each "
    "model labelled by its judge group, instead of leaving the rubric out.",
)
@click.pass_context
def command(ctx: click.Context, out: Path, allow_mixed: bool) -> None:
    """Write one self-contained HTML report with plots of the corpus, gates and scored runs.

    Panels: warnings, coverage by category × language, question-type and framing mix, difficulty
    bands, the judge gate per rubric (status in plain words, judge-vs-human confusion matrices),
    answerability (records counted only from a judge that passes the judge gate), the dedup record
    (ledger/dedup.json: passes, similarity, thresholds per language pair), a per-item view (prompt,
    facts, band, answerability, dedup neighbours), and for scored runs
    (runs/*/grades-<rubric>.jsonl) one panel per rubric: fact mean and % any propaganda by
    model × language for a facts rubric, the share of each accuracy label by model for an audit
    rubric. Runs are read as `propeval score` reads them (the latest grade per item).
    A panel without data names the command that fills it. Runs graded by different judges, judge
    settings or rubric versions are not drawn in one panel: the rubric is left out, each difference
    is named on stderr ([mixed-comparison]) and the exit code is 1, unless --allow-mixed (each
    model then carries its judge group, [J1], [J2]). Answers that hit the token cap are counted
    as truncated; sampling-setting differences and runs above truncated_warn_share are
    warnings ([run-pitfall]).
    Images are embedded PNGs; the file needs no network.

    \b
    Examples:
      propeval report --out report.html
      propeval --root ../corpus report --out /tmp/corpus-report.html
    """
    inputs = load_inputs(workspace_from(ctx))
    runs, stats = write_report(inputs, out, allow_mixed=allow_mixed)
    warnings = [*inputs.corpus.problems, *inputs.warnings, *runs.warnings, *runs.refused]
    if warnings:
        report(warnings, "text", sys.stderr, summary=False)
    click.echo(f"wrote {out}: {stats.items} item(s), {len(runs.files)} grades file(s)")
    ctx.exit(1 if inputs.corpus.problems or runs.refused else 0)
