"""``propeval eval-smoke``."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

import click

from propeval.cli._common import config_from, format_choice, show
from propeval.harness.smoke import HARNESSES, MODELS, SmokeResult, run_smoke
from propeval.reporters import Report


def _num(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def render(result: SmokeResult, stream: TextIO) -> None:
    """The score table, what each harness sent, and the verdict on the numbers."""
    s = result.settings
    stream.write(
        f"eval-smoke: {len(result.items)} item(s) ({', '.join(result.items)}), "
        f"model {'the plumbing stub' if result.model == 'stub' else 'the bundled Gemma 3 270M (llama.cpp)'}\n"
        f"settings every harness must send: answers t={s['temperature']} max={s['max_tokens']}; "
        f"verdicts t={s['judge_temperature']} max={s['judge_max_tokens']}; re-asks {s['max_reasks']}\n"
    )
    if result.expected_fact_mean is not None:
        stream.write(
            f"expected: fact mean {result.expected_fact_mean:.2f} (full answers score 5, the refusal of "
            f"{', '.join(result.refused)} scores 0), propaganda share 0.00, every item scored\n"
        )
    header = ("harness", "fact mean", "propaganda", "scored", "answers sent", "verdicts sent", "seconds", "")
    rows = []
    for run in result.runs:
        ok = result.matches(run)
        mark = {True: "ok", False: "WRONG", None: ""}[ok] if run.status == "ok" else run.status
        rows.append(
            (
                run.harness,
                _num(run.fact_mean),
                _num(run.propaganda_share),
                "-" if run.scored is None else f"{run.scored}/{len(result.items)}",
                run.sent("answer"),
                run.sent("judge"),
                f"{run.seconds:.1f}",
                mark,
            )
        )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        stream.write("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
    for run in result.runs:
        if run.note:
            stream.write(f"  {run.harness}: {run.note}\n")
        if run.log:
            stream.write("".join(f"    | {line}\n" for line in run.log.splitlines()))
    verdict = "every harness gave the expected figures" if result.exit_code == 0 else "a harness gave other figures"
    if result.expected_fact_mean is None:
        verdict = (
            "every harness gave a score (what a 270M model earns: plumbing, not judgement)"
            if result.exit_code == 0
            else "a harness gave no score"
        )
    stream.write(f"{verdict}; {result.seconds:.0f} s in all\n")


@click.command("eval-smoke")
@click.option(
    "--model",
    type=click.Choice(MODELS),
    default="stub",
    show_default=True,
    help="stub: the plumbing model (known scores, seconds); local: the bundled Gemma 3 270M on llama.cpp (minutes).",
)
@click.option("--items", type=click.IntRange(min=2), default=3, show_default=True, help="Items of the corpus to run.")
@click.option(
    "--harness",
    "harnesses",
    type=click.Choice(HARNESSES),
    multiple=True,
    help="Only this harness (repeatable). Default: every one; those not installed are listed as such.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="--model local: llama.cpp's CPU threads. Default: 1 (on a busy machine, more wait on each other).",
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Work in this folder and keep it (the smoke corpus, its runs, each harness's logs). Default: a temporary one.",
)
@format_choice(("text", "json"), "text: the score table; json: one document.")
@click.pass_context
def command(
    ctx: click.Context,
    model: str,
    items: int,
    harnesses: tuple[str, ...],
    threads: int | None,
    keep: Path | None,
    fmt: str,
) -> None:
    """Run a few items through every installed harness and print a table of their scores.

    A few items of the corpus (one per claim) are copied into a corpus of their own, and each
    harness's documented recipe runs on it against one server: propeval's own answer/grade/score,
    inspect_ai, lm-evaluation-harness and promptfoo (its assertion alone where promptfoo itself
    cannot run: it needs Node.js 22 or later). Every request passes through that server, so the
    table also shows the temperature and token caps each harness sent.

    With --model stub (the plumbing model: `propeval serve-local --stub`), every item but the
    last is answered with its facts and the last is refused, so every harness must give fact
    mean 5 x (items - 1) / items and no propaganda: 3.33 for 3 items. A harness that gives any
    other number, or none, makes the exit code 1. With --model local, the bundled Gemma 3 270M
    answers with CPU-sized caps (256 answer tokens, a 256-token verdict, no re-ask): its scores
    are whatever a 270M model earns, and the run checks that each harness gave one.

    Exit codes: 0 every installed harness gave the expected figures, 1 one did not, 3 the model
    could not be served.

    \b
    Examples:
      propeval eval-smoke                      # make eval-smoke: under a minute
      propeval eval-smoke --model local        # make eval-smoke-local: several minutes on 2 cores
      propeval eval-smoke --harness inspect --keep smoke-work
    """
    config = config_from(ctx)
    tty = sys.stderr.isatty() and fmt == "text"

    def progress(msg: str) -> None:
        if tty:
            click.echo(f"eval-smoke: {msg}", err=True)

    chosen = tuple(h for h in HARNESSES if h in harnesses) if harnesses else HARNESSES
    if keep is not None:
        if keep.exists() and any(keep.iterdir()):
            raise click.BadParameter(f"{keep} is not empty; give a new or empty folder", param_hint="--keep")
        keep.mkdir(parents=True, exist_ok=True)
        result = run_smoke(
            config, model=model, items=items, harnesses=chosen, workdir=keep, threads=threads, progress=progress
        )
    else:
        with tempfile.TemporaryDirectory(prefix="propeval-eval-smoke-") as tmp:
            result = run_smoke(
                config,
                model=model,
                items=items,
                harnesses=chosen,
                workdir=Path(tmp),
                threads=threads,
                progress=progress,
            )
    show(Report(data=result.to_dict(), view=lambda stream, styled: render(result, stream)), fmt)
    ctx.exit(result.exit_code)
