"""``propeval renumber``."""

from __future__ import annotations

import click

from propeval.cli._common import workspace_from
from propeval.renumber import renumber


@click.command("renumber")
@click.argument("target")
@click.option(
    "--to", "to", default=None, metavar="ID", help="The new id. Default: the next free one (here and at REF)."
)
@click.option(
    "--base",
    metavar="REF",
    default=None,
    help="The branch this one merges into: the new id is free there too, and of two files with the id, "
    "the one REF lacks is renumbered.",
)
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def command(ctx: click.Context, target: str, to: str | None, base: str | None, dry_run: bool) -> None:
    """Give an item or claim a new id, with every reference to it (repairs an id collision).

    TARGET is an item or claim id, or a path: an item file or a claim folder. An item's file is
    renamed and its `id` changed; `translation_of` in its claim's other items, its ledger record
    (file name, subject, bindings) and dedup allowlist entries follow. A claim's folder moves, with
    every item's `claim_id`, their ledger records and the allowlist's fact ids. YAML is edited
    round-trip, so comments and layout stay; nothing is written unless every file can be.

    \b
    Examples:
      propeval renumber questions/c0002/i0172.yaml --base origin/main
      propeval renumber i0172 --to i0180
      propeval renumber questions/c0012 --base origin/main --dry-run
    """
    result = renumber(workspace_from(ctx), target, to=to, base=base, dry_run=dry_run)
    verb = "would move" if dry_run else "moved"
    for old, new in result.moved:
        click.echo(f"{verb} {old} -> {new}")
    for rel in result.edited:
        click.echo(f"{'would edit' if dry_run else 'edited'} {rel}")
    for note in result.notes:
        click.echo(f"note: {note}")
    done = "would renumber" if dry_run else "renumbered"
    click.echo(f"{done} {result.kind} {result.old} -> {result.new}")
