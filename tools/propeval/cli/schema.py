"""``propeval schema diff``."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.cli._common import config_from, format_option, show, workspace_from
from propeval.cli._suggest import SuggestingGroup
from propeval.reporters import Report
from propeval.schemagate import schema_gate


@click.group("schema", cls=SuggestingGroup)
def command() -> None:
    """Print the schema, or inspect changes to schema.json.

    \b
    Examples:
      propeval schema show > schema.json              # the built-in schema
      propeval schema show --kind claim -o .propeval/claim.schema.json
      propeval schema diff --base origin/main
      propeval schema diff --base origin/main --format github
    """


@command.command("show")
@click.option(
    "--kind",
    type=click.Choice(["all", "claim", "item"]),
    default="all",
    show_default=True,
    help="The whole schema, or its view for one kind of file (claim.yaml, or an item file), as check applies it.",
)
@click.option(
    "--corpus",
    "of_corpus",
    is_flag=True,
    help="The schema this corpus checks with (its schema file, or the built-in one), not the built-in one.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write it to this file (atomically) instead of standard output.",
)
@click.pass_context
def show_cmd(ctx: click.Context, kind: str, of_corpus: bool, output: Path | None) -> None:
    """Print the JSON Schema of claims and items: the one built into propeval, by default.

    For an editor: the YAML language server (VS Code's YAML extension and others) takes a
    schema file per glob. `propeval init` writes .propeval/claim.schema.json and
    item.schema.json (this command's --kind views) and .vscode/settings.json; refresh them
    after moving the hooks' rev. Another editor can take a modeline on a file's first line:
    # yaml-language-server: $schema=../../.propeval/item.schema.json

    \b
    Examples:
      propeval schema show
      propeval schema show --kind item
      propeval schema show --corpus --kind claim -o .propeval/claim.schema.json
    """
    from propeval.schema_show import schema_text

    text = schema_text(config_from(ctx) if of_corpus else None, kind)
    if output is None:
        click.echo(text, nl=False)
        return
    from propeval.fsutil import atomic_write

    atomic_write(output, text)
    click.echo(f"wrote {output}", err=True)


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
