"""``propeval overlap``."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import click

from propeval.cli._common import config_from, format_option, show
from propeval.dedup.result import PASSES as PASS_CHOICES
from propeval.reporters import Report, printable


@click.command("overlap")
@click.argument("external", type=click.Path(exists=True, path_type=Path))
@click.option("--text-field", default="prompt", show_default=True, help="The field (or CSV column) with the text.")
@click.option("--language-field", default="language", show_default=True, help="The field with a row's language.")
@click.option("--id-field", default="id", show_default=True, help="The field with a row's id (else its row number).")
@click.option(
    "--language",
    default="en",
    show_default=True,
    help="The language of rows without a language field: a BCP 47 tag, or `auto` (each text's from the script "
    "most of its letters are in, as import guesses it; und where it names none).",
)
@click.option(
    "--pass",
    "passes",
    multiple=True,
    type=click.Choice(PASS_CHOICES),
    help="Run only this pass (repeatable). Default: exact, lexical and semantic.",
)
@format_option
@click.pass_context
def command(
    ctx: click.Context,
    external: Path,
    text_field: str,
    language_field: str,
    id_field: str,
    language: str,
    passes: tuple[str, ...],
    fmt: str,
) -> None:
    """Find corpus items that are near-duplicates of an external dataset's items.

    EXTERNAL is a .jsonl, .json (an array of rows, or of texts), .csv or .tsv file (the text in
    --text-field), a .txt file (one text per line), or a release folder (its items.jsonl).
    This is the tool for a set of prompts without facts: such a set cannot be imported as
    claims, but overlap says which of its prompts the corpus already has.

    Every active item's prompt is compared with every external text by dedup's passes, with
    its thresholds and explanations ([tool.propeval.dedup]): exact (normalised text),
    semantic (embedding cosine, faiss nearest external neighbours of each item in each
    external language, flagged at the language pair's threshold) and lexical (rapidfuzz over
    pairs that share a rare bigram or are semantic neighbours).

    Each match names our item, the external row (file:line and id), every pass's score, the
    threshold and where it comes from, and the terms the two share or do not. The summary says
    how many external texts were read and embedded per language, and which were left out and
    why, so "none of ours is in X" comes with its evidence. Exit 1 when anything matches (or
    the input cannot be read), 0 when nothing does.

    \b
    Examples:
      propeval overlap truthfulqa.csv --text-field Question
      propeval overlap prompts.txt --language auto
      propeval overlap other-release/ --format json
      propeval overlap rows.jsonl --text-field question --language-field lang --pass exact
    """
    from propeval.extras import require_dedup

    config = config_from(ctx)
    settings = config.settings.dedup
    require_dedup(settings.backend, settings.second_model, "overlap")
    from propeval.ingest.overlap import ExternalSpec, find_overlap
    from propeval.progress import phases
    from propeval.scaffold import check_language

    if language != "auto":
        check_language(language, "--language")
    with phases("overlap", enabled=fmt != "json") as progress:
        result = find_overlap(
            config,
            external,
            ExternalSpec(text_field, language_field, id_field, language),
            passes=passes or PASS_CHOICES,
            announce=lambda m: click.echo(f"propeval overlap: {m}", err=True),
            progress=progress,
        )
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items() if k in result.passes)
    summary = (
        f"{len(result.matches)} match(es) ({counts}) between {result.corpus_items} corpus item(s) and "
        f"{result.read} external text(s) of {result.external}"
    )
    if result.vetoed:
        summary += (
            f"; {len(result.vetoed)} pair(s) at or above their threshold not matched, as they write different numbers "
            "or name different people or places (json: vetoed)"
        )
    if result.uncalibrated:
        summary += f"; UNCALIBRATED language pairs (a conservative threshold applies): {', '.join(result.uncalibrated)}"
    notes = []
    for side in ("corpus", "external"):
        if side in result.embedded:
            notes.append(f"embedded ({side}): " + (_langs(result.embedded[side]) or "none"))
        if side in result.not_embedded:
            notes.append(f"not embedded ({side}): {_langs(result.not_embedded[side])}; {result.not_embedded_reason}")
    for pair, t in sorted(result.thresholds.items()):
        notes.append(f"semantic threshold {pair}: {t['value']:.3f} ({t['source']})")
    if result.encoder:
        notes.append(f"encoder: {result.encoder}")

    def view(out: TextIO, styled: bool) -> None:
        for p in result.matches:
            theirs = printable(f"{p.b.path}:{p.b.line}: {p.b.text}")
            out.write(f"  ours  {p.a.id}: {printable(p.a.text)}\n  theirs {theirs}\n")

    show(
        Report(
            problems=result.problems,
            notes=[*result.notes, *notes, summary],
            data={**result.to_dict(), "summary": summary},
            view=view if result.matches else None,
            summary=summary,
        ),
        fmt,
    )
    ctx.exit(result.exit_code)


def _langs(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())
