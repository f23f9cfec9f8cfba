"""``propeval retire``."""

from __future__ import annotations

import click

from propeval.cli._common import workspace_from


@click.command("retire")
@click.argument("item")
@click.option("--reason", required=True, help="Why the item leaves the corpus (kept as retired_reason).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def command(ctx: click.Context, item: str, reason: str, dry_run: bool) -> None:
    """Take an item out of the corpus: status: retired, with the reason.

    The file and its id stay (ids are never reused); the item is no longer compared, gated,
    evaluated or exported, and a release lists it as a tombstone. The YAML is edited round-trip,
    so comments and layout stay. Its translations stay active (the output names them).

    \b
    Examples:
      propeval retire i0042 --reason "duplicate of i0007 (same question, same facts)"
      propeval retire i0042 --reason "asks two things at once" --dry-run
    """
    from propeval.curation import retire

    result = retire(workspace_from(ctx), item, reason=reason, dry_run=dry_run)
    for line in result.lines():
        click.echo(line)
