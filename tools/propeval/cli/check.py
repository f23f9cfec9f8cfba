"""``propeval check``."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.checker import check_corpus
from propeval.checks import CHECKS
from propeval.cli._common import changed_since_option, emit, format_option, workspace_from
from propeval.rules import with_rules


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@changed_since_option
@format_option
@click.option(
    "--rule",
    "rules",
    multiple=True,
    type=click.Choice(sorted(CHECKS)),
    help="Run only this rule (repeatable). Default: every rule.",
)
@click.option(
    "--fix",
    is_flag=True,
    help="First apply the safe fixes in place (language tags to canonical BCP 47), then check.",
)
@click.pass_context
def command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    changed_since: str | None,
    fmt: str,
    rules: tuple[str, ...],
    fix: bool,
) -> None:
    """Validate claims and items against schema.json and the cross-file rules.

    PATHS narrows what is reported (files or folders); the whole corpus is always loaded, since
    ids and sources are checked across files. With no PATHS, everything is checked.

    \b
    Rules:
      {rules}

    \b
    Examples:
      propeval check
      propeval check questions/c0001
      propeval check --changed-since origin/main --format github
      propeval check --format sarif > propeval.sarif   # for GitHub code scanning
      propeval check --rule hidden-text questions/c0001
      propeval check --fix              # ru_RU -> ru-RU, RU -> ru; then check

    --fix changes only what cannot change an item's meaning (so far: language tags), each value
    where it stands: comments, quoting and the rest of the file stay byte for byte. It lists each
    fix on stderr; what it cannot fix is reported by the check that follows.

    Every message is cut to a bounded length (the cut is marked), whatever a file holds.
    """
    ws = workspace_from(ctx)
    if fix:
        from propeval.checker import selected_paths
        from propeval.fixes import fix_corpus
        from propeval.workspace import Workspace

        fixed = fix_corpus(ws, selected_paths(ws.config, paths) if paths else None)
        for f in fixed.applied:
            click.echo(f"fixed: {f.describe()}", err=True)
        for why in fixed.skipped:
            click.echo(why, err=True)
        if fixed.applied:
            ws = Workspace(ws.config)  # the fixed files, read again
    result = check_corpus(ws, paths, changed_since=changed_since, rules=rules or None)
    emit(result.problems, fmt, result.files_checked, result.notes)
    ctx.exit(result.exit_code)


# The rule list comes from propeval.rules, the one registry of rule ids.
command.help = with_rules(command.help or "", "check")
