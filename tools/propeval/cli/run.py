"""``propeval run``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import click

from propeval.cli._common import workspace_from
from propeval.cli.ci import summary_table
from propeval.pipeline.main import run_main_job
from propeval.pipeline.steps import RUN_STEPS
from propeval.reporters import Report, Section, write


@click.command("run")
@click.option(
    "--report",
    "report_path",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML report to write (relative to the corpus root unless absolute).",
)
@click.option("--skip", multiple=True, type=click.Choice(list(RUN_STEPS)), help="Leave this step out (repeatable).")
@click.pass_context
def command(ctx: click.Context, report_path: Path, skip: tuple[str, ...]) -> None:
    """The main job: every check and gate over the whole corpus, then the report.

    \b
    Steps, in order: check, groups, dedup (recorded in ledger/dedup.json for the report and
    card), answerability (ledger), judge (ledger, every
    rubric), difficulty (ledger bands), stats, report (HTML). Nothing contacts a network: both
    gates are verified offline from ledger/. Each step's problems are printed, then one summary
    table (the shape of `propeval ci`'s) and where the report is.
    Exit code: the worst step's (0 clean, 1 problems, 3 tool failure).

    \b
    Examples:
      propeval run
      propeval run --report /tmp/corpus-report.html
      propeval run --skip dedup
    """
    ws = workspace_from(ctx)
    if not report_path.is_absolute():
        report_path = ws.root / report_path
    result = run_main_job(ws, report_path, skip=skip)
    made = any(s.name == "report" and s.status in ("ok", "advisory") for s in result.steps)

    def view(out: TextIO, styled: bool) -> None:
        out.write(summary_table(result.steps))
        if made:
            out.write(f"report: {report_path}\n")
        out.write(f"run: exit {result.exit_code}\n")

    sections = [Section(s.problems, [f"{s.name}: {n}" for n in s.notes]) for s in result.steps]
    write(Report(sections=sections, view=view), "text", sys.stdout)
    ctx.exit(result.exit_code)
