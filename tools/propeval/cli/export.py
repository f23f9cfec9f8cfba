"""``propeval export``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from propeval.cli._common import format_option, show, workspace_from
from propeval.release import export_release
from propeval.reporters import Report, report


@click.command("export")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="The release folder: new, empty, or an earlier release (replaced whole).",
)
@format_option
@click.pass_context
def command(ctx: click.Context, out: Path, fmt: str) -> None:
    """Write a deterministic release: items.jsonl, tombstones.jsonl, rubrics/, README.md, SHA256SUMS.

    The corpus is checked first; any check error stops the export before anything is written.
    The release is built beside OUT and renamed into place, so OUT never holds half a release;
    a SIGTERM or ^C undoes the build, and what a kill -9 left beside OUT is removed by the next
    export (which says so).
    Two exports of the same commit are byte-identical: rows are sorted by id, JSON keys are
    sorted, and the only provenance is the git commit.

    \b
    Examples:
      propeval export --out dist/release
      cd dist/release && sha256sum -c SHA256SUMS
    """
    result = export_release(workspace_from(ctx), out)
    if result.exit_code:
        report(result.problems, fmt, sys.stdout, files_checked=0, summary=False)
        click.echo(f"export stopped: fix the errors above, then run it again; {out} was not written", err=True)
        ctx.exit(1)
    assert result.stats is not None
    wrote = (
        f"wrote {out}: {result.stats.items} item(s), {result.stats.retired} tombstone(s), {len(result.files)} file(s)"
    )
    # Warnings (a check warning does not stop an export) and the line that says what was written,
    # in the chosen format: a json reader gets one document, never a bare "wrote" line.
    notes = [*result.notes, wrote]
    show(Report(problems=result.problems, notes=notes, files_checked=len(result.files), summary=wrote), fmt)
