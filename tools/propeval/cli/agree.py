"""``propeval agree``: agreement between raters, and blinded sheets for a second rater."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

import click

from propeval.cli._common import format_choice, show
from propeval.reporters import Report, printable, report


class DefaultGroup(click.Group):
    """A group that runs ``stats`` when the first argument is not a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["stats", *args]
        return super().parse_args(ctx, args)


@click.group("agree", cls=DefaultGroup)
def command() -> None:
    """Agreement between raters' label files (human vs human, judge vs human).

    \b
    A label file is JSON Lines, one rated unit per line: its id fields (default item_id)
    and the labelled field, e.g. {"item_id": "i0001", "model": "m", "tone": "Neutral"}.
    A unit labelled twice is an error.

    \b
    A file named grades-<rubric>.jsonl is a grades file, as `propeval grade` writes it in
    runs/<id>/, and is read as `propeval score` reads it: the rubric is loaded from the
    rubrics folder, each item's latest record counts (a retry replaces an error), a
    record that fails validation is an error naming its line, an unanswered item's labels
    are the rubric's unanswered values (fact 0, propaganda 0) and an unscored or errored
    item's labels are missing. Name a hand-written label file anything else.

    \b
    Examples:
      propeval agree rater1.jsonl rater2.jsonl --field tone
      propeval agree h1.jsonl judge.jsonl --field fact_score --level ordinal --labels 0,1,2,3,4,5
      propeval agree sample rater1.jsonl --fraction 0.4 --seed 7 --field tone --out sheet.jsonl --key key.json
      propeval agree unblind sheet.jsonl --key key.json --out rater2.jsonl
      propeval agree judges run-a --rubric facts-v1 --human rater1.jsonl
    """


