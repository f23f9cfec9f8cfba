"""Options and helpers shared by commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from propeval.config import Config, require_corpus
from propeval.reporters import FORMATS, report
from propeval.result import Problem

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text: path:line:col [rule] message; json: one document; github: workflow annotations.",
)
changed_since_option = click.option(
    "--changed-since",
    metavar="REF",
    default=None,
    help="Only what changed since the merge base with REF (a branch, tag or commit).",
)


def config_from(ctx: click.Context) -> Config:
    """The corpus this run works on; a folder that is not one is a usage error (exit 2)."""
    return require_corpus(ctx.obj.get("root") if ctx.obj else None)


def emit(problems: Sequence[Problem], fmt: str, files_checked: int, notes: Sequence[str] = ()) -> None:
    report(problems, fmt, sys.stdout, files_checked=files_checked, notes=notes)
