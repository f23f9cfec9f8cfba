"""What an import would write, shared by the two importers: the planned files and the problems.

:mod:`propeval.ingest.from_table` plans a CSV or JSONL file, :mod:`propeval.ingest.from_release`
a release folder; :mod:`propeval.ingest.staging` writes either plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from propeval.ingest.table import Row
from propeval.result import Problem, Severity

# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Planned:
    """One file to write: ``questions/<folder>/<name>``, its data, and the row it comes from."""

    folder: str
    name: str
    data: dict[str, Any]
    origin: Row
    # data field -> the input field it came from, to point a problem at its column
    sources: dict[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    files: list[Planned] = field(default_factory=list)
    skipped: list[tuple[Row, str]] = field(default_factory=list)  # rows already imported, and as what
    rubrics: dict[str, bytes] = field(default_factory=dict)  # "rubrics/<name>/<file>" -> bytes
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: int = 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]


def formula_problem(row: Row, name: str, text: str) -> Problem | None:
    """The problem of a text a spreadsheet would run as a formula; None for any other text."""
    if text.startswith(FORMULA_START):
        return row.problem(
            name,
            "import-formula",
            f"the text starts with {text[:1]!r}, which a spreadsheet runs as a formula",
            "rewrite it so it does not start with =, +, -, @, a tab or a carriage return",
        )
    return None


def claim_title(anchor: str, url: str) -> str:
    """A claim's title made up from its anchor and its source's host, for input that gives none."""
    try:
        host = (urlsplit(url).hostname or url).removeprefix("www.")
    except ValueError:  # not a URL urlsplit can read: the title names it as written
        host = url
    return f"{anchor} ({host})"[:200]
