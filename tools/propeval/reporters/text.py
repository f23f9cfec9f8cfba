"""The text format: ``path:line:col [rule] message`` lines, then the view, notes and a summary.

Nothing a contributor, a training shard or a server wrote can start an output line, send a
control sequence or hold a GitHub Actions workflow command. The runner (actions/runner
``ActionCommand``) runs ``::name::data`` at the start of a line after any white space, and
``##[name]data`` anywhere in a line. Every line this format writes from text it did not make
(messages, the lines under a problem, notes, the summary, the footer) goes through
:func:`printable`, which writes line breaks and control characters as escapes and breaks ``##[``;
every line it writes at all, a view's (a command's own layout of its data) included, goes through
a :class:`LineGuard`, which does the same to control characters when the output is no terminal,
and disarms any line that would start with ``::`` or hold ``##[``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, TextIO

from propeval.result import Problem, Severity, clip

if TYPE_CHECKING:
    from propeval.reporters import Report

NAME = "text"
HELP = "path:line:col [rule] message"


V1_COMMAND = "##["  # the runner runs "##[name]data" wherever it stands in a line
V1_BROKEN = "##\\["


def printable(s: str) -> str:
    """``s`` with control, bidi and invisible characters written as escapes, line breaks as ``\\n``
    and ``##[`` as ``##\\[``: a file name, a message or an item's text can then neither rewrite a
    terminal, nor split one line of output in two (so no text can start a line, as a ``::``
    workflow command must), nor hold a ``##[`` workflow command. The one escape function of every
    text output."""
    if not s.isprintable():
        s = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)
    return s.replace(V1_COMMAND, V1_BROKEN)


def disarm(line: str) -> str:
    """``line`` with a backslash in front of a ``::`` it would start with (after any white space:
    the runner trims every Unicode blank) and ``##[`` broken as ``##\\[``: GitHub Actions runs
    either as a workflow command. Any other line as it is."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        line = line[: len(line) - len(stripped)] + "\\" + stripped
    return line.replace(V1_COMMAND, V1_BROKEN)


class LineGuard:
    """A text stream over ``out`` for views: each line :func:`disarm`-ed, and off a terminal its
    control characters (but tab) escaped as :func:`printable` writes them. A terminal keeps the
    view's styling (rich strips control characters from the text it draws)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._tty = out.isatty()
        self._start = True  # only white space (or nothing) is on the line so far
        self._tail = ""  # the line's last two characters written, so "#" + "#[" is caught too

    def isatty(self) -> bool:
        return self._tty

    def write(self, s: str) -> int:
        for piece in s.splitlines(keepends=True):
            body = piece.rstrip("\n")
            if self._start:
                body = disarm(body)
            if not self._tty and not body.isprintable():
                body = "".join(c if c.isprintable() or c == "\t" else ascii(c)[1:-1] for c in body)
            body = disarm(self._tail + body)[len(self._tail) :] if self._tail else disarm(body)
            self._out.write(body + piece[len(piece.rstrip("\n")) :])
            ended = piece.endswith("\n")
            self._start = ended or (self._start and not body.strip())
            self._tail = "" if ended else (self._tail + body)[-2:]
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


@dataclass(frozen=True)
class Repeat:
    """Problems alike (one rule, one severity, one message but for each file's own path and id),
    shown as one line: where they are, how many, and the message with ``<id>`` and ``<path>`` in
    place of what differs."""

    problems: tuple[Problem, ...]
    template: str

    @property
    def first(self) -> Problem:
        return self.problems[0]


def _subject(path: str) -> str:
    """The id a problem's file stands for (``i0007`` of ``ledger/answerability/i0007.json``), or ""."""
    stem = PurePosixPath(path).stem
    return stem if len(stem) >= 2 and not stem.startswith(".") else ""


def template(p: Problem) -> str:
    """``p``'s message with its own path written ``<path>`` and its file's id ``<id>``: what two
    problems of one rule share when they differ only in the file they are about."""
    text = p.message.replace(p.path, "<path>") if p.path else p.message
    subject = _subject(p.path)
    if subject:
        text = re.sub(rf"(?<![\w.-]){re.escape(subject)}(?![\w-])", "<id>", text)
    return text


def collapse(problems: Iterable[Problem], least: int) -> list[Problem | Repeat]:
    """``problems`` in their order, each run of ``least`` or more alike (:func:`template`, rule and
    severity; anywhere in the list) as one :class:`Repeat` where the first of them stood."""
    items = list(problems)
    if least <= 1:
        return list(items)
    groups: dict[tuple[str, Severity, str], list[Problem]] = {}
    for p in items:
        groups.setdefault((p.rule, p.severity, template(p)), []).append(p)
    out: list[Problem | Repeat] = []
    done: set[tuple[str, Severity, str]] = set()
    for p in items:
        key = (p.rule, p.severity, template(p))
        members = groups[key]
        if len(members) < least:
            out.append(p)
        elif key not in done:
            done.add(key)
            out.append(Repeat(tuple(members), key[2]))
    return out


def repeat_line(r: Repeat, hint: str) -> str:
    """One line for problems alike: the first and last file (the last without the folder they
    share), the rule, how many, and the message they share."""
    p = r.first
    tag = "" if p.severity is Severity.ERROR else f" ({p.severity.value})"
    paths = sorted({q.path for q in r.problems})
    where = paths[0]
    if len(paths) > 1:
        shared = PurePosixPath(paths[0]).parent.as_posix() + "/"
        last = paths[-1].removeprefix(shared) if shared != "./" else paths[-1]
        where = f"{paths[0]} … {last}"
    line = f"{printable(where)} [{p.rule}]{tag} {len(r.problems)} alike: {printable(r.template)}"
    return line + (f" [{hint}]" if hint else "")


def tally_line(problems: list[Problem], files_checked: int) -> str:
    """The closing count: errors and warnings (notices count as warnings), or ok."""
    if not problems:
        return f"ok: {files_checked} file(s) checked, no problems"
    errors = sum(p.severity is Severity.ERROR for p in problems)
    return f"{errors} error(s), {len(problems) - errors} warning(s) in {files_checked} file(s) checked"


def write(rep: Report, out: TextIO) -> None:
    out = LineGuard(out)  # type: ignore[assignment]

    def problems(ps: Sequence[Problem]) -> None:
        for p in collapse(ps, rep.collapse):
            if isinstance(p, Repeat):
                out.write(repeat_line(p, rep.collapse_hint) + "\n")
                continue
            out.write(text_line(p) + "\n")
            for line in rep.details.get(p, ()):
                out.write(printable(line) + "\n")

    for section in rep.sections:
        problems(section.problems)
        out.writelines(f"note: {printable(clip(n))}\n" for n in section.notes)
    shown, notes = rep.shown()
    problems(shown)
    if rep.view is not None:
        rep.view(out, out.isatty())
    out.writelines(f"note: {printable(clip(n))}\n" for n in notes)
    if rep.summary:
        out.write(printable(rep.summary) + "\n")
        out.writelines(f"  {printable(line)}\n" for line in rep.summary_lines)
    if rep.tally:
        out.write(tally_line([*(p for s in rep.sections for p in s.problems), *shown], rep.files_checked) + "\n")
    out.writelines(printable(line) + "\n" for line in rep.footer)
