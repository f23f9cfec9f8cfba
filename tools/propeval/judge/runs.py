"""The run folder (``runs/<run_id>/``): ``run.json``, ``answers.jsonl``, ``grades-<rubric>.jsonl``.

The format is the contract in RUNS.md. Records are appended one whole line at a time, with
fsync, as each one finishes; a kill loses at most the requests in flight. Reading keeps the
last record per item, so a retried item supersedes its earlier error record. A line torn by a
kill is cut off before the next append, so it can never glue onto a new record. Files are read
as a stream, one line at a time, so no size of run file makes a run unreadable.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from propeval.errors import UsageError
from propeval.fsutil import append_line
from propeval.loader import Limits, LoadError, load_text, relative_path
from propeval.result import Problem

ANSWERS = "answers.jsonl"
RUN_FILE = "run.json"
FINAL_ANSWER = ("answered", "unanswered")
FINAL_GRADE = ("scored", "unscored", "unanswered")
MAX_LINE_BYTES = 4 << 20  # far above a record of capped replies; a longer line is skipped unread
_ITEM_ID = re.compile(rb'\{"item_id":\s*"([A-Za-z0-9._-]{1,64})"')
_UNREADABLE = f"the record is over {MAX_LINE_BYTES} bytes and was not read; the item is done again"
_LINE_LIMITS = Limits(max_bytes=MAX_LINE_BYTES, max_depth=32, max_nodes=200_000)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id(model: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")[:40] or "run"
    return f"{slug}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def grades_file(rubric: str) -> str:
    return f"grades-{rubric}.jsonl"


def resolve_run(runs_dir: Path, run: str) -> Path:
    """A run given as an id (under runs_dir) or as a folder path."""
    for candidate in (Path(run), runs_dir / run):
        if (candidate / ANSWERS).is_file() or (candidate / RUN_FILE).is_file():
            return candidate
    raise UsageError(f"no run {run!r}: neither {runs_dir / run} nor {run} holds {ANSWERS}; run `propeval answer` first")


def repair_tail(path: Path) -> bool:
    """Cut a torn last line (no trailing newline) so the next append starts a fresh line."""
    if not path.is_file():
        return False
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return False
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return False
        step = 4096
        pos = size
        while pos > 0:
            start = max(0, pos - step)
            fh.seek(start)
            chunk = fh.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                fh.truncate(start + i + 1)
                break
            pos = start
        else:
            fh.truncate(0)
        fh.flush()
        os.fsync(fh.fileno())
    return True


def records(
    path: Path, root: Path | None = None, oversized: list[int] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for each line of a run file, read as a stream.

    The file's size does not matter: one line is in memory at a time, and a line over
    :data:`MAX_LINE_BYTES` (a record written before replies were capped) is skipped unread, its
    number put in ``oversized``; when its ``item_id`` (written first) can be read from its start,
    a stand-in ``{"item_id": ..., "status": "unreadable"}`` takes its place, so the item counts
    as not done: `answer` and `grade` do it again and `score` counts it as ungraded. A bad line
    raises :class:`LoadError` with its number, except a torn last line (no trailing newline),
    which is an interrupted append and is skipped.
    """
    relpath = relative_path(path, root)
    with path.open("rb") as fh:
        n = 0
        while True:
            line = fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            n += 1
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                head = _ITEM_ID.match(line)
                while line and not line.endswith(b"\n"):
                    line = fh.readline(1 << 20)
                if oversized is not None:
                    oversized.append(n)
                if head:  # appenders write item_id first: the item is known, its record is not
                    yield n, {"item_id": head.group(1).decode(), "status": "unreadable", "error": _UNREADABLE}
                continue
            if not line.strip():
                continue
            try:
                rec = load_text(line, relpath, kind="json", limits=_LINE_LIMITS).data
            except LoadError as e:
                if not line.endswith(b"\n") and not fh.read(1):
                    return
                p = e.problem
                raise LoadError(Problem(relpath, n, p.col, p.rule, p.message)) from None
            except ValueError:  # an integer past Python's digit limit
                raise LoadError(
                    Problem(relpath, n, 1, "json-syntax", "an integer is too long to read; remove the line")
                ) from None
            yield n, rec


def latest(path: Path, root: Path | None = None, oversized: list[int] | None = None) -> dict[str, dict[str, Any]]:
    """The last record per item_id (a torn last line is skipped, see :func:`records`)."""
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    for _, rec in records(path, root, oversized):
        item_id = rec.get("item_id")
        if isinstance(item_id, str):
            out[item_id] = rec
    return out


def oversized_warnings(path: Path, lines: list[int], root: Path | None = None) -> list[Problem]:
    """Warnings for the lines :func:`records` skipped as too long."""
    from propeval.result import Severity

    relpath = relative_path(path, root)
    return [
        Problem(
            relpath,
            n,
            1,
            "run-record-size",
            f"record over {MAX_LINE_BYTES} bytes skipped unread (written before replies were capped); "
            "its item counts as not done and is asked again",
            severity=Severity.WARNING,
        )
        for n in lines
    ]


def dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def append(path: Path, record: dict[str, Any]) -> None:
    append_line(path, dump(record))


@contextlib.contextmanager
def locked(run_dir: Path, what: str) -> Iterator[None]:
    """One writer per run and file: a second `propeval grade` on the same run is refused."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = run_dir / f".{what}.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another propeval process is writing {what} in {run_dir}; wait for it to finish"
            ) from None
        yield
    finally:
        os.close(fd)
