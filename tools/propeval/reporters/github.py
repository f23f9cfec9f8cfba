"""The github format: workflow-command annotations (``::error file=...,line=...::``), and a
report's view as plain text, since a workflow log shows it as it stands."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from propeval.reporters.text import V1_BROKEN, V1_COMMAND
from propeval.result import MAX_MESSAGE, Problem, clip

if TYPE_CHECKING:
    from propeval.reporters import Report

NAME = "github"
HELP = "workflow annotations"


def github_escape(s: str, prop: bool = False, limit: int = 2 * MAX_MESSAGE) -> str:
    """``s`` as a workflow-command value: cut to ``limit`` characters (marked), then escaped as the
    runner unescapes it (actions/runner ``ActionCommand``: ``%``, CR and LF in data; also ``:``
    and ``,`` in a property, so a value cannot end the property or the command), and ``##[``
    broken, which the runner would read as a command of its own anywhere in a line."""
    s = clip(s, limit).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s.replace(V1_COMMAND, V1_BROKEN)


def github_line(p: Problem) -> str:
    level = {"error": "error", "warning": "warning", "notice": "notice"}[p.severity.value]
    props = [f"file={github_escape(p.path, True)}"]
    if p.line:
        props += [f"line={p.line}", f"col={p.col}"]
    props.append(f"title={github_escape(p.rule, True)}")
    return f"::{level} {','.join(props)}::{github_escape(f'[{p.rule}] {p.message}')}"


def notice(message: str, title: str = "") -> str:
    head = f"::notice title={github_escape(title, True)}::" if title else "::notice::"
    return head + github_escape(message)


def write(rep: Report, out: TextIO) -> None:
    for section in rep.sections:
        out.writelines(github_line(p) + "\n" for p in section.problems)
        out.writelines(notice(clip(n)) + "\n" for n in section.notes)
    shown, notes = rep.shown()
    out.writelines(github_line(p) + "\n" for p in shown)
    out.writelines(notice(clip(n)) + "\n" for n in notes)
    if rep.summary:
        out.write(notice("\n".join([rep.summary, *rep.summary_lines]), rep.title) + "\n")
    if rep.view is not None and rep.view_in_log:
        from propeval.reporters.text import LineGuard

        rep.view(LineGuard(out), False)  # type: ignore[arg-type]
