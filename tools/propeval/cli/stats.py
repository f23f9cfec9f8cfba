"""``propeval stats``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

import click

from propeval.cli._common import format_choice, show, workspace_from
from propeval.release import Stats, compute_stats, load_inputs
from propeval.reporters import Report, report

if TYPE_CHECKING:
    from rich.console import Console


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _render(stats: Stats, out: TextIO) -> None:
    from rich.console import Console

    console = Console(file=out, highlight=False, soft_wrap=False)
    console.print(f"{stats.items} active item(s), {stats.claims} claim(s), {stats.retired} retired")
    for title, counts in (
        ("question type", stats.by_question_type),
        ("category", stats.by_category),
        ("language", stats.by_language),
        ("framing", stats.by_framing),
        ("band", stats.by_band),
    ):
        _table(
            console,
            f"Items by {title}",
            [title, "items", "share"],
            [(k, v, _pct(v, stats.items)) for k, v in counts.items()],
        )
    _render_sources(stats, console)
    _render_evidence(stats, console)
    _render_gaps(stats, console)


def _table(console: Console, title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for h in headers:
        t.add_column(h, justify="right" if h in ("items", "share", "n") else "left")
    for r in rows:
        t.add_row(*(str(c) for c in r))
    console.print(t)


def _official(src: dict[str, Any]) -> str:
    """``2 (kremlin.ru 1, mid.ru 1)``: claims with source_role official_statement, by domain."""
    off = src["official_statements"]
    domains = ", ".join(f"{d} {n}" for d, n in off["domains"].items())
    return f"{off['claims']}" + (f" ({domains})" if domains else "")


def _render_sources(stats: Stats, console: Console) -> None:
    """Source URLs and dates, by year and against each endpoint's knowledge cutoff."""
    src, dates = stats.sources, stats.source_dates
    top = src["max_items_per_url"]
    _table(
        console,
        "Sources",
        ["what", "value"],
        [
            ("distinct source URLs", src["distinct_urls"]),
            ("distinct source domains", src["distinct_domains"]),
            ("most items from one URL", f"{top['items']} ({top['url']})" if top else "-"),
            ("claims citing an official statement's own record", _official(src)),
            ("claims citing an archived copy", src["archived_claims"]),
            ("items with a source_date", f"{dates['dated']} of {stats.items}"),
            ("source_date range", f"{dates['earliest'] or '-'} .. {dates['latest'] or '-'}"),
        ],
    )
    if dates["by_year"]:
        _table(
            console,
            "Items by source year",
            ["year", "items", "share"],
            [(y, n, _pct(n, dates["dated"])) for y, n in dates["by_year"].items()],
        )
    if dates["knowledge_cutoffs"]:
        _table(
            console,
            "Sources against each model's knowledge cutoff",
            ["endpoint", "model", "cutoff", "before", "after", "undated"],
            [
                (c["endpoint"], c["model"], c["knowledge_cutoff"], c["before"], c["after"], c["undated"])
                for c in dates["knowledge_cutoffs"]
            ],
        )
    else:
        console.print(
            "Knowledge cutoffs: none declared ([tool.propeval.judge.endpoints.NAME] knowledge_cutoff)", markup=False
        )


def _render_evidence(stats: Stats, console: Console) -> None:
    """The dedup record, the judge gate per rubric and the answerability records."""
    d = stats.dedup
    if d["status"] == "not run":
        console.print(f"Dedup passes: not recorded ({d['detail']})")
    else:
        found = ", ".join(f"{p.get('name')} {p.get('found')} ({p.get('allowlisted')} allowlisted)" for p in d["passes"])
        detail = f": {d['detail']}" if d["detail"] else ""
        console.print(f"Dedup passes ({d['ledger']}, {d['status']}{detail}, {d['created']}): {found}")
    if stats.judge:
        _table(
            console,
            "Judge agreement",
            ["rubric", "judge model", "gold cases", "status", "verdict"],
            [(j["rubric"], j["judge_model"] or "-", j["cases"] or "-", j["status"], j["verdict"]) for j in stats.judge],
        )
    else:
        console.print("Judge agreement: no rubric")
    a = stats.answerability
    console.print(
        f"Answerability: {a['counted']} of {a['items']} item(s) with evidence that counts, {a['passed']} pass; "
        f"{a['items'] - a['missing'] - a['counted']} not checked, {a['missing']} without a record"
    )


def _render_gaps(stats: Stats, console: Console) -> None:
    gaps = stats.gaps
    if gaps["category_language"]:
        _table(
            console,
            "Coverage gaps: category × language with no item",
            ["category", "language"],
            [(g["category"], g["language"]) for g in gaps["category_language"]],
        )
    else:
        console.print("Coverage gaps: none (every category has an item in every language)")
    if gaps["claims_missing_framing"]:
        _table(
            console,
            "Claims missing a framing",
            ["claim", "missing"],
            [(g["claim_id"], ", ".join(g["missing"])) for g in gaps["claims_missing_framing"]],
        )
    else:
        console.print("Claims missing a framing: none")


@click.command("stats")
@format_choice(("text", "json"), "text: tables for a terminal; json: one document with every number.")
@click.pass_context
def command(ctx: click.Context, fmt: str) -> None:
    """Print the release numbers: counts per question type, category, language, framing and band;
    sources and source dates (items by source year, and for each endpoint that declares a
    knowledge_cutoff, how many sources predate it); dedup passes; judge agreement; and coverage gaps (category ×
    language cells with no item, claims missing a framing).

    Exits 1 when some corpus file could not be loaded (the numbers then leave it out).

    \b
    Examples:
      propeval stats
      propeval stats --format json | jq .gaps
    """
    inputs = load_inputs(workspace_from(ctx))
    stats = compute_stats(inputs)
    show(Report(data=stats.to_dict(), view=lambda out, styled: _render(stats, out)), fmt)
    warnings = [*inputs.corpus.problems, *inputs.warnings]
    if warnings:
        report(warnings, "text", sys.stderr, summary=False)
    ctx.exit(1 if inputs.corpus.problems else 0)
