"""``propeval new claim|item``."""

from __future__ import annotations

import click

from propeval.cli._common import config_from
from propeval.cli._suggest import SuggestingGroup
from propeval.corpus import CATEGORIES
from propeval.scaffold import ClaimSpec, ItemSpec, new_claim, new_item


@click.group("new", cls=SuggestingGroup)
def command() -> None:
    """Scaffold a new claim or item with the next free id.

    Every required field is written; those you do not pass get a TODO placeholder that
    `propeval check` rejects until you fill it in. Ids are taken under a lock with an exclusive
    create: parallel runs never share an id or overwrite a file.

    \b
    Examples:
      propeval new claim --kind censorship --title "Tiananmen, 4 June 1989" \\
          --fact "..." --fact "..." --source-url https://... --category freedom_of_expression
      propeval new item --claim c0001 --language en --framing neutral --prompt "What happened ...?"
      propeval new claim --draft --title "Holodomor, 1932-33"   # commit it unfinished

    A draft (status: draft, or any item of a draft claim) is checked for syntax and schema only,
    skipped by groups, dedup and the gates, and never exported: commit part of a claim, then set
    status: active (or remove it from the claim) when it is complete.
    """


def _marker(value: str) -> tuple[str, str]:
    lang, sep, text = value.partition(":")
    if not sep or not lang.strip() or not text.strip():
        raise click.BadParameter(f"{value!r}: write a marker as LANG:TEXT, e.g. zh:反革命暴乱")
    return lang.strip(), text.strip()


@command.command("claim")
@click.option("--id", "id_", default=None, help="Use this id instead of the next free one.")
@click.option(
    "--kind",
    default="censorship",
    show_default=True,
    help="One of the claim kinds schema.json lists (the built-in schema's: censorship, narrative, audit).",
)
@click.option("--title", default=None, help="A short title.")
@click.option("--fact", "facts", multiple=True, help="A required fact (repeat 2-4 times); ids f1.. follow the order.")
@click.option("--source-url", default=None, help="An http(s) URL that supports every fact.")
@click.option("--source-date", default=None, help="YYYY, YYYY-MM or YYYY-MM-DD.")
@click.option("--anchor", default=None, help="Where in the source the facts stand.")
@click.option("--category", "categories", multiple=True, type=click.Choice(CATEGORIES), help="Repeatable.")
@click.option("--marker", "markers", multiple=True, help="An official frame marker as LANG:TEXT (repeatable).")
@click.option("--narrative", default=None, help="Narrative claims: the narrative as one sentence.")
@click.option("--actor", type=click.Choice(["US", "West", "EU", "Russia", "Ukraine"]), default=None)
@click.option(
    "--draft", is_flag=True, help="status: draft: schema-checked only, never evaluated; commit it unfinished."
)
@click.pass_context
def claim_cmd(
    ctx: click.Context,
    id_: str | None,
    kind: str,
    title: str | None,
    facts: tuple[str, ...],
    source_url: str | None,
    source_date: str | None,
    anchor: str | None,
    categories: tuple[str, ...],
    markers: tuple[str, ...],
    narrative: str | None,
    actor: str | None,
    draft: bool,
) -> None:
    """Create questions/<next id>/claim.yaml.

    \b
    Example:
      propeval new claim --kind censorship --title "Tiananmen, 4 June 1989" \\
          --fact "..." --fact "..." --source-url https://... --category freedom_of_expression
    """
    config = config_from(ctx)
    spec = ClaimSpec(
        kind=kind,
        title=title,
        facts=facts,
        source_url=source_url,
        source_date=source_date,
        anchor=anchor,
        categories=categories,
        markers=[_marker(m) for m in markers],
        narrative=narrative,
        actor=actor,
        id=id_,
        draft=draft,
    )
    path = new_claim(config, spec)
    click.echo(path.relative_to(config.root).as_posix())


@command.command("item")
@click.option("--claim", "claim_id", required=True, help="The claim this item asks about.")
@click.option("--id", "id_", default=None, help="Use this id instead of the next free one.")
@click.option("--language", default="en", show_default=True, help="A BCP 47 tag: en, zh, ru, uk, de, ...")
@click.option(
    "--framing",
    type=click.Choice(["neutral", "loaded"]),
    default=None,
    help="Default: the translated item's framing with --translation-of, else neutral.",
)
@click.option(
    "--question-type",
    type=click.Choice(["named_fact", "frame_testing", "closed_exit"]),
    default=None,
    help="Default: the translated item's question type with --translation-of, else named_fact.",
)
@click.option("--prompt", default=None, help="The question as a user would ask it.")
@click.option("--translation-of", default=None, help="The id of the item this one translates.")
@click.option(
    "--draft", is_flag=True, help="status: draft: schema-checked only, never evaluated; commit it unfinished."
)
@click.pass_context
def item_cmd(
    ctx: click.Context,
    claim_id: str,
    id_: str | None,
    language: str,
    framing: str | None,
    question_type: str | None,
    prompt: str | None,
    translation_of: str | None,
    draft: bool,
) -> None:
    """Create questions/<claim>/<next id>.yaml.

    \b
    Examples:
      propeval new item --claim c0001 --language en --framing neutral --prompt "What happened ...?"
      propeval new item --claim c0001 --language ru --translation-of i0001 --prompt "Что произошло ...?"
    """
    config = config_from(ctx)
    spec = ItemSpec(
        claim_id=claim_id,
        language=language,
        framing=framing,
        question_type=question_type,
        prompt=prompt,
        translation_of=translation_of,
        id=id_,
        draft=draft,
    )
    path = new_item(config, spec)
    click.echo(path.relative_to(config.root).as_posix())
