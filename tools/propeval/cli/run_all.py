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

# Problems alike that `run` shows as one line (without --verbose).
COLLAPSE = 3


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
@click.option(
    "--record",
    is_flag=True,
    help="Write this run's dedup result to the ledger (ledger/dedup.json) when it differs from the record; "
    "without it, run changes no tracked file and says what it would record and why.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help=f"List every problem; without it, {COLLAPSE} or more alike (one rule, one message but for each file) "
    "are one line with their count.",
)
@click.pass_context
def command(ctx: click.Context, report_path: Path, skip: tuple[str, ...], record: bool, verbose: bool) -> None:
    """The main job: every check and gate over the whole corpus, then the report.

    \b
    Steps, in order: check, groups, dedup (with --record, written to ledger/dedup.json for the
    report and card), answerability (ledger), judge (ledger, every rubric), difficulty (ledger
    bands), stats, report (HTML). Nothing contacts a network: both gates are verified offline
    from ledger/, and no tracked file changes unless --record is given. Each step's problems are
    printed (problems alike as one line with their count; --verbose lists each), then one
    summary table (the shape of `propeval ci`'s), what its words mean, and where the report is.
    Exit code: the worst step's (0 clean, 1 problems, 3 tool failure).

    \b
    Examples:
      propeval run
      propeval run --verbose
      propeval run --record          # a maintainer: record the dedup result, then commit it
      propeval run --report /tmp/corpus-report.html
      propeval run --skip dedup
    """
    ws = workspace_from(ctx)
    if not report_path.is_absolute():
        report_path = ws.root / report_path
    result = run_main_job(ws, report_path, skip=skip, record=record)
    made = any(s.name == "report" and s.status in ("ok", "advisory") for s in result.steps)

    def view(out: TextIO, styled: bool) -> None:
        out.write(summary_table(result.steps))
        if made:
            out.write(f"report: {report_path}\n")
        out.write(f"run: exit {result.exit_code}\n")

    sections = [Section(s.problems, [f"{s.name}: {n}" for n in s.notes]) for s in result.steps]
    report = Report(
        sections=sections,
        view=view,
        collapse=0 if verbose else COLLAPSE,
        collapse_hint="" if verbose else "--verbose lists each",
    )
    write(report, "text", sys.stdout)
    ctx.exit(result.exit_code)
