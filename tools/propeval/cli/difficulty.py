"""``propeval difficulty``."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.cli._common import format_choice, show, workspace_from
from propeval.errors import UsageError
from propeval.reporters import FORMATS, Report, Section, format_help


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
    help="Write the ledger here. Default: ledger/difficulty.json (under [tool.propeval.gates] ledger_dir) for "
    "graded runs; --matrix needs it.",
)
@click.option("--report", "show_report", is_flag=True, help="Print the band distribution of the existing ledger.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write a histogram PNG.")
@format_choice(FORMATS, format_help() + " With --report, sarif has no results: the report is numbers, not problems.")
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
    --format json lists every one. A line per stage goes to stderr, and the bootstrap shows a
    progress bar on a terminal (not in CI, not with --format json).

    Stability (the unstable flag) comes from a bootstrap over models. With basis = "irt" it is
    item-only: each draw refits the items with the models' abilities held at the full fit, so
    it leaves out the uncertainty in the abilities (stability likely overstated, unstable likely
    undercounted);
    every output that shows it says so.

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

    ws = workspace_from(ctx)
    if show_report:
        if runs or matrix is not None or out is not None:
            raise UsageError("--report reads the existing ledger; drop the RUNS, --matrix and --out arguments")
        rep = core.build_report(ws, core.load_ledger(ws))
        if plot is not None:
            core.plot_report(rep, plot)
        show(
            Report(
                data=rep.to_dict(),
                json_options={"sort_keys": True},
                view=lambda out, styled: out.write(core.format_report(rep)),
                footer=[f"wrote {plot}"] if plot is not None else (),
            ),
            fmt,
        )
        ctx.exit(0)

    def progress(line: str) -> None:
        click.echo(f"difficulty: {line}", err=True)

    from propeval.progress import bar

    with bar("difficulty: bootstrap over models", enabled=fmt != "json") as tick:
        result = core.run_difficulty(
            ws, core.Options(runs=runs, matrix=matrix, scale=scale, out=out, progress=progress, tick=tick)
        )
    # People read the first few notices of each flag and their counts; json and sarif get all.
    short, counted = core.shorten(result.problems)
    footer: list[str] = []
    if result.ledger is not None:
        counts = core.band_counts(result.ledger)
        n_models = len(result.ledger["models"])
        sources = len(result.ledger["sources"])
        what = "matrix" if matrix is not None else f"{sources} run(s)"
        footer.append(
            f"wrote {result.path}: {len(result.ledger['items'])} item(s), {n_models} model(s) from {what}; "
            + ", ".join(f"{b} {counts[b]}" for b in (*core.BANDS, "none"))
        )
        if plot is not None:
            core.plot_report(core.build_report(ws, result.ledger), plot)
            footer.append(f"wrote {plot}")
    show(Report(problems=result.problems, notes=result.notes, brief=Section(short, counted), footer=footer), fmt)
    ctx.exit(0 if result.ledger is not None else 1)
