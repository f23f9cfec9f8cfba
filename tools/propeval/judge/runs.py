"""The run folder (``runs/<run_id>/``): ``run.json``, ``answers.jsonl``, ``grades-<rubric>.jsonl``.

The format is the contract in RUNS.md. This module is the one reader of run files:
:func:`read_graded` joins a run's answers with its grades under one rubric, validated, for
`score`, `report` and `difficulty` alike. Records are appended one whole line at a time, with
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import UsageError
from propeval.fsutil import append_line
from propeval.judge.kinds.base import Kind, Row
from propeval.judge.records import GRADE_STATUSES
from propeval.loader import LoadError, load_written, relative_path
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric

ANSWERS = "answers.jsonl"
RUN_FILE = "run.json"
# Present while a run's answers are incomplete: written when `answer` starts, rewritten with the
# tally when it stops short (the run deadline left items unasked, a fatal endpoint error), removed
# when it has asked every item (an item that failed for good is an error record, named by grade,
# score and report). A kill leaves it as `answer` wrote it at the start.
PARTIAL = "answers.partial"
FINAL_ANSWER = ("answered", "unanswered")
FINAL_GRADE = ("scored", "unscored", "unanswered")
MAX_LINE_BYTES = 4 << 20  # far above a record of capped replies; a longer line is skipped unread
_ITEM_ID = re.compile(rb'\{"item_id":\s*"([A-Za-z0-9._-]{1,64})"')
_UNREADABLE = f"the record is over {MAX_LINE_BYTES} bytes and was not read; the item is done again"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: bytes, relpath: str, n: int) -> dict[str, Any]:
    """One line of a run file, read with the standard parser: propeval wrote it, so the strict
    loader (meant for what people write, and 15x slower) is not needed. The size cap is the
    caller's (:data:`MAX_LINE_BYTES`); what is not one JSON object is a LoadError at ``n``."""

    def fail(col: int, rule: str, message: str) -> LoadError:
        return LoadError(Problem(relpath, n, col, rule, message))

    try:
        rec = json.loads(line, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise fail(e.colno, "json-syntax", f"{e.msg}; fix the JSON syntax") from None
    except UnicodeDecodeError:
        raise fail(1, "encoding", "the line is not UTF-8 text; remove the line") from None
    except RecursionError:
        raise fail(1, "json-depth", "the record nests too deeply to read; remove the line") from None
    except ValueError as e:  # NaN/Infinity, or an integer past Python's digit limit
        raise fail(1, "json-syntax", f"{e}; remove the line") from None
    if not isinstance(rec, dict):
        raise fail(1, "json-syntax", "a run record is one JSON object per line; remove the line")
    return rec


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
                rec = parse_line(line, relpath, n)
            except LoadError:
                if not line.endswith(b"\n") and not fh.read(1):
                    return
                raise
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


def writer_active(run_dir: Path, what: str) -> bool:
    """Whether a propeval process holds the lock of :func:`locked` (``what``) on ``run_dir`` now."""
    lock = run_dir / f".{what}.lock"
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def mark_partial(run_dir: Path, state: dict[str, Any]) -> None:
    """Say that the run's answers are incomplete, and why (see :data:`PARTIAL`)."""
    from propeval.fsutil import atomic_write

    atomic_write(run_dir / PARTIAL, dump(state) + "\n")


def clear_partial(run_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (run_dir / PARTIAL).unlink()


def answers_incomplete(run_dir: Path) -> str | None:
    """Why a run's answers are not all there yet, or None when `answer` finished the run (or the run
    predates the marker): `answer` is writing it now, or it stopped short (with its tally), or it
    was killed before it could say."""
    if writer_active(run_dir, "answers"):
        return f"`propeval answer` is still writing it (it holds {run_dir / '.answers.lock'})"
    path = run_dir / PARTIAL
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_bytes()[:65536])
    except (OSError, ValueError):
        state = {}
    if not isinstance(state, dict):
        state = {}
    if state.get("state") == "stopped":
        parts = [f"{state.get('answered', '?')} of {state.get('items', '?')} item(s) answered"]
        for key, what in (("errors", "failed for good"), ("unfinished", "left by the run deadline")):
            if state.get(key):
                parts.append(f"{state[key]} {what}")
        if state.get("failure"):
            parts.append(f"stopped by: {str(state['failure'])[:200]}")
        return "`propeval answer` stopped before every item had an answer (" + "; ".join(parts) + ")"
    return "`propeval answer` was stopped (killed or crashed) before it finished the run"


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


# --------------------------------------------------------------------------- graded runs

RECORD_RULE = "run-record"
_GRADES = re.compile(r"grades-(.+)\.jsonl")


@dataclass
class GradedRun:
    """One run under one rubric: a :class:`~propeval.judge.kinds.base.Row` per item (the latest
    answer joined with the latest grade), and the problems of the records that failed validation
    (those items count as ungraded; nothing unchecked reaches a figure)."""

    run: str
    rubric: str
    path: Path  # the grades file
    rows: list[Row] = field(default_factory=list)
    grade_records: int = 0  # items with a grade record (their latest one was read)
    lines: dict[str, int] = field(default_factory=dict)  # item_id -> line of its latest grade record
    problems: list[Problem] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # run.json (model, settings, knowledge_cutoff)
    partial: str | None = None  # why the run's answers are incomplete (answers_incomplete), or None


MAX_RUN_FILE = 1 << 20  # run.json holds a few settings; anything bigger is not one


def run_meta(run_dir: Path, *, root: Path | None = None, strict: bool = False) -> dict[str, Any]:
    """``run.json`` of a run (written by `answer`), read by :func:`propeval.loader.load_written`.

    It is {} when the file is missing, or is damaged (not UTF-8 JSON, not one object, over
    :data:`MAX_RUN_FILE` bytes); with ``strict``, a damaged file raises :class:`LoadError` that
    names its line, column and what is wrong, for `answer`, which must not resume a run it
    cannot check.
    """
    path = run_dir / RUN_FILE
    if not path.is_file():
        return {}
    try:
        return load_written(path, root=root, max_bytes=MAX_RUN_FILE)
    except LoadError:
        if strict:
            raise
        return {}


def rubric_of(grades: Path) -> str | None:
    """The rubric name in a grades file's name (``grades-<rubric>.jsonl``), if it is one."""
    m = _GRADES.fullmatch(grades.name)
    return m.group(1) if m else None


def find_graded(runs_dir: Path, rubric: str = "*") -> list[Path]:
    """Every grades file (``<runs_dir>/*/grades-<rubric>.jsonl``), sorted."""
    if not runs_dir.is_dir():
        return []
    return sorted(p for p in runs_dir.glob(f"*/grades-{rubric}.jsonl") if rubric_of(p))


def _latest_grades(path: Path, relpath: str, root: Path, out: GradedRun) -> dict[str, tuple[int, dict[str, Any]]]:
    latest: dict[str, tuple[int, dict[str, Any]]] = {}
    oversized: list[int] = []
    for n, rec in records(path, root, oversized):
        item_id = rec.get("item_id")
        if not isinstance(item_id, str) or not item_id:
            out.problems.append(Problem(relpath, n, 1, RECORD_RULE, "line has no item_id string"))
            continue
        latest[item_id] = (n, rec)
    out.problems += oversized_warnings(path, oversized, root)
    return latest


def _check_grade(rec: dict[str, Any], kind: Kind, rubric: Rubric | None) -> str | None:
    status = rec.get("status")
    if not isinstance(rec.get("model"), str) or not rec["model"]:
        return "line has no model string"
    if status not in GRADE_STATUSES:
        return f"status {status!r} is not one of {', '.join(GRADE_STATUSES)}"
    return kind.check_record(rec, rubric) if status == "scored" else None


def read_graded(
    grades: Path,
    kind: Kind,
    *,
    root: Path,
    rubric: Rubric | None = None,
    items: Mapping[str, dict[str, Any]] | None = None,
) -> GradedRun:
    """Read one grades file and its run's ``answers.jsonl``: the one reader of graded runs.

    The latest record per item wins (a retry supersedes an error). Every latest grade record is
    validated (a status it knows, a model, and for a scored one the fields ``kind`` requires);
    one that fails is a problem at its file and line and its item counts as ungraded. An item
    is in the run when it has an answer or a grade. Its metadata (language, framing, ...) is the
    answer's, else ``items[item_id]`` (from the corpus), else empty. A line that is not JSON
    raises :class:`LoadError` with its number.
    """
    run_dir = grades.parent
    relpath = relative_path(grades, root)
    out = GradedRun(run_dir.name, rubric.name if rubric else rubric_of(grades) or grades.stem, grades)
    out.meta = run_meta(run_dir)
    out.partial = answers_incomplete(run_dir)
    answers = latest(run_dir / ANSWERS, root)
    graded = _latest_grades(grades, relpath, root, out) if grades.is_file() else {}
    out.grade_records = len(graded)
    out.lines = {item_id: n for item_id, (n, _) in graded.items()}
    for item_id in sorted(answers.keys() | graded.keys()):
        ans = answers.get(item_id, {})
        n, grade = graded.get(item_id, (0, None))
        model = (grade or {}).get("model") or ans.get("model")  # a grade that fails below still names it
        if grade is not None and grade.get("status") == "unreadable":
            grade = None  # the stand-in for an oversized line, already warned about: ungraded
        if grade is not None:
            why = _check_grade(grade, kind, rubric)
            if why is not None:
                out.problems.append(Problem(relpath, n, 1, RECORD_RULE, why))
                grade = None
        status = grade.get("status") if grade else None
        meta: dict[str, Any] = ans["item"] if isinstance(ans.get("item"), dict) else (items or {}).get(item_id, {})
        out.rows.append(
            Row(
                run=out.run,
                item_id=item_id,
                model=str(model) if model is not None else "?",
                status=status if status in FINAL_GRADE else "ungraded",
                item=meta,
                grade=grade,
                answer=ans or None,
            )
        )
    return out


class Runs:
    """The graded runs under a runs folder as one :class:`~propeval.workspace.Workspace` sees them:
    the folder listed once per rubric, and each grades file read (with :func:`read_graded`) once."""

    def __init__(self, root: Path, runs_dir: str, items: Callable[[], Mapping[str, dict[str, Any]]]) -> None:
        self.root = root
        self.dir = runs_dir
        self.folder = root / runs_dir
        self._items_of = items
        self._found: dict[str, list[Path]] = {}
        self._read: dict[tuple[str, str, bool], GradedRun] = {}

    def graded(self, rubric: str = "*") -> list[Path]:
        """Every grades file of ``rubric`` (``*``: of any rubric), sorted."""
        if rubric not in self._found:
            self._found[rubric] = find_graded(self.folder, rubric)
        return self._found[rubric]

    def read(self, grades: Path, rubric: Rubric, *, corpus_items: bool = True) -> GradedRun:
        """:func:`read_graded` of ``grades`` under ``rubric``; with ``corpus_items`` an item's
        metadata falls back to the corpus's (its language) when its answer has none."""
        key = (str(grades), rubric.hash, corpus_items)
        if key not in self._read:
            items = self._items_of() if corpus_items else None
            self._read[key] = read_graded(grades, rubric.spec, root=self.root, rubric=rubric, items=items)
        return self._read[key]
