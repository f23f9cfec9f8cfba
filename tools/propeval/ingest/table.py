"""Rows of an input file: JSON Lines, a JSON array, CSV/TSV, plain text (one prompt per line), or
a release folder's ``items.jsonl``, each cell located.

Every input goes through the strict loader: a JSON Lines line is one mapping loaded by
:func:`propeval.loader.load_jsonl` (depth, size, duplicate keys, encoding); a ``.json`` file is one
array read by :func:`propeval.loader.load_json_array` (each element a mapping of fields, or a text:
a prompt); a CSV file's or a ``.txt`` file's text is read by :func:`propeval.loader.read_text`
(UTF-8, a byte-order mark dropped as Excel's "CSV UTF-8" writes one, no NUL byte, a size cap),
CSV split by the standard ``csv`` module in strict mode, text by lines (each non-blank line a
row whose ``prompt`` it is). A row keeps the line it starts on and, for CSV, the column number
of each field, so every problem names
``file:row:column``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from propeval.loader import DEFAULT_LIMITS, LoadError, load_jsonl, read_text
from propeval.result import Problem

# The largest input file import and overlap read, and the most rows they take from one file.
MAX_INPUT_BYTES = 256 * 1024 * 1024
MAX_ROWS = 200_000
# A CSV cell longer than this is refused before it becomes a string in a field (csv's own limit
# is 128 KiB; the schema's longest text is 4,000 characters).
MAX_CELL = 65_536


class InputError(LoadError):
    """The input file as a whole cannot be read (its problem names the file and where)."""


@dataclass
class Row:
    """One record of the input, its fields, and where each came from."""

    path: str  # the input file as the user named it
    line: int  # the line the row starts on (1-based)
    number: int  # the row's number among the data rows (1-based)
    fields: dict[str, Any]
    columns: dict[str, int] = field(default_factory=dict)  # field -> 1-based column (CSV)

    def col(self, name: str) -> int:
        return self.columns.get(name, 1)

    def problem(self, name: str | None, rule: str, message: str, fix: str = "") -> Problem:
        """A problem at this row (and the column of ``name``, when given)."""
        where = f"row {self.number}" + (f", column {name!r}" if name else "")
        return Problem(
            self.path,
            self.line,
            self.col(name) if name else 1,
            rule,
            f"{where}: {message}" + (f"; {fix}" if fix else ""),
            pointer=f"/{name}" if name else "",
            fix=fix,
        )


def _fail(path: str, line: int, col: int, message: str) -> InputError:
    return InputError(Problem(path, line, col, "import-input", message))


def read_rows(path: Path, shown: str, *, max_bytes: int | None = None) -> list[Row]:
    """The rows of a ``.jsonl`` or ``.csv`` file (by suffix).

    Raises:
        InputError / LoadError: the file cannot be read, or a line or row is malformed.
    """
    max_bytes = MAX_INPUT_BYTES if max_bytes is None else max_bytes
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return list(_jsonl_rows(path, shown, max_bytes))
    if suffix == ".json":
        return _json_array_rows(path, shown, max_bytes)
    if suffix in (".csv", ".tsv"):
        return list(_csv_rows(path, shown, max_bytes, "\t" if suffix == ".tsv" else ","))
    if suffix == ".txt":
        return _text_rows(path, shown, max_bytes)
    raise _fail(
        shown, 1, 1, f"unknown input type {suffix or '(no suffix)'!r}; give a .jsonl, .json, .csv, .tsv or .txt file"
    )


# A JSON array of rows holds more values than one corpus file may: 64 per row is far above any real
# row (a CPE row has about 20) and keeps a hostile file's cost bounded.
ARRAY_LIMITS = replace(DEFAULT_LIMITS, max_nodes=64 * MAX_ROWS)


def _json_array_rows(path: Path, shown: str, max_bytes: int) -> list[Row]:
    """The rows of a JSON array: each element a mapping of fields, or a text (its prompt)."""
    from propeval.loader import load_json_array

    try:
        elements = load_json_array(path, limits=ARRAY_LIMITS, max_file_bytes=max_bytes)
    except LoadError as e:
        p = e.problem
        fix = p.fix or ("give a JSON array of rows ([{...}, ...]); JSON Lines (one object a line) go in a .jsonl file")
        raise InputError(Problem(shown, p.line, p.col, p.rule, p.message, fix=fix)) from None
    if len(elements) > MAX_ROWS:
        raise _fail(shown, elements[MAX_ROWS][0], 1, f"more than {MAX_ROWS} rows; split the file")
    rows = []
    for n, (line, value) in enumerate(elements, start=1):
        if isinstance(value, str):
            value = {"prompt": value}
        if not isinstance(value, dict):
            what = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
            raise _fail(shown, line, 1, f"element {n} of the array is {what}; give each row as an object or a text")
        rows.append(Row(shown, line, n, value))
    return rows


def _text_rows(path: Path, shown: str, max_bytes: int) -> list[Row]:
    """One row per non-blank line of a text file: its ``prompt``."""
    try:
        text = read_text(path, max_bytes=max_bytes, bom=True)
    except LoadError as e:
        p = e.problem
        raise InputError(Problem(shown, p.line, p.col, p.rule, p.message, fix=p.fix)) from None
    rows: list[Row] = []
    # Lines end at "\n" only (an editor counts lines so): U+2028 and the like stay inside a prompt.
    for line, content in enumerate(text.split("\n"), start=1):
        prompt = content.strip()
        if not prompt:
            continue
        if len(rows) >= MAX_ROWS:
            raise _fail(shown, line, 1, f"more than {MAX_ROWS} rows; split the file")
        if len(prompt) > MAX_CELL:
            raise _fail(shown, line, 1, f"line {line} is {len(prompt)} characters long")
        rows.append(Row(shown, line, len(rows) + 1, {"prompt": prompt}))
    if not rows:
        raise _fail(shown, 1, 1, "the file has no prompt; give one prompt per line")
    return rows


def _jsonl_rows(path: Path, shown: str, max_bytes: int) -> Iterator[Row]:
    try:
        for n, (line, data) in enumerate(
            load_jsonl(path, limits=DEFAULT_LIMITS, max_file_bytes=max_bytes, complete=True), start=1
        ):
            if n > MAX_ROWS:
                raise _fail(shown, line, 1, f"more than {MAX_ROWS} rows; split the file")
            yield Row(shown, line, n, data)
    except InputError:
        raise
    except LoadError as e:
        p = e.problem
        raise InputError(Problem(shown, p.line, p.col, p.rule, p.message, fix=p.fix)) from None


def _csv_rows(path: Path, shown: str, max_bytes: int, delimiter: str) -> Iterator[Row]:
    try:
        text = read_text(path, max_bytes=max_bytes, bom=True)
    except LoadError as e:
        p = e.problem
        raise InputError(Problem(shown, p.line, p.col, p.rule, p.message, fix=p.fix)) from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for n, cells in enumerate(reader):
            line = start
            start = reader.line_num + 1
            if header is None:
                header = [c.strip() for c in cells]
                dupes = sorted({h for h in header if header.count(h) > 1})
                if dupes or any(not h for h in header):
                    what = f"repeats {', '.join(map(repr, dupes))}" if dupes else "has an empty column name"
                    raise _fail(shown, line, 1, f"the header row {what}; give every column one unique name")
                continue
            if not any(c.strip() for c in cells):
                continue
            if n > MAX_ROWS:
                raise _fail(shown, line, 1, f"more than {MAX_ROWS} rows; split the file")
            if len(cells) != len(header):
                raise _fail(
                    shown,
                    line,
                    1,
                    f"row {n} has {len(cells)} cells but the header has {len(header)} columns; "
                    "quote cells that hold the delimiter, a quote or a line break",
                )
            for c, cell in enumerate(cells, start=1):
                if len(cell) > MAX_CELL:
                    raise _fail(shown, line, c, f"row {n}, column {header[c - 1]!r} is {len(cell)} characters long")
            yield Row(shown, line, n, dict(zip(header, cells, strict=True)), {h: i for i, h in enumerate(header, 1)})
    except csv.Error as e:
        raise _fail(
            shown, reader.line_num or 1, 1, f"CSV syntax: {e}; quote the cell and double any quote in it"
        ) from None
    if header is None:
        raise _fail(shown, 1, 1, "the file is empty; give a header row and data rows")
