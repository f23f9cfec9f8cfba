"""``propeval hook``: the pre-commit hook, check + groups + dedup in one process."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

import click

from propeval.cli._common import exit_fast, from_the_command_line, workspace_from
from propeval.cli._progress import embedding_progress
from propeval.pipeline.hook import PARTS, HookPart, HookResult, run_hook
from propeval.reporters import Report, printable, write
from propeval.reporters.jsondoc import dumps

HOOK_FORMATS = ("text", "json", "github")


def _announce(message: str) -> None:
    """Say what is being prepared (a model converted once, and how long it took). Under pre-commit,
    which shows a hook's output only when it fails, it is also written to the terminal itself
    (``/dev/tty``), so that a first commit that spends half a minute preparing says so."""
    line = f"propeval hook: {printable(message)}"
    click.echo(line, err=True)
    if os.environ.get("PRE_COMMIT") and not sys.stderr.isatty():
        with contextlib.suppress(OSError), open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(line + "\n")


@click.command("hook")
@click.option(
    "--changed-since",
    "ref",
    metavar="REF",
    default="HEAD",
    show_default=True,
    help="Check what changed since the merge base with REF (HEAD: what is staged; before the first commit, "
    "everything).",
)
@click.option(
    "--skip",
    multiple=True,
    type=click.Choice(list(PARTS)),
    help="Leave this part out (repeatable); its heading says so.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(HOOK_FORMATS)),
    default="text",
    show_default=True,
    help="text: each part under its heading; json: one document, each part's own json under its name; "
    "github: each part's workflow annotations.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Also print groups' notes that are the same on every run (as groups -v)."
)
@click.argument("files", nargs=-1, type=click.Path())
@click.pass_context
def command(
    ctx: click.Context, ref: str, skip: tuple[str, ...], fmt: str, verbose: bool, files: tuple[str, ...]
) -> None:
    """The pre-commit hook: check, groups and dedup on what changed since HEAD, in one process.

    FILES: what changed, as pre-commit names it (the staged files it runs the hook on); without
    them, git says (what changed since the merge base with --changed-since, untracked files too).
    Either way --changed-since is the base that ids are kept stable against.

    The same as `propeval check --changed-since HEAD`, `propeval groups --changed-since HEAD` and
    `propeval dedup --changed-since HEAD` run one after the other, but the corpus is loaded once
    and Python starts once: at 10,000 items, 0.6x the CPU time of the three hooks. Each part's
    output comes under its own heading, in the words of its own command; the exit code is the
    worst part's (0 clean, 1 problems, 3 a part could not run).

    dedup needs the dedup-light extra (or dedup, for backend "sentence-transformers"). Without it
    check and groups still run, and the dedup part says what to install: exit 3. A corpus
    repository without the extra uses the separate propeval-check and propeval-groups hooks.

    \b
    Examples:
      propeval hook questions/c0007/i0412.yaml   # what pre-commit runs (.pre-commit-hooks.yaml: id propeval)
      propeval hook                         # what git says changed since HEAD
      propeval hook --changed-since origin/main
      propeval hook --skip dedup
      propeval hook --format json
    """
    if from_the_command_line():
        import gc

        # A warm hook at 10k items makes about a million objects and frees few: each collection of
        # a 200k-object youngest generation cost it 0.04-0.07 CPU-s, 1-2 per commit. Its
        # process is short and ends at once (exit_fast): the collector runs only past a million.
        gc.set_threshold(1_000_000, 30, 30)
    ws = workspace_from(ctx)
    with embedding_progress(fmt):  # groups' drift rule and dedup embed new texts
        result = run_hook(ws, ref, skip=skip, announce=_announce, files=list(files) if files else None)
    if fmt == "json":
        doc = {
            "changed_since": ref,
            "exit_code": result.exit_code,
            **{p.name: _json_of(p, verbose) for p in result.parts},
        }
        click.echo(dumps(doc))
    else:
        for part in result.parts:
            if fmt == "text":
                click.echo(_heading(part, result))
            write(_report(part, fmt, verbose), fmt, sys.stdout)
            if part.error is not None and fmt != "text":  # github: the reason, also where a person reads it
                click.echo(f"propeval hook: {part.name} not run: {printable(str(part.error))}", err=True)
        if fmt == "text":
            codes = ", ".join(f"{p.name} {_status(p)}" for p in result.parts)
            click.echo(f"propeval hook: exit {result.exit_code} ({codes})")
    exit_fast(ctx, result.exit_code)


def _heading(part: HookPart, result: HookResult) -> str:
    what = {
        "check": "changed files, cross-file rules over the whole corpus",
        "groups": "claim groups with a changed file",
        "dedup": "changed texts against the whole corpus",
    }[part.name]
    return f"== propeval {part.name} ({what}; since {result.ref}) =="


def _status(part: HookPart) -> str:
    if part.skipped:
        return "skipped"
    if part.error is not None:
        return f"not run, exit {part.exit_code}"
    return f"exit {part.exit_code}"


def _report(part: HookPart, fmt: str, verbose: bool) -> Report:
    """The report the part's own command writes (check's, groups', dedup's)."""
    if part.skipped:
        return Report(notes=[f"{part.name}: skipped (--skip {part.name})"])
    if part.error is not None:
        return Report(notes=[f"{part.name}: not run: {printable(str(part.error))}"])
    r = part.result
    if part.name == "dedup":
        from propeval.cli.dedup import dedup_report

        return dedup_report(r)
    notes = list(r.notes)
    if part.name == "groups":
        from propeval.standing import shown

        notes += shown(r.standing, fmt, verbose)
    return Report(problems=r.problems, notes=notes, files_checked=r.files_checked, tally=True)


def _json_of(part: HookPart, verbose: bool) -> dict[str, object]:
    head: dict[str, object] = {"exit_code": part.exit_code, "status": _status(part)}
    if part.skipped or part.error is not None:
        return {**head, "error": None if part.error is None else str(part.error)}
    buf = io.StringIO()
    write(_report(part, "json", verbose), "json", buf)
    body = json.loads(buf.getvalue())
    return {**head, **body} if isinstance(body, dict) else {**head, "report": body}
