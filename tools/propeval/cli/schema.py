"""``propeval schema diff``."""

from __future__ import annotations

import click

from propeval.cli._common import format_option, show, workspace_from
from propeval.reporters import Report
from propeval.schemadiff import schema_gate


@click.group("schema")
def command() -> None:
    """Inspect changes to schema.json.

    \b
    Examples:
      propeval schema diff --base origin/main
      propeval schema diff --base origin/main --format github
    """


@command.command("diff")
@click.option(
    "--base",
    "base_ref",
    metavar="REF",
    required=True,
    help="Compare schema.json at the merge base with REF (a branch, tag or commit) against the working tree.",
)
@format_option
@click.pass_context
def diff_cmd(ctx: click.Context, base_ref: str, fmt: str) -> None:
    """Classify every change to schema.json since REF and gate the version bump.

    Each change is reported at its line:col in schema.json as [schema-breaking], [schema-additive]
    or [schema-docs]. The command fails (exit 1) when schema_version was not bumped to match
    (major for breaking, minor for additive, patch for description-only changes), when
    CHANGELOG.md has no entry for the new version, or when a claim or item no longer validates
    (ship a migration and run `propeval migrate`).

    \b
    Examples:
      propeval schema diff --base origin/main
      propeval schema diff --base v1.0.0 --format json
    \b
    Output ends with a summary such as:
      breaking: 2, additive: 1, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)
    """
    result = schema_gate(workspace_from(ctx), base_ref)
    # The summary goes last, where a reader of a CI log looks; json keeps it among the notes.
    footer = [f"{len(result.errors)} error(s); the schema change cannot merge until they are fixed"]
    rep = Report(
        problems=result.problems,
        notes=result.notes,
        files_checked=result.files_checked,
        summary=result.summary,
        title="schema diff",
        footer=footer if result.errors else (),
    )
    show(rep, fmt)
    ctx.exit(result.exit_code)
