"""The text format: ``path:line:col [rule] message`` lines, then the view, notes and a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from propeval.result import Problem, Severity, clip

if TYPE_CHECKING:
    from propeval.reporters import Report

NAME = "text"
HELP = "path:line:col [rule] message"


def printable(s: str) -> str:
    """``s`` with control, bidi and invisible characters written as escapes, and line breaks as ``\\n``:
    a file name or a message can then neither rewrite a terminal nor split one problem over lines."""
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)


def location(p: Problem) -> str:
    path = printable(p.path)
    return f"{path}:{p.line}:{p.col}" if p.line else path


def text_line(p: Problem) -> str:
    tag = "" if p.severity is Severity.ERROR else f" ({p.severity.value})"
    return f"{location(p)} [{p.rule}]{tag} {printable(p.message)}"


def tally_line(problems: list[Problem], files_checked: int) -> str:
    """The closing count: errors and warnings (notices count as warnings), or ok."""
    if not problems:
        return f"ok: {files_checked} file(s) checked, no problems"
    errors = sum(p.severity is Severity.ERROR for p in problems)
    return f"{errors} error(s), {len(problems) - errors} warning(s) in {files_checked} file(s) checked"


def write(rep: Report, out: TextIO) -> None:
    def problems(ps: object) -> None:
        for p in ps:  # type: ignore[attr-defined]
            out.write(text_line(p) + "\n")
            for line in rep.details.get(p, ()):
                out.write(line + "\n")

    for section in rep.sections:
        problems(section.problems)
        out.writelines(f"note: {clip(n)}\n" for n in section.notes)
    shown, notes = rep.shown()
    problems(shown)
    if rep.view is not None:
        rep.view(out, out.isatty())
    out.writelines(f"note: {clip(n)}\n" for n in notes)
    if rep.summary:
        out.write(rep.summary + "\n")
    if rep.tally:
        out.write(tally_line([*(p for s in rep.sections for p in s.problems), *shown], rep.files_checked) + "\n")
    out.writelines(line + "\n" for line in rep.footer)
