"""``propeval groups``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import click

from propeval.cli._common import changed_since_option, emit, format_option, show, workspace_from
from propeval.cli._progress import embedding_progress
from propeval.errors import UsageError
from propeval.groups import ClaimMatrix, check_groups
from propeval.reporters import Report
from propeval.rules import with_rules

ALL = "*"


@click.command("groups")
@click.argument("claims", nargs=-1, metavar="[CLAIM|PATH]...")
@changed_since_option
@format_option
@click.option(
    "--matrix",
    "matrix",
    is_flag=False,
    flag_value=ALL,
    default=None,
    metavar="[CLAIM]",
    help="Print the completeness table (languages x framings x question types) of CLAIM, "
    "or of every claim checked; then exit 0.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also print the notes that are the same on every run (a rule skipped by configuration); "
    "text shows them once per terminal session, json always.",
)
@click.pass_context
def command(
    ctx: click.Context, claims: tuple[str, ...], changed_since: str | None, fmt: str, matrix: str | None, verbose: bool
) -> None:
    """Check claim framing groups: complete across languages, framings consistent, translations sound.

    A group is all the items of one claim. Each language the claim's kind must cover
    ([tool.propeval.groups.languages]) has every framing and question type the claim uses; each
    loaded item has a neutral control; neutral prompts carry no official frame marker and loaded
    ones do; translations keep framing and type, stay in their claim and form no cycle. CLAIMs
    (ids or paths under questions/) narrow the run; --changed-since checks every group touched
    since REF, always whole.

    \b
    Rules:
      {rules}

    \b
    Examples:
      propeval groups
      propeval groups c0001 --format json
      propeval groups --changed-since origin/main --format github
      propeval groups --matrix c0001
      propeval groups --verbose          # with the notes shown once per session (rules skipped by config)
    """
    ws = workspace_from(ctx)
    only = list(claims)
    if matrix not in (None, ALL):
        only.append(matrix)
    with embedding_progress(fmt):  # the groups-drift rule embeds translations and rivals
        result = check_groups(ws, only, changed_since=changed_since)
    if matrix is not None:
        wanted = [matrix] if matrix != ALL else sorted(result.matrices)
        missing = [c for c in wanted if c not in result.matrices]
        if missing:
            raise UsageError(f"claim {missing[0]!r} is not among the groups checked")
        show(matrix_report([result.matrices[c] for c in wanted]), fmt)
        ctx.exit(0)
    from propeval.standing import shown

    emit(result.problems, fmt, result.files_checked, [*result.notes, *shown(result.standing, fmt, verbose)])
    ctx.exit(result.exit_code)


def matrix_report(matrices: Sequence[ClaimMatrix]) -> Report:
    """Completeness tables: json, a rich table on a terminal, or plain aligned text."""
    return Report(
        data={"matrices": [m.to_dict() for m in matrices]},
        view=lambda out, styled: show_matrices(matrices, out, styled),
    )


def show_matrices(matrices: Sequence[ClaimMatrix], out: TextIO, styled: bool) -> None:
    """Write completeness tables: a rich table when ``styled`` (a terminal), else plain aligned text."""
    if styled:
        from rich.console import Console

        console = Console(file=out)
        for m in matrices:
            console.print(rich_table(m))
            for cell in m.missing:
                console.print(f"  fill: {cell.command}", markup=False, highlight=False)
        return
    for n, m in enumerate(matrices):
        if n:
            out.write("\n")
        out.write("".join(line + "\n" for line in plain_table(m)))


def _header(m: ClaimMatrix) -> str:
    return f"{m.claim_id} ({m.kind or 'no kind'}): {m.title}"


def _cell(m: ClaimMatrix, lang: str, framing: str, qt: str) -> str:
    ids = m.items_at(lang, framing, qt)
    if ids:
        return ",".join(ids)
    return "MISSING" if m.missing_at(lang, framing, qt) else "-"


def _footer(m: ClaimMatrix) -> str:
    req = ", ".join(m.required) or "none"
    state = "complete" if m.complete else f"{len(m.missing)} cell(s) missing"
    return f"* required for {m.kind or 'this kind of'} claims: {req}; {state}"


def plain_table(m: ClaimMatrix) -> list[str]:
    """The table as lines of aligned plain text (for pipes, files and CI logs)."""
    header = ["language", *(f"{f}/{q}" for f, q in m.columns)]
    rows = [
        [lang + ("*" if m.is_required(lang) else ""), *(_cell(m, lang, f, q) for f, q in m.columns)]
        for lang in m.languages
    ]
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    lines = [_header(m)]
    for r in [header, *rows]:
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    lines.append(_footer(m))
    lines.extend(f"  fill: {cell.command}" for cell in m.missing)
    return lines


def rich_table(m: ClaimMatrix) -> object:
    """The table as a rich Table (for terminals)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=_header(m), caption=_footer(m), title_justify="left", caption_justify="left")
    table.add_column("language", style="bold")
    for f, q in m.columns:
        table.add_column(f"{f}\n{q}")
    for lang in m.languages:
        cells: list[Text] = []
        for f, q in m.columns:
            value = _cell(m, lang, f, q)
            style = "bold red" if value == "MISSING" else ("dim" if value == "-" else "")
            cells.append(Text(value, style=style))
        table.add_row(Text(lang + ("*" if m.is_required(lang) else "")), *cells)
    return table


# The rule list comes from propeval.rules, the one registry of rule ids.
command.help = with_rules(command.help or "", "groups")
