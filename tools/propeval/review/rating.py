"""Rating in the browser: what a rater labels (a source) and where each rater's labels go (a store).

A **source** is a file of answers to label, read by the strict loader:

* a *sheet* made by ``propeval agree sample`` (one row per line, named by ``row``; the blank fields
  are the labels), or
* *cases* in a rubric's gold format (``rubrics/<r>/gold.jsonl``, or ``gold-candidates.jsonl``
  beside it: ``id``, ``question``, ``facts``, ``frame_markers``, ``answer``; ``label`` optional).

Only the question, the answer, its language, the facts and the frame markers are shown: a row's
other fields (a model, a judge's verdict, a gold case's own ``label``, ``note`` and ``tags``) never
reach the page.

A **store** is one rater's label file, ``<labels folder>/<source>/<rater>.jsonl``, in exactly the
format ``propeval agree`` reads: for a sheet, the sheet itself with the rater's labels in its blank
fields (what the rater would type into it by hand, unlabelled rows left blank); for cases, one line
per case, ``id`` and the rubric's fields as a grade record writes them. An answer is labelled when
the rater's current choices are a valid label, and only then: an edit that makes them invalid
blanks its line (the file, the progress count and ``agree`` agree with the page). Beside it,
``.<rater>.state.json`` keeps what the rater set on each answer (also what is not a label yet:
three of four facts, a propaganda level still waiting for its quote), so that a closed tab loses
nothing and reopening resumes.

A save appends one line to ``.<rater>.journal.jsonl`` (fsynced), whatever the sheet's size; a
compaction (:meth:`LabelStore.compact`, shortly after, and when the server stops) writes the label
file and the state from it and drops what they now hold. Every write takes the rater's lock
(``.<rater>.lock``, so two servers or two tabs never interleave), and reading replays the journal
over the files, so nothing saved is lost at any point of a crash. A journal line holds the label its
save made too, so that readers without the server (``agree``, ``agree unblind``, the run viewer's
human labels) read a label file as :func:`label_rows` gives it: the file with its journal replayed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import UsageError
from propeval.fsutil import atomic_write
from propeval.loader import DEFAULT_LIMITS, LoadError, dumps_json, load_jsonl, load_written, relative_path
from propeval.result import Problem
from propeval.review.forms import Form, Outcome, Step, form_for

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric

RULE = "labels"
STATE_MAX_BYTES = 256 << 20
LOCK_TIMEOUT = 30.0
MAX_QUOTE = 2000
# What a page may show of a row; everything else (model, verdict, note, tags, label, ids) is not shown.
SHOWN = ("prompt", "question", "answer", "language", "facts", "frame_markers")
CASE_FILES = ("gold.jsonl", "gold-candidates.jsonl")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RatingUnit:
    """One answer to label, as the page shows it."""

    key: str  # the row id (sheet) or case id
    line: int
    question: str
    answer: str
    language: str
    facts: tuple[tuple[str, str], ...]  # (fact id, text)
    markers: tuple[tuple[str, str], ...]  # (language, text)
    base: dict[str, Any]  # the line of the rater's file before any label


@dataclass
class RatingSource:
    """A file of answers to label under one rubric."""

    slug: str
    kind: str  # "sheet" | "cases"
    path: Path
    relpath: str
    rubric: Rubric
    form: Form
    id_field: str
    units: list[RatingUnit]
    index: dict[str, int] = field(default_factory=dict)
    stamp: tuple[int, int, int] = (0, 0, 0)

    @property
    def fields(self) -> tuple[str, ...]:
        return self.form.fields

    def steps(self, unit: RatingUnit) -> list[Step]:
        return self.form.steps(unit.facts)


def _stamp(path: Path) -> tuple[int, int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return (0, 0, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def slug(text: str) -> str:
    """A folder name for a source: letters, digits, '.', '_' and '-'."""
    return _SLUG.sub("-", text).strip("-.")[:100] or "source"


def _fail(rel: str, line: int, message: str) -> LoadError:
    return LoadError(Problem(rel, line, 1, RULE, message))


def _pairs(value: Any, keys: tuple[str, str], rel: str, line: int, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    first, second = keys
    if type(value) is list:  # list comprehensions: 40k facts at 10k rows
        try:  # of what JSON makes, only an object is indexed by a string
            out = [(v[first], v[second]) for v in value]
        except (KeyError, TypeError):
            out = None
        if out is not None and {type(x) for pair in out for x in pair} <= {str}:
            return tuple(out)
    raise _fail(rel, line, f"{what} must be a list of objects with string {first!r} and {second!r}")


class _Doubt(ValueError):
    """The fast reading of a sheet met something only the strict loader can judge."""


def _strict_int(text: str) -> int:
    if len(text) > DEFAULT_LIMITS.max_number_chars:
        raise _Doubt(text[:20])
    return int(text)


def _strict_float(text: str) -> float:
    if len(text) > DEFAULT_LIMITS.max_number_chars:
        raise _Doubt(text[:20])
    return float(text)


def _no_nan(text: str) -> Any:
    raise _Doubt(text)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Doubt("duplicate key")
    return out


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _vouched_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a sheet that passed :func:`_rows` unchanged since (:mod:`propeval.memo`): the
    json module's plain parse of the whole file at once, a third of the time."""
    text = path.read_bytes().decode("utf-8")
    numbers = [i for i, line in enumerate(text.split("\n"), start=1) if line.strip()]
    rows = json.loads("[" + ",".join(line for line in text.split("\n") if line.strip()) + "]")
    if len(rows) != len(numbers) or not all(type(r) is dict for r in rows):
        raise _Doubt("the sheet changed")
    return list(zip(numbers, rows, strict=True))


