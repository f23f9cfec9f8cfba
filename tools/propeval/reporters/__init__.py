"""Every command's output goes through here: one :class:`Report`, one registry of formats.

A command builds a :class:`Report` (its problems and notes, and, when its output is not only a
problem list, a ``data`` payload with a ``view`` for people) and calls :func:`write` with the
``--format`` the user chose. Each format is one module with ``NAME``, ``HELP`` and
``write(report, out)``, and decides how to show a report:

- ``text``: ``path:line:col [rule] message`` lines, the view, notes, a closing summary;
- ``json``: ``data`` as one document, or the standard problem document when there is none;
- ``github``: workflow annotations, and the view as plain text (a workflow log shows it);
- ``sarif``: SARIF 2.1.0 for GitHub code scanning, the rules from :mod:`propeval.rules`.

Adding a format is one module here plus its line in ``REPORTERS``. No command branches on the
format name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TextIO

from propeval.reporters import github, jsondoc, sarif, text
from propeval.reporters.github import github_escape, github_line
from propeval.reporters.text import LineGuard, disarm, location, printable, text_line
from propeval.result import Problem

__all__ = [
    "FORMATS",
    "REPORTERS",
    "LineGuard",
    "Report",
    "Section",
    "disarm",
    "format_help",
    "github_escape",
    "github_line",
    "location",
    "printable",
    "report",
    "text_line",
    "write",
]

# A view writes a report's data for people: (out, styled). ``styled`` is true on a terminal,
# where a view may draw rich tables; false in pipes, files and CI logs.
View = Callable[[TextIO, bool], object]


@dataclass(frozen=True)
class Section:
    """Problems and the notes that go with them, shown together (one step of ``ci``)."""

    problems: Sequence[Problem] = ()
    notes: Sequence[str] = ()


@dataclass
class Report:
    """What a command has to say; each format decides how to show it.

    Attributes:
        problems: what is wrong, in the order to show.
        notes: what a reader should know that is not a problem.
        files_checked: how many files were looked at (text's count line, json's document).
        sections: problems grouped with their own notes, shown group by group before
            ``problems`` (``ci`` and ``run``: one per step).
        details: lines shown under a problem by the text format (``dedup``: the two texts).
        brief: what formats people read (text, github) show instead of ``problems``: fewer
            problems, and notes that count the rest; json and sarif list every problem.
        data: the json document, when the command's output is more than a problem list.
        json_options: ``json.dumps`` options over the defaults (``ensure_ascii=False, indent=2``).
        view: how text shows ``data`` (github shows it too, plain, when ``view_in_log``).
        summary: the closing line: text writes it last, github as a notice titled ``title``;
            json keeps ``notes`` as given (put the summary among them to have it there).
        summary_lines: more lines of the summary: text writes each under it, indented; github
            adds them to its notice.
        tally: text ends with the count of errors, warnings and files checked.
        footer: lines only text writes, at the very end ("wrote ...").
        collapse: text shows this many or more problems alike (one rule and severity, one
            message but for each file's path and id) as one line with their count; 0 shows
            each. Other formats list every problem.
        collapse_hint: what that line says lists them all (``--verbose``).
    """

    problems: Sequence[Problem] = ()
    notes: Sequence[str] = ()
    files_checked: int = 0
    sections: Sequence[Section] = ()
    details: Mapping[Problem, Sequence[str]] = field(default_factory=dict)
    brief: Section | None = None
    data: Any = None
    json_options: Mapping[str, Any] = field(default_factory=dict)
    view: View | None = None
    view_in_log: bool = True
    summary: str = ""
    summary_lines: Sequence[str] = ()
    title: str = ""
    tally: bool = False
    footer: Sequence[str] = ()
    collapse: int = 0
    collapse_hint: str = ""

    def all_problems(self) -> list[Problem]:
        """Every problem, sections first: what json and sarif list."""
        return [*(p for s in self.sections for p in s.problems), *self.problems]

    def shown(self) -> tuple[Sequence[Problem], list[str]]:
        """The top-level problems and notes a person reads: the brief when there is one, the
        summary left out of the notes (it is shown last)."""
        problems, notes = (
            (self.brief.problems, [*self.brief.notes, *self.notes])
            if self.brief
            else (
                self.problems,
                list(self.notes),
            )
        )
        return problems, [n for n in notes if not self.summary or n != self.summary]


REPORTERS: dict[str, ModuleType] = {mod.NAME: mod for mod in (text, jsondoc, github, sarif)}
FORMATS: tuple[str, ...] = tuple(REPORTERS)


def format_help(formats: Sequence[str] = FORMATS) -> str:
    """The ``--format`` option's help: each format's one line."""
    return "; ".join(f"{name}: {REPORTERS[name].HELP}" for name in formats) + "."


def write(rep: Report, fmt: str, out: TextIO) -> None:
    """Write ``rep`` to ``out`` in the format named ``fmt`` (a key of :data:`REPORTERS`), then flush:
    what a command writes to stderr next (failed items, hints) comes after it, as with ``click.echo``."""
    REPORTERS[fmt].write(rep, out)
    out.flush()


def report(
    problems: Sequence[Problem],
    fmt: str,
    out: TextIO,
    *,
    files_checked: int = 0,
    summary: bool = True,
    notes: Sequence[str] = (),
) -> None:
    """A problem list in ``fmt``; ``summary`` ends text with the count line."""
    write(Report(problems=problems, notes=notes, files_checked=files_checked, tally=summary), fmt, out)
