"""The text format: ``path:line:col [rule] message`` lines, then the view, notes and a summary.

Nothing a contributor, a training shard or a server wrote can start an output line or send a
control sequence. Every line this format writes from text it did not make (messages, the lines
under a problem, notes, the summary, the footer) goes through :func:`printable`, which writes line
breaks and control characters as escapes; a view (a command's own layout of its data) writes to
a :class:`LineGuard`, which does the same to control characters when the output is no terminal,
and disarms any line that would start with ``::`` (a GitHub Actions workflow command:
``::add-mask::``, ``::stop-commands::``) should a view ever print such text unescaped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from propeval.result import Problem, Severity, clip

if TYPE_CHECKING:
    from propeval.reporters import Report

NAME = "text"
HELP = "path:line:col [rule] message"


def printable(s: str) -> str:
    """``s`` with control, bidi and invisible characters written as escapes, and line breaks as ``\\n``:
    a file name, a message or an item's text can then neither rewrite a terminal nor split one
    line of output in two (so no text can start a line, as a workflow command must). The one
    escape function of every text output."""
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)


def disarm(line: str) -> str:
    """A line that would start with ``::`` (after blanks) with a backslash in front of it: GitHub
    Actions runs such a line as a workflow command. Any other line as it is."""
    stripped = line.lstrip(" \t")
    if stripped.startswith("::"):
        return line[: len(line) - len(stripped)] + "\\" + stripped
    return line


class LineGuard:
    """A text stream over ``out`` for views: each line :func:`disarm`-ed, and off a terminal its
    control characters (but tab) escaped as :func:`printable` writes them. A terminal keeps the
    view's styling (rich strips control characters from the text it draws)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._tty = out.isatty()
        self._start = True  # the next character begins a line

    def isatty(self) -> bool:
        return self._tty

    def write(self, s: str) -> int:
        for piece in s.splitlines(keepends=True):
            body = piece.rstrip("\n")
            if self._start:
                body = disarm(body)
            if not self._tty and not body.isprintable():
                body = "".join(c if c.isprintable() or c == "\t" else ascii(c)[1:-1] for c in body)
            self._out.write(body + piece[len(piece.rstrip("\n")) :])
            self._start = piece.endswith("\n")
        return len(s)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._out.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, ... as the stream has them
        return getattr(self._out, name)


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
                out.write(printable(line) + "\n")

    for section in rep.sections:
        problems(section.problems)
        out.writelines(f"note: {printable(clip(n))}\n" for n in section.notes)
    shown, notes = rep.shown()
    problems(shown)
    if rep.view is not None:
        guard = LineGuard(out)
        rep.view(guard, guard.isatty())  # type: ignore[arg-type]
    out.writelines(f"note: {printable(clip(n))}\n" for n in notes)
    if rep.summary:
        out.write(printable(rep.summary) + "\n")
    if rep.tally:
        out.write(tally_line([*(p for s in rep.sections for p in s.problems), *shown], rep.files_checked) + "\n")
    out.writelines(printable(line) + "\n" for line in rep.footer)