@command.command("judges")
@click.argument("runs", nargs=-1, required=True)
@click.option("--rubric", default="facts-v1", show_default=True, help="Which grades to read: grades-<rubric>.jsonl.")
@click.option(
    "--human",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A human label file (JSON Lines: item_id and the rubric's fields, e.g. fact_states, fact_score).",
)
@format_choice(("text", "json"), "text: one line per field; json: one document.")
@click.pass_context
def judges_cmd(ctx: click.Context, runs: tuple[str, ...], rubric: str, human: Path | None, fmt: str) -> None:
    """Agreement between the judges of a panel (runs graded with several --judge).

    Krippendorff's alpha per field over every judge's own verdict in the runs' panel records:
    for a facts rubric each fact's state (nominal, one unit per fact), the fact score and the
    propaganda score (ordinal); for an audit rubric each codebook label (nominal). A judge that
    gave no valid verdict on an item is a missing rating there. With --human, each judge and
    the combined panel verdict are compared with the human labels, one alpha each.

    \b
    Examples:
      propeval agree judges run-a --rubric facts-v1
      propeval agree judges run-a run-b --human rater1.jsonl --format json
    """
    from propeval.cli._common import config_from
    from propeval.cli._judge import settings_from
    from propeval.judge.panel import format_text, panel_agreement

    config = config_from(ctx)
    result = panel_agreement(config, settings_from(config), runs, rubric, human)
    show(Report(data=result.to_dict(), view=lambda out, styled: out.write(format_text(result))), fmt)


@command.command("stats")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--field", "field_", required=True, help="The labelled field to compare.")
@click.option("--id-field", "id_fields", multiple=True, help="Field(s) naming a unit. Default: item_id.")
@click.option("--level", type=click.Choice(["nominal", "ordinal", "interval"]), default="nominal", show_default=True)
@click.option(
    "--labels",
    default=None,
    help="The scale in order, comma-separated (needed for ordinal weights). Each is matched to the labels "
    'in the files as written: 1 is the number unless the files write the string "1".',
)
@click.option(
    "--positive",
    default=None,
    help="The positive label, for positive-class F1 of binary labels; `true` matches a JSON boolean.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples for the 95% intervals (0: none).",
)
@click.option("--seed", default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--min-units",
    type=click.IntRange(min=2),
    default=30,
    show_default=True,
    help="A figure on fewer units is marked TOO FEW UNITS (not meaningful); on one unit it is undefined.",
)
@format_choice(("text", "json"), "text: figures and confusion matrices; json: one document.")
@click.pass_context
def stats_cmd(
    ctx: click.Context,
    files: tuple[Path, ...],
    field_: str,
    id_fields: tuple[str, ...],
    level: str,
    labels: str | None,
    positive: str | None,
    resamples: int,
    seed: int,
    min_units: int,
    fmt: str,
) -> None:
    """Cohen's kappa (unweighted, linear, quadratic), Fleiss' kappa, Krippendorff's alpha.

    Missing ratings are allowed. Pairwise figures come with a confusion matrix and a 95%
    bootstrap interval over the units both raters rated (Fleiss' kappa: the units every rater
    rated, and it says how many); resamples on which a figure is undefined are dropped and
    counted. An undefined figure is printed as "undefined" with its reason. A figure on fewer
    than --min-units units (30) is marked TOO FEW UNITS: each unit moves observed agreement by
    1/n, and at 30 units the 95% interval of kappa is still about +-0.3 wide, so fewer cannot
    tell slight agreement from substantial; on one unit a figure is undefined. The bootstrap
    shows a progress bar on a terminal (not in CI, not with --format json).

    An empty label file, a --field that no line has, or a label written two ways (1 and "1",
    true and "true") is an error naming the file and line; nothing is computed (exit 1).

    \b
    Examples:
      propeval agree rater1.jsonl rater2.jsonl --field accuracy
      propeval agree h1.jsonl h2.jsonl judge.jsonl --field propaganda --level ordinal --labels 0,1,2
      propeval agree human.jsonl judge.jsonl --field supports --positive true --format json
    """
    from propeval import agreement as ag
    from propeval.cli._common import config_from
    from propeval.progress import bar

    config = config_from(ctx) if any(ag.is_grades_file(f) for f in files) else None
    with bar("agree: bootstrap", enabled=fmt != "json" and resamples > 0) as update:
        result = ag.run_agree(
            ag.AgreeOptions(
                files=files,
                field=field_,
                id_fields=id_fields or ("item_id",),
                level=level,
                labels=labels.split(",") if labels else None,
                positive=positive,
                resamples=resamples,
                seed=seed,
                min_units=min_units,
                progress=update,
            ),
            config=config,
        )
    if result.report is None:
        report([*result.problems, *result.warnings], fmt, sys.stdout, files_checked=len(files))
        sys.exit(1)
    rep = result.report
    show(Report(data=rep.to_dict(), json_options={"default": str}, view=lambda out, styled: _figures(rep, out)), fmt)
    if result.warnings:  # grade records skipped unread: their items are missing ratings
        report(result.warnings, "text", sys.stderr, summary=False)


def _figures(rep: Any, stream: TextIO) -> None:
    """Each pair of raters' figures and confusion matrix, then the figures over all raters."""
    # Labels and rater names come from the label files: escaped (printable), like every text output.
    labels = [printable(str(x)) for x in rep.labels]
    raters = [printable(r) for r in rep.raters]
    out = [f"field {printable(rep.field)} ({rep.level}), {rep.units} unit(s), raters: {', '.join(raters)}"]
    for p in rep.pairwise:
        a, b = printable(p["a"]), printable(p["b"])
        out.append(f"{a} vs {b}:")
        out.extend(f"  {_stat_line(s)}" for s in p["stats"])
        out.append("  confusion (rows: " + a + ", columns: " + b + ")")
        cells = [*labels, *[str(v) for row in p["confusion"] for v in row]]
        width = max((len(x) for x in cells), default=1)
        out.append("    " + " " * width + " " + " ".join(x.rjust(width) for x in labels))
        for lab, row in zip(labels, p["confusion"], strict=True):
            out.append("    " + lab.rjust(width) + " " + " ".join(str(v).rjust(width) for v in row))
    out.append("all raters:")
    out.extend(f"  {_stat_line(s)}" for s in rep.overall)
    if rep.few:
        from propeval.agreement.agree import FEW_UNITS_REASON

        out.append(
            f"warning: figures on fewer than {rep.min_units} units (--min-units) are marked TOO FEW UNITS and are "
            f"not meaningful, and one on a single unit is undefined: {FEW_UNITS_REASON}"
        )
    stream.write("\n".join(out) + "\n")


def _stat_line(s: Any) -> str:
    kept = f"n={s.n}" if s.units is None else f"n={s.n}: the {s.n} of {s.units} rated unit(s) that every rater rated"
    if s.value is None:
        return (
            f"{s.name}: undefined ({s.reason}; {kept})" if s.units is not None else f"{s.name}: undefined ({s.reason})"
        )
    ci = f" [95% CI {s.ci[0]:.3f}, {s.ci[1]:.3f}]" if s.ci else ""
    dropped = ""
    if s.undefined_resamples:
        dropped = f"; {s.undefined_resamples} of {s.resamples} resamples had it undefined and were dropped"
    caveat = f"; {s.caveat}" if s.caveat else ""
    return f"{s.name}: {s.value:.3f}{ci} ({kept}{dropped}{caveat})"


@command.command("sample")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--fraction", type=float, default=0.4, show_default=True, help="Share of rows to sample.")
@click.option("--seed", type=int, required=True, help="Seed of the draw and the shuffle (write it down).")
@click.option("--field", "fields", multiple=True, required=True, help="A field the second rater labels (repeatable).")
@click.option(
    "--show",
    multiple=True,
    help="A field the rater sees. Default: prompt, answer, language (and, for a grades file, the claim's facts "
    "and frame_markers).",
)
@click.option("--id-field", "id_fields", multiple=True, help="Fields the key keeps. Default: item_id, model.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The sheet.")
@click.option(
    "--key",
    "key",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the key goes. Default: the user's data folder (keys/<sheet>-<hash>.key.json), outside the repository.",
)
@click.pass_context
def sample_cmd(
    ctx: click.Context,
    source: Path,
    fraction: float,
    seed: int,
    fields: tuple[str, ...],
    show: tuple[str, ...],
    id_fields: tuple[str, ...],
    out: Path,
    key: Path | None,
) -> None:
    """Write a blinded sheet of a random sample for a second rater, and its key apart.

    The sheet hides model names and every id, shuffles the rows and blanks the label fields;
    the key maps each sheet row back. Give the rater the sheet only. A grades file
    (grades-<rubric>.jsonl) gives one row per graded item, read as `agree` reads it, with
    the item's prompt, the run's answer and the claim's facts and frame markers to show.
    `propeval review --sheet SHEET` labels a sheet in the browser.

    \b
    Example:
      propeval agree sample rater1.jsonl --fraction 0.4 --seed 7 \\
          --field accuracy --field propaganda_inclusion --field tone --out sheet.jsonl
    """
    from propeval import agreement as ag
    from propeval.cli._common import config_from
    from propeval.result import Severity

    grades = ag.is_grades_file(source)
    rows, problems = ag.sample_source(source, config_from(ctx) if grades else None)
    if problems:
        report(problems, "text", sys.stderr, summary=False)
    if any(p.severity == Severity.ERROR for p in problems):
        ctx.exit(1)
    sheet = ag.blind_sample(
        rows,
        fields=fields,
        fraction=fraction,
        seed=seed,
        show=show or (ag.RATER_TEXTS if grades else ("prompt", "answer", "language")),
        id_fields=id_fields or ("item_id", "model"),
        source=source.name,
    )
    if key is None:
        key = ag.default_key_path(out)
    ag.write_sheet(sheet, out, key)
    click.echo(f"wrote {len(sheet.rows)} of {len(rows)} row(s) to {out}; key in {key} (keep it from the rater)")


@command.command("unblind")
@click.argument("sheet", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--key", "key", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def unblind_cmd(sheet: Path, key: Path, out: Path) -> None:
    """Turn a filled sheet back into a label file with the original ids.

    \b
    Example:
      propeval agree unblind sheet.jsonl --key private/key.json --out rater2.jsonl
    """
    from propeval import agreement as ag
    from propeval.fsutil import atomic_write
    from propeval.loader import dumps_json

    rows = ag.unblind(sheet, key)
    atomic_write(out, "".join(dumps_json(r) + "\n" for r in rows))
    click.echo(f"wrote {len(rows)} labelled row(s) to {out}")
