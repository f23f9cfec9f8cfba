"""Helpers shared by `answer`, `grade`, `score` and `serve-local`."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import click

from propeval.cli._common import format_choice, show
from propeval.config import Config
from propeval.judge.answer import RunResult
from propeval.reporters import Report, printable, report
from propeval.settings import JudgeSettings

summary_format_option = format_choice(("text", "json"), "text: one summary line; json: one document.")


def endpoint_check_options(f: Any) -> Any:
    """``--base`` and ``--trust-endpoints``: the check that this checkout did not move an endpoint
    (:func:`propeval.policy.refuse_moved_endpoints`)."""
    f = click.option(
        "--trust-endpoints",
        is_flag=True,
        help="Use this checkout's endpoints even when it changed them since it forked from --base (refused "
        "otherwise: a pull request's checkout could send your API key anywhere).",
    )(f)
    return click.option(
        "--base",
        metavar="REF",
        default=None,
        help="The branch this checkout forked from, for the endpoint check. Default: origin/HEAD, else origin/main.",
    )(f)


def settings_from(config: Config) -> JudgeSettings:
    return config.settings.judge


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[object]:
    """A progress bar on stderr (:func:`propeval.progress.bar`: a terminal only, never in CI).
    Yields a (done, total) callback, or None."""
    from propeval.progress import bar

    with bar(label) as update:
        yield update


def emit_run(result: RunResult, verb: str, fmt: str) -> None:
    """Print what a run did; warnings and failed items go to stderr."""
    if result.problems:
        report(result.problems, "text", sys.stderr, summary=False)
    parts = [f"{n} {status}" for status, n in sorted(result.counts.items())]
    if result.unfinished:
        parts.append(f"{result.unfinished} not finished")
    if result.cached:
        parts.append(f"{result.cached} from the response cache")
    counts = ", ".join(parts) or "nothing new"
    out = Path(os.path.relpath(result.out)).as_posix()
    payload = {
        "run": result.run_id,
        "file": out,
        "items": result.total,
        "already_done": result.skipped,
        "counts": result.counts,
        "errors": [{"item_id": i, "error": e} for i, e in result.errors],
        "unfinished": result.unfinished,
        "cached": result.cached,
        "warnings": [p.to_dict() for p in result.problems],
    }

    def view(stream: TextIO, styled: bool) -> None:
        stream.write(f"{verb} run {result.run_id}: {result.total} item(s), {result.skipped} already done; {counts}\n")
        stream.write(out + "\n")

    show(Report(data=payload, view=view), fmt)
    for item_id, error in result.errors:  # a server's words: escaped, so they cannot start a line
        click.echo(printable(f"{item_id}: {error}"), err=True)
    if result.errors:
        click.echo(f"{len(result.errors)} item(s) failed; rerun the same command to retry them", err=True)
    if result.unfinished:
        click.echo(
            f"{result.unfinished} item(s) not finished: the {result.deadline:g}s run deadline "
            "([tool.propeval.judge] run_deadline) passed; rerun the same command to continue",
            err=True,
        )
