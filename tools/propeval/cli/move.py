"""``propeval move``."""

from __future__ import annotations

import click

from propeval.cli._common import workspace_from


@click.command("move")
@click.argument("item")
@click.option("--to-claim", "to_claim", required=True, metavar="CLAIM", help="The claim the item joins.")
@click.option(
    "--translation-of",
    "translation_of",
    default=None,
    metavar="ITEM",
    help="The item of that claim it translates (another language, same framing and question type).",
)
@click.option(
    "--framing",
    type=click.Choice(["neutral", "loaded"]),
    default=None,
    help="Set the item's framing as it moves (a translation takes its source's).",
)
@click.option(
    "--question-type",
    "question_type",
    type=click.Choice(["named_fact", "frame_testing", "closed_exit"]),
    default=None,
    help="Set the item's question type as it moves (a translation takes its source's).",
)
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def command(
    ctx: click.Context,
    item: str,
    to_claim: str,
    translation_of: str | None,
    framing: str | None,
    question_type: str | None,
    dry_run: bool,
) -> None:
    """Move an item into another claim, keeping its id (e.g. as a translation of an item there).

    The file moves to the claim's folder with claim_id (and translation_of) changed, edited
    round-trip; a translation_of into its old claim is removed. The item's answerability record
    keeps its name and goes stale (the item is now asked against the other claim's facts).

    A move that would break a rule is refused, naming it: a translation in the same language
    (translation), another framing or question type than its source (groups-translation-framing),
    a second item of one language, framing and question type in the claim
    (groups-conflict: retire one instead), or items of the old claim that translate it
    (groups-translation-claim).

    \b
    Examples:
      propeval move i0042 --to-claim c0001 --translation-of i0001
      propeval move i0042 --to-claim c0001 --translation-of i0001 --question-type frame_testing
      propeval move i0042 --to-claim c0001 --dry-run
    """
    from propeval.curation import move

    result = move(
        workspace_from(ctx),
        item,
        to_claim=to_claim,
        translation_of=translation_of,
        dry_run=dry_run,
        framing=framing,
        question_type=question_type,
    )
    for line in result.lines():
        click.echo(line)
