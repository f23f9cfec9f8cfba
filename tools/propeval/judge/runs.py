"""The run folder (``runs/<run_id>/``): ``run.json``, ``answers.jsonl``, ``grades-<rubric>.jsonl``.

The format is the contract in RUNS.md. Records are appended one whole line at a time, with
fsync, as each one finishes; a kill loses at most the requests in flight. Reading keeps the
last record per item, so a retried item supersedes its earlier error record. A line torn by a
kill is cut off before the next append, so it can never glue onto a new record.
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
from propeval.loader import load_jsonl

ANSWERS = "answers.jsonl"
RUN_FILE = "run.json"
FINAL_ANSWER = ("answered", "unanswered")
FINAL_GRADE = ("scored", "unscored", "unanswered")


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


def latest(path: Path, root: Path | None = None) -> dict[str, dict[str, Any]]:
    """The last record per item_id (a torn last line is skipped by the loader)."""
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    for _, rec in load_jsonl(path, root=root):
        item_id = rec.get("item_id")
        if isinstance(item_id, str):
            out[item_id] = rec
    return out


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
