"""``propeval difficulty``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from propeval.cli._common import config_from
from propeval.errors import UsageError
from propeval.reporters import FORMATS, report


@click.command("difficulty")
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--matrix",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Read an item x model score matrix (.csv or .jsonl) instead of graded runs.",
)
@click.option(
    "--scale",
    type=click.Choice(["auto", "binary", "0-5"]),
    default="auto",
    show_default=True,
    help="Scale of --matrix scores; auto takes 0-5 when any score is above 1.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the ledger here. Default: ledger/difficulty.json for graded runs; --matrix needs it.",
)
@click.option("--report", "show_report", is_flag=True, help="Print the band distribution of the existing ledger.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write a histogram PNG.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format (--report: text or json).",
)
@click.pass_context
def command(
    ctx: click.Context,
    runs: tuple[Path, ...],
    matrix: Path | None,
    scale: str,
    out: Path | None,
    show_report: bool,
    plot: Path | None,
    fmt: str,
) -> None:
    """Compute item difficulty bands from graded runs and write ledger/difficulty.json.

    RUNS are run folders (default: every runs/*/grades-facts-v1.jsonl). Unscored grades are
    missing; unanswered grades score 0; several runs of one model on one item are averaged.
    Each item gets a mean normalised score, the share of models scoring >= 4, a corrected
    item-total discrimination, an IRT difficulty, a band (easy / medium / hard) and flags:
    saturated, unanswered-by-all, non-discriminating, unstable, too-few-models.
    Settings: [tool.propeval.difficulty] in pyproject.toml.

    A score matrix (--matrix) writes only where --out says: its bands are not the corpus's
    graded runs. Text output shows the first 5 notices of each flag and their counts;
    --format json lists every one. Progress goes to stderr.

    With --report, nothing is computed: the existing ledger's bands are counted per category,
    language and framing for the active items (a stale or missing band counts as "none").

    \b
    Examples:
      propeval difficulty                          # every graded run under runs/
      propeval difficulty runs/2024-06-01-gpt runs/2024-06-01-qwen
      propeval difficulty --matrix scores.csv --scale 0-5 --out scores-difficulty.json
      propeval difficulty --report --plot difficulty.png
      propeval difficulty --report --format json
    """
    from propeval import difficulty as core

    config = config_from(ctx)
    if show_report:
        if runs or matrix is not None or out is not None:
            raise UsageError("--report reads the existing ledger; drop the RUNS, --matrix and --out arguments")
        if fmt == "github":
            raise UsageError("--report prints text or json")
        rep = core.build_report(config, core.load_ledger(config))
        if fmt == "json":
            click.echo(json.dumps(rep.to_dict(), ensure_ascii=False, indent=2, sort_keys=True))
        else:
            click.echo(core.format_report(rep), nl=False)
        if plot is not None:
            core.plot_report(rep, plot)
            if fmt == "text":
                click.echo(f"wrote {plot}")
        ctx.exit(0)

    def progress(line: str) -> None:
        click.echo(f"difficulty: {line}", err=True)

    result = core.run_difficulty(
        config, core.Options(runs=runs, matrix=matrix, scale=scale, out=out, progress=progress)
    )
    problems, notes = (result.problems, []) if fmt == "json" else core.shorten(result.problems)
    report(problems, fmt, sys.stdout, summary=False, notes=[*notes, *result.notes])
    if result.ledger is None:
        ctx.exit(1)
    if fmt == "text":
        counts = core.band_counts(result.ledger)
        n_models = len(result.ledger["models"])
        sources = len(result.ledger["sources"])
        what = "matrix" if matrix is not None else f"{sources} run(s)"
        click.echo(
            f"wrote {result.path}: {len(result.ledger['items'])} item(s), {n_models} model(s) from {what}; "
            + ", ".join(f"{b} {counts[b]}" for b in (*core.BANDS, "none"))
        )
    if plot is not None:
        core.plot_report(core.build_report(config, result.ledger), plot)
        if fmt == "text":
            click.echo(f"wrote {plot}")
    ctx.exit(0)
