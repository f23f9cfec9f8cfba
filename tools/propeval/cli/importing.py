"""``propeval import``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from propeval.cli._common import config_from, format_option, show
from propeval.dedup.result import PASSES as PASS_CHOICES
from propeval.reporters import Report

if TYPE_CHECKING:
    from propeval.ingest import ImportResult


@click.command("import")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--map",
    "maps",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Read FIELD from the input's COLUMN (repeatable), e.g. --map prompt=question.",
)
@click.option(
    "--mapping",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A YAML file with `columns:` (FIELD: COLUMN) and `defaults:` (FIELD: value, for rows without it).",
)
@click.option(
    "--language",
    default=None,
    help="The language of rows without a language column: a BCP 47 tag, or `auto` (from the script most "
    "of a prompt's letters are in: Han -> zh (ja with kana), Hangul -> ko, Cyrillic -> ru/uk, ASCII Latin -> en; "
    "anything else is an error).",
)
@click.option(
    "--kind",
    default="censorship",
    show_default=True,
    help="The kind of claims whose rows have no kind column: one that schema.json lists.",
)
@click.option("--dry-run", is_flag=True, help="Read, plan and validate; write nothing.")
@click.option(
    "--pass",
    "passes",
    multiple=True,
    type=click.Choice(PASS_CHOICES),
    help="Run only this dedup pass against the corpus (repeatable). Default: all three.",
)
@click.option(
    "--no-dedup",
    is_flag=True,
    help="Skip dedup's lexical and semantic passes (check, groups and the exact pass still run).",
)
@click.option(
    "--allow-duplicates",
    is_flag=True,
    help="Import rows whose text is an exact duplicate of corpus text (dedup's exact pass); they block by default.",
)
@click.option("--strict", is_flag=True, help="groups and dedup errors block the import too (check errors always do).")
@format_option
@click.pass_context
def command(
    ctx: click.Context,
    source: Path,
    maps: tuple[str, ...],
    mapping: Path | None,
    language: str | None,
    kind: str,
    dry_run: bool,
    passes: tuple[str, ...],
    no_dedup: bool,
    allow_duplicates: bool,
    strict: bool,
    fmt: str,
) -> None:
    """Import claims and items from a release folder, or from a CSV, TSV, JSONL, JSON or text file.

    \b
    SOURCE is one of:
      a release folder (`propeval export` wrote it): ids, claims, facts and markers are kept as
          they are, every file is checked against SHA256SUMS, the rubrics are copied; retired
          items come back as retired files that say their prompt is not in the release.
          Export -> import into an empty corpus -> export gives byte-identical items.jsonl,
          tombstones.jsonl and rubrics.
      a .jsonl, .json (an array of rows), .csv or .tsv file in the Censorship & Propaganda
          Eval release layout, or mapped onto it with --map / --mapping; or a .txt file, one
          prompt per line. New ids are given (the row's own `id` is kept in the item's notes,
          never used as a path).

    \b
    \b
    The CPE fields and where they go (schema.json):
      prompt                  item prompt
      required_facts          claim facts f1..fN (a list, a JSON array, or one per line)
      question_description    named fact / frame testing / closed exit -> item question_type;
                              framing: loaded for frame testing, else neutral (or a framing column)
      categories              the seven value areas ("freedom of expression", ...) -> category ids
      source_url, source_date, anchor   claim fields
      official_frame_markers  claim markers, each in its row's language
      id                      kept in the item's notes
    Extra fields: language, framing, question_type, claim, title, kind, narrative, actor, and
    translation_of (the id of the row this row translates, in this input or imported from it
    before). A --mapping file's `defaults:` sets any field but prompt, id and translation_of for
    rows that lack it (lists for required_facts, categories, official_frame_markers): a .txt
    of prompts plus their facts, source, anchor and question description under defaults: is one
    claim. Rows group into claims by the `claim` column when mapped, else by source URL and
    anchor; rows of one claim must agree on facts, source, anchor and date (categories and
    markers are merged). Without a title, a claim's title is its anchor and the source's host.

    \b
    What no row gives (facts, source, anchor, question type, language) is said at once, before
    anything runs: a set of prompts without facts cannot become a corpus, by design; `propeval
    overlap FILE` says which of them the corpus already has. A mistake many rows repeat is one
    line with the rows it is in.

    Every file goes through `propeval new`'s writer and the strict loader. The new files are
    staged beside the corpus, where check, groups and dedup run on the corpus as it would be;
    their problems are reported at the input's file:row:column. Check errors, exact duplicates
    of corpus text (unless --allow-duplicates), and with --strict groups and dedup errors leave
    the corpus as it was; otherwise each new claim folder is renamed into place, the renames
    listed in a journal first: an import killed half-way is finished by the next `propeval
    import`. Importing the same input again skips the rows already imported (by their id, or
    without one their content; a release's files by id and content) and says how many; a row
    whose content changed since is an error (import-changed). Exit 0 when imported cleanly (or
    nothing was new), 1 when problems were found (nothing is written if any of them blocks),
    2 on a usage error.

    \b
    Examples:
      propeval import dist/release                       # a release, e.g. into a new corpus
      propeval import cpe.jsonl --language auto --dry-run
      propeval import prompts.txt --mapping defaults.yaml --language auto
      propeval import rows.json --map prompt=question --map translation_of=source_id
      propeval import sheet.csv --map prompt=question --map required_facts=facts --language en
      propeval import sheet.csv --mapping mapping.yaml --pass exact --format json
    """
    # Over 80 lines only because the docstring is the command's --help; the code is about 40.
    from propeval.ingest import ColumnMap, Options, Validation, import_source, load_mapping, parse_pairs

    config = config_from(ctx)
    cmap = load_mapping(mapping, maps) if mapping is not None else ColumnMap(parse_pairs(maps, "--map"))
    from propeval.scaffold import check_kind, check_language

    if language not in (None, "auto"):
        check_language(language, "--language")
    check_kind(config, kind, "--kind")
    validation = Validation(
        dedup_passes=() if no_dedup else (passes or PASS_CHOICES), strict=strict, allow_duplicates=allow_duplicates
    )
    from propeval.progress import phases

    with phases("import", enabled=fmt != "json") as progress:
        result = import_source(
            config,
            source,
            Options(mapping=cmap, language=language, kind=kind),
            dry_run=dry_run,
            validation=validation,
            announce=lambda m: click.echo(f"propeval import: {m}", err=True),
            progress=progress,
        )
    summary = _summary(result, dry_run)

    def view(out: TextIO, styled: bool) -> None:
        if result.claims:
            out.write(f"claims: {_span(result.claims)}\n")
        if result.items:
            out.write(f"items: {_span(result.items)}\n")

    show(
        Report(
            problems=result.problems,
            notes=[*result.notes, summary],
            data={**result.to_dict(), "summary": summary},
            view=view,
            summary=summary,
            files_checked=result.rows,
        ),
        fmt,
    )
    ctx.exit(result.exit_code)


def _summary(result: ImportResult, dry_run: bool) -> str:
    if result.written:
        return (
            f"imported {len(result.items)} item(s) in {len(result.claims)} claim(s)"
            + (f" and {len(result.rubrics)} rubric(s)" if result.rubrics else "")
            + f" from {result.rows} row(s) of {result.source}"
            + (f"; {result.skipped} row(s) already imported, skipped" if result.skipped else "")
        )
    if not result.errors and not result.items and not result.rubrics and result.skipped:
        return f"nothing new in {result.source}: {result.skipped} row(s) already imported, skipped"
    if result.errors or not dry_run:
        return f"nothing imported from {result.source}: {len(result.errors)} error(s); fix them and run it again"
    return f"dry run: {len(result.items)} item(s) in {len(result.claims)} claim(s) would be imported; nothing written"


def _span(ids: list[str]) -> str:
    return f"{ids[0]}..{ids[-1]} ({len(ids)})" if len(ids) > 3 else ", ".join(ids)
