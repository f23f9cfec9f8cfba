"""Options and helpers shared by commands."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from propeval.cli._exit import ENTRY_POINT as _ENTRY_POINT
from propeval.cli._exit import FAST_EXIT as _FAST_EXIT
from propeval.config import Config, require_corpus
from propeval.reporters import FORMATS, Report, format_help, write
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.workspace import Workspace


def from_the_command_line() -> bool:
    """Whether this process is the ``propeval`` command (:func:`propeval.cli.main`), not a library
    caller or a test's CliRunner: process-wide settings are the command's to change."""
    return _ENTRY_POINT[0]


def exit_fast(ctx: click.Context, code: int) -> None:
    """``ctx.exit(code)``, and let :func:`propeval.cli.main` end the process at once after it: the
    commit hook and dedup print everything and leave no thread, temporary file or exit handler
    behind, and Python's teardown (freeing a 10k corpus's objects one by one, and a whole dedup's
    millions of candidate pairs) is 0.1 of the hook's 1.4 CPU-seconds (mypy ends the same way).
    :func:`propeval.cli.main` checks that no thread or exit handler is left before it does."""
    _FAST_EXIT[0] = _ENTRY_POINT[0]
    ctx.exit(code)


def format_choice(formats: Sequence[str] = FORMATS, help: str | None = None) -> Callable[[Any], Any]:
    """The ``--format`` option over ``formats`` (names in :data:`propeval.reporters.REPORTERS`)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(formats)),
        default="text",
        show_default=True,
        help=help or format_help(formats),
    )


format_option = format_choice()
changed_since_option = click.option(
    "--changed-since",
    metavar="REF",
    default=None,
    help="Only what changed since the merge base with REF (a branch, tag or commit).",
)


def config_from(ctx: click.Context) -> Config:
    """The corpus this run works on; a folder that is not one is a usage error (exit 2)."""
    return require_corpus(ctx.obj.get("root") if ctx.obj else None)


def workspace_from(ctx: click.Context) -> Workspace:
    """The workspace of the corpus this run works on (:func:`config_from`'s), which the core reads."""
    from propeval.workspace import Workspace

    return Workspace(config_from(ctx))


def show(rep: Report, fmt: str) -> None:
    """Write ``rep`` to standard output in ``fmt``."""
    write(rep, fmt, sys.stdout)


def emit(problems: Sequence[Problem], fmt: str, files_checked: int, notes: Sequence[str] = ()) -> None:
    """A problem list, with text's closing count."""
    show(Report(problems=problems, notes=notes, files_checked=files_checked, tally=True), fmt)
