"""``propeval check``."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.checker import check_corpus
from propeval.checks import CHECKS
from propeval.cli._common import changed_since_option, config_from, emit, format_option
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
@click.pass_context
def command(
    ctx: click.Context, paths: tuple[Path, ...], changed_since: str | None, fmt: str, rules: tuple[str, ...]
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

    Every message is cut to a bounded length (the cut is marked), whatever a file holds.
    """
    config = config_from(ctx)
    result = check_corpus(config, paths, changed_since=changed_since, rules=rules or None)
    emit(result.problems, fmt, result.files_checked, result.notes)
    ctx.exit(result.exit_code)


# The rule list comes from propeval.rules, the one registry of rule ids.
command.help = with_rules(command.help or "", "check")