def _rows(path: Path, root: Path | None = None, *, vouched: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a sheet, as :func:`propeval.loader.load_jsonl` reads them (strictly), but parsed
    by the json module under the same rules (no duplicate key, NaN, long number, lone surrogate,
    deep nesting or huge line: a line of at most 32 brackets nests at most 32 deep, and one of at
    most 100,000 characters holds at most as many nodes): a sheet a person filled is read in a
    fraction of the time. Anything the fast reading doubts sends the whole file through the strict
    loader, for its exact error."""
    if vouched:
        with contextlib.suppress(OSError, ValueError, RecursionError):
            return _vouched_rows(path)
    try:
        raw = path.read_bytes()
        if len(raw) > 1 << 30:
            raise _Doubt("size")
        text = raw.decode("utf-8")
        out = []
        for i, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            if (
                len(line) > min(DEFAULT_LIMITS.max_nodes, DEFAULT_LIMITS.max_bytes)
                or line.count("[") + line.count("{") > DEFAULT_LIMITS.max_depth
                or ("\\u" in line and _SURROGATE.search(line))
            ):
                raise _Doubt("only the strict loader can tell")
            row = json.loads(
                line,
                object_pairs_hook=_unique,
                parse_int=_strict_int,
                parse_float=_strict_float,
                parse_constant=_no_nan,
            )
            if not isinstance(row, dict):
                raise _Doubt("not a mapping")
            out.append((i, row))
        return out
    except (OSError, ValueError, RecursionError):  # _Doubt, JSON and Unicode errors are ValueErrors
        return list(load_jsonl(path, root=root))


def load_source(
    path: Path,
    rubric: Rubric,
    *,
    root: Path,
    source_slug: str | None = None,
    kind: str | None = None,
    vouched: bool = False,
) -> RatingSource:
    """Read a sheet or a cases file to label under ``rubric`` (``vouched``: it loaded before, and
    is unchanged since, so its lines need not be checked again against the strict loader's rules).

    Raises:
        LoadError: a line does not load, lacks its id or answer, repeats an id, or lacks the facts
            the rubric's fact states need; or the file holds nothing to label.
    """
    rel = relative_path(path, root)
    rows = _rows(path, root, vouched=vouched)
    if not rows:
        raise _fail(rel, 1, "the file holds no row to label")
    first = rows[0][1]
    kind = kind or ("sheet" if "row" in first else "cases")
    id_field = "row" if kind == "sheet" else "id"
    # a sheet's labels are its blank fields; a gold case is labelled with all the rubric's fields
    fields = [k for k in first if k not in SHOWN and k != "row"]
    form = form_for(rubric, fields)
    if kind == "cases":
        form = form_for(rubric, form.labelled)
    if not form.fields:
        asked = ", ".join(sorted(fields)) or "none"
        raise _fail(
            rel,
            rows[0][0],
            f"the sheet's blank fields ({asked}) are none of what rubric {rubric.name} labels "
            f"({', '.join(form.labelled)}); make it with propeval agree sample --field ..., or pick another rubric",
        )
    units: list[RatingUnit] = []
    index: dict[str, int] = {}
    blank = dict.fromkeys(form.fields)
    needs_facts = form.needs_facts()
    for line, row in rows:
        key = row.get(id_field)
        if not isinstance(key, str) or not key:
            raise _fail(rel, line, f"line has no {id_field!r} string; every line needs one")
        if key in index:
            raise _fail(rel, line, f"{id_field} {key!r} is given twice; keep one line")
        answer = row.get("answer")
        if not isinstance(answer, str):
            raise _fail(
                rel,
                line,
                f"{id_field} {key!r} has no answer text to rate; make the sheet from a file with answers "
                "(propeval agree sample of a grades file keeps each item's answer)",
            )
        question = row.get("prompt", row.get("question"))
        facts = _pairs(row.get("facts"), ("id", "text"), rel, line, "facts")
        if needs_facts and not facts:
            raise _fail(
                rel,
                line,
                f"{id_field} {key!r} has no facts, and rating {', '.join(form.fields)} needs them; "
                "make the sheet with --show facts (a grades file's sheet shows them by default)",
            )
        markers = _pairs(row.get("frame_markers"), ("language", "text"), rel, line, "frame_markers")
        language = row.get("language")
        base: dict[str, Any] = row if kind == "sheet" else {"id": key}  # the row is not used again
        base.update(blank)
        index[key] = len(units)
        units.append(
            RatingUnit(
                key,
                line,
                question if isinstance(question, str) else "",
                answer,
                language if isinstance(language, str) else "",
                facts,
                markers,
                base,
            )
        )
    name = source_slug or slug(path.stem if kind == "sheet" else f"{rubric.name}-{path.stem}")
    return RatingSource(name, kind, path, rel, rubric, form, id_field, units, index, _stamp(path))


def rater_name(value: str) -> str:
    """``value`` if it can name a rater's file; else UsageError."""
    from propeval import names

    value = value.strip()
    names.name(value, "rater name")
    return value


# --------------------------------------------------------------------------- the rater's files


@dataclass
class UnitState:
    """What the rater set on one answer."""

    values: dict[str, Any] = field(default_factory=dict)
    quote: str | None = None
    done: bool = False  # labelled: the rater's current choices are a valid label


@dataclass
class SaveResult:
    outcome: Outcome
    state: UnitState
    done: int  # units labelled, after this save


@dataclass
class _Snapshot:
    labels: dict[str, dict[str, Any]]  # key -> the label fields of a labelled unit (no key: not labelled)
    states: dict[str, UnitState]
    stamps: tuple[tuple[int, int, int], ...]
    journal_size: int = 0  # bytes of the journal read into this snapshot


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _thread_lock(path: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(str(path), threading.Lock())


class LabelStore:
    """One rater's label file for one source (see the module docstring)."""

    def __init__(self, source: RatingSource, folder: Path, rater: str) -> None:
        self.source = source
        self.rater = rater_name(rater)
        self.folder = folder / source.slug
        self.path = self.folder / f"{self.rater}.jsonl"
        self.state_path = self.folder / f".{self.rater}.state.json"
        self.journal_path = self.folder / f".{self.rater}.journal.jsonl"
        self.lock_path = self.folder / f".{self.rater}.lock"
        self._snapshot: _Snapshot | None = None
        self._lines: dict[str, str] = {}  # key -> its rendered line of the label file
        self._guard = _thread_lock(self.path)

    # ------------------------------------------------------------------ reading

    def _read_labels(self) -> dict[str, dict[str, Any]]:
        src = self.source
        out: dict[str, dict[str, Any]] = {}
        if not self.path.is_file():
            return out
        rel = self.path.as_posix()
        for line, row in _rows(self.path):
            key = row.get(src.id_field)
            if not isinstance(key, str) or key not in src.index:
                raise _fail(
                    rel,
                    line,
                    f"{src.id_field} {key!r} is not in {src.relpath}; this label file belongs to another source: "
                    "move it away or name another labels folder",
                )
            if key in out:
                raise _fail(rel, line, f"{src.id_field} {key!r} is labelled twice; keep one line")
            fields = {f: row.get(f) for f in src.fields}
            if any(v is not None for v in fields.values()):
                out[key] = fields
        return out

    def _read_states(self, labels: dict[str, dict[str, Any]]) -> dict[str, UnitState]:
        states: dict[str, UnitState] = {}
        if self.state_path.is_file():
            data = load_written(self.state_path, max_bytes=STATE_MAX_BYTES)
            units = data.get("units")
            if isinstance(units, dict):
                for key, s in units.items():
                    if key in self.source.index and isinstance(s, dict) and isinstance(s.get("values"), dict):
                        quote = s.get("quote")
                        states[key] = UnitState(dict(s["values"]), quote if isinstance(quote, str) else None)
        for key, fields in labels.items():  # the label file is the truth of what is labelled
            st = states.get(key)
            if st is None:
                values, quote = self.source.form.values_of(fields)
                st = states[key] = UnitState(values, quote)
            st.done = True
        return states

    def _replay(self, labels: dict[str, dict[str, Any]], states: dict[str, UnitState]) -> int:
        """Apply the journal's saves in order (:func:`read_journal`, each checked again as a save is);
        returns the bytes of its complete lines."""
        entries, size = read_journal(self.journal_path)
        for e in entries:
            try:
                _unit, clean, outcome = self._check(e.key, e.values, e.quote)
            except UsageError as err:
                raise _journal_error(self.journal_path, e.line, str(err)) from None
            self._apply(labels, states, e.key, UnitState(clean, e.quote), outcome)
        return size

    def snapshot(self) -> _Snapshot:
        """The labels and states as on disk (re-read only when a file changed)."""
        with self._guard:
            return self._current()

    def _stamps(self) -> tuple[tuple[int, int, int], ...]:
        return (_stamp(self.path), _stamp(self.state_path), _stamp(self.journal_path))

    def _current(self) -> _Snapshot:
        stamps = self._stamps()
        snap = self._snapshot
        if snap is None or snap.stamps != stamps:
            labels = self._read_labels()
            states = self._read_states(labels)
            size = self._replay(labels, states)
            snap = _Snapshot(labels, states, stamps, size)
            self._snapshot = snap
            self._lines = {}
        return snap

    def state(self, key: str) -> UnitState:
        return self.snapshot().states.get(key) or UnitState()

    def progress(self) -> tuple[int, int]:
        """(labelled, total): the answers whose current choices are a valid label."""
        return len(self.snapshot().labels), len(self.source.units)

    def first_open(self) -> int:
        """The index of the first unit not labelled yet (the last one when all are)."""
        snap = self.snapshot()
        for i, u in enumerate(self.source.units):
            if u.key not in snap.labels:
                return i
        return len(self.source.units) - 1

    # ------------------------------------------------------------------ writing

    def _check(self, key: str, values: dict[str, Any], quote: str | None) -> tuple[RatingUnit, dict[str, Any], Outcome]:
        src = self.source
        if key not in src.index:
            raise UsageError(f"{src.id_field} {key!r} is not in {src.relpath}")
        unit = src.units[src.index[key]]
        steps = {s.name: s for s in src.steps(unit)}
        clean: dict[str, Any] = {}
        for name, value in values.items():
            step = steps.get(name)
            if step is None:
                raise UsageError(f"{name!r} is not a choice on this answer")
            choice = step.choice(value)
            if choice is None:
                raise UsageError(f"{value!r} is not one of {[c.value for c in step.choices]} for {name}")
            clean[name] = choice.value
        if quote is not None and (not isinstance(quote, str) or len(quote) > MAX_QUOTE):
            raise UsageError(f"the quote is {len(str(quote))} characters; a quote is a phrase (at most {MAX_QUOTE})")
        return unit, clean, src.form.outcome(clean, quote, unit.facts, unit.answer)

    def _apply(
        self, labels: dict[str, dict[str, Any]], states: dict[str, UnitState], key: str, state: UnitState, out: Outcome
    ) -> None:
        # The label is the rater's current choices or nothing: an answer whose choices are no longer
        # a valid label is not labelled (its line goes blank), never left with its old label.
        state.done = out.fields is not None
        states[key] = state
        if out.fields is not None:
            labels[key] = out.fields
        else:
            labels.pop(key, None)
        self._lines.pop(key, None)

    def save(self, key: str, values: dict[str, Any], quote: str | None) -> SaveResult:
        """Set the rater's choices on one unit: one line appended to the rater's journal (fsynced),
        whatever the sheet's size; the label file follows at the next :meth:`compact`. The unit is
        labelled when its choices are complete and valid, and not labelled otherwise.

        Raises:
            UsageError: the unit, a step or a choice is unknown, or the quote is too long.
            LoadError: the label file on disk does not load (it is never overwritten then).
        """
        from filelock import FileLock, Timeout

        _unit, clean, outcome = self._check(key, values, quote)
        self.folder.mkdir(parents=True, exist_ok=True)
        # the label the save makes rides along (every field, null when not labelled), so that a
        # reader without the sheet and the rubric (agree, unblind) replays it: see label_rows
        label = dict.fromkeys(self.source.fields) | (outcome.fields or {})
        line = {"key": key, "values": clean, "quote": quote, "id_field": self.source.id_field, "label": label}
        entry = (dumps_json(line) + "\n").encode("utf-8")
        try:
            with self._guard, FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT):
                snap = self._current()
                if outcome.fields is not None and not self.path.exists():
                    # agree and unblind are given the label file, and read the journal beside it
                    self.path.touch()
                with self.journal_path.open("ab") as fh:
                    fh.truncate(snap.journal_size)  # a line a crash cut short (never answered) goes
                    fh.write(entry)
                    fh.flush()
                    os.fsync(fh.fileno())
                state = UnitState(clean, quote)
                self._apply(snap.labels, snap.states, key, state, outcome)
                snap.journal_size += len(entry)
                snap.stamps = self._stamps()
                return SaveResult(outcome, state, len(snap.labels))
        except Timeout:
            raise self._busy() from None

    def _busy(self) -> UsageError:
        return UsageError(
            f"{self.lock_path} is held by another writer for over {LOCK_TIMEOUT:.0f} s; "
            "is a second review server writing as this rater?"
        )

    def pending(self) -> bool:
        """Whether the journal holds saves the label file does not show yet."""
        return _stamp(self.journal_path)[1] > 0

    def compact(self) -> None:
        """Write the label file and the state from the journal, then drop what they now hold from it.

        The files are rendered outside the lock (a save goes on meanwhile); only the renames and the
        journal's new tail (the saves made while rendering) happen under it. A crash at any point
        leaves files whose replay gives the same labels.
        """
        from filelock import FileLock, Timeout

        with self._guard:
            if not self.pending():
                return
            snap = self._current()
            labels = dict(snap.labels)
            states = dict(snap.states)
            lines = dict(self._lines)
            upto = snap.journal_size
        text = self._render(labels, lines) if labels or self.path.exists() else None
        state_text = self._render_states(states)
        try:
            with self._guard, FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT):
                if self._current() is not snap:  # another process wrote meanwhile: compact next time
                    return
                tail = b""
                if snap.journal_size > upto:
                    with self.journal_path.open("rb") as fh:
                        fh.seek(upto)
                        tail = fh.read()
                    tail = tail[: tail.rfind(b"\n") + 1]  # a line a crash cut short (never answered) goes
                else:
                    self._lines = lines
                if text is not None:
                    atomic_write(self.path, text)
                atomic_write(self.state_path, state_text)
                if tail:
                    atomic_write(self.journal_path, tail)
                else:
                    self.journal_path.unlink(missing_ok=True)
                snap.journal_size = len(tail)
                snap.stamps = self._stamps()
        except Timeout:
            raise self._busy() from None

    def _render(self, labels: dict[str, dict[str, Any]], lines: dict[str, str]) -> str:
        for u in self.source.units:
            if u.key not in lines:
                line = dict(u.base)
                if u.key in labels:
                    line.update(labels[u.key])
                lines[u.key] = dumps_json(line) + "\n"
        return "".join(lines[u.key] for u in self.source.units)

    def _render_states(self, states: dict[str, UnitState]) -> str:
        units = {k: {"values": s.values, "quote": s.quote} for k, s in states.items()}
        return json.dumps({"source": self.source.relpath, "rater": self.rater, "units": units}, ensure_ascii=False)


# --------------------------------------------------------------------------- reading without the server


@dataclass(frozen=True)
class JournalEntry:
    """One save in a rater's journal: the rater's choices, and the label they made."""

    line: int
    key: str  # the unit's id
    values: dict[str, Any]
    quote: str | None
    id_field: str  # the label file's id field ("row" or "id")
    label: dict[str, Any]  # every label field, null when the choices are not a label


def journal_of(label_file: Path) -> Path:
    """The journal beside a rater's label file (``.<rater>.journal.jsonl``)."""
    return label_file.with_name(f".{label_file.stem}.journal.jsonl")


def _journal_error(path: Path, line: int, message: str) -> LoadError:
    return _fail(
        path.as_posix(),
        line,
        f"{message}; this journal holds saves not yet in {path.name[1 : -len('.journal.jsonl')]}.jsonl and was "
        "changed by another program: delete this line (its save is lost), or move the journal away and relabel",
    )


def read_journal(path: Path) -> tuple[list[JournalEntry], int]:
    """The saves in a rater's journal, in order, and the bytes of its complete lines.

    A last line without its newline was cut short by a crash (its save never answered) and is
    left out. Anything else that is not a save as :meth:`LabelStore.save` writes it is an error.

    Raises:
        LoadError: a line that is not such a save (naming the journal and the line), or a journal
            over STATE_MAX_BYTES.
    """
    try:
        with path.open("rb") as fh:
            raw = fh.read(STATE_MAX_BYTES + 1)
    except FileNotFoundError:
        return [], 0
    if len(raw) > STATE_MAX_BYTES:
        raise _journal_error(path, 1, f"the journal is over {STATE_MAX_BYTES >> 20} MiB")
    size = raw.rfind(b"\n") + 1
    out = []
    for n, line in enumerate(raw[:size].split(b"\n")[:-1], start=1):
        try:
            entry = json.loads(line, parse_constant=_no_nan)
        except (ValueError, RecursionError):
            raise _journal_error(path, n, "the line is not JSON") from None
        if not isinstance(entry, dict):
            raise _journal_error(path, n, "the line is not a JSON object")
        key, values, quote = entry.get("key"), entry.get("values"), entry.get("quote")
        id_field, label = entry.get("id_field"), entry.get("label")
        if not (
            isinstance(key, str)
            and key
            and isinstance(values, dict)
            and (quote is None or isinstance(quote, str))
            and id_field in ("row", "id")
            and isinstance(label, dict)
            and not {"row", "id"} & label.keys()
        ):
            raise _journal_error(
                path, n, "the line is not a save: it needs key, values, quote, id_field (row or id) and label"
            )
        out.append(JournalEntry(n, key, values, quote, id_field, label))
    return out, size


def label_rows(path: Path, root: Path | None = None) -> list[tuple[int, dict[str, Any]]]:
    """A rater's label file as its rater last saved it: the file's rows (read strictly), with the
    saves its journal holds (:func:`read_journal`) put into them, as the server's next compaction
    would write them. A unit the file has no line for yet gets one (numbered by its journal line).
    Every reader of label files (agree, unblind, the run viewer's human labels) reads them here.

    Raises:
        LoadError: the label file or its journal does not load.
    """
    journal = journal_of(path)
    rows = _rows(path, root)
    if not journal.is_file():
        return rows
    entries, _size = read_journal(journal)
    if not entries:
        return rows
    at: dict[tuple[str, str], dict[str, Any]] = {}
    for _line, row in rows:
        for id_field in ("row", "id"):
            key = row.get(id_field)
            if isinstance(key, str):
                at.setdefault((id_field, key), row)
    for e in entries:
        found = at.get((e.id_field, e.key))
        if found is None:
            found = at[(e.id_field, e.key)] = {e.id_field: e.key}
            rows.append((e.line, found))
        found.update(e.label)
    return rows


def label_files(folder: Path, source: RatingSource) -> list[Path]:
    """Every rater's label file for ``source`` under ``folder``."""
    where = folder / source.slug
    if not where.is_dir():
        return []
    return sorted(p for p in where.glob("*.jsonl") if not p.name.startswith("."))


def agree_command(source: RatingSource, files: Sequence[Path], cwd: Path) -> list[str]:
    """The ``propeval agree`` commands that compare the raters' files, one per agreeable field."""

    def shown(p: Path) -> str:
        try:
            return os.path.relpath(p, cwd)
        except ValueError:
            return p.as_posix()

    out = []
    # fact_states is compared fact by fact (each fact a unit, nominal); the quote is free text
    compared = [f for f in source.fields if f != "frame_adopted"]
    level = {"fact_score": " --level ordinal --labels 0,1,2,3,4,5", "propaganda": " --level ordinal --labels 0,1,2"}
    for f in compared:
        paths = " ".join(shown(p) for p in files) if len(files) >= 2 else "RATER1.jsonl RATER2.jsonl"
        out.append(f"propeval agree {paths} --field {f} --id-field {source.id_field}{level.get(f, '')}")
    return out
