"""What the review app reads, loaded once and kept while its files stay unchanged: the one place it
loads the corpus, the rubrics, the rating sources and the raters' stores.

Everything goes through propeval's public loaders (:func:`propeval.corpus.load_corpus`,
:func:`propeval.judge.rubric.load_rubric`, the strict loader); a file changed on disk (by the app's
own actions, or by hand) is read again on the next request, found by its size, time and inode.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import PropevalError, UsageError
from propeval.loader import LoadError, load_jsonl, relative_path
from propeval.review.forms import FORMS, form_for
from propeval.review.rating import CASE_FILES, SHOWN, LabelStore, RatingSource, load_source, slug

if TYPE_CHECKING:
    from propeval.config import Config
    from propeval.corpus import Corpus
    from propeval.judge.rubric import Rubric
    from propeval.review.guide import Guide
    from propeval.review.runs_view import GradedFile, LedgerRow, RunView
    from propeval.workspace import Workspace as CoreWorkspace


SHEET_SLOT = "review sheet"  # propeval.memo's slot (with the sheet's path) for a sheet that loaded
COMPACT_AFTER = 0.3  # seconds after a save before its label file is written
# A folder's tree is walked again for changes (off the request) once its stamp is this old; the
# app's own actions call Workspace.invalidate, so only a hand edit waits this long to show.
TREE_SECONDS = 2.0


@dataclass
class SourceEntry:
    """A file the app offers to label, before it is read in full."""

    slug: str
    path: Path
    rubric: str
    kind: str  # "sheet" | "cases"
    title: str
    error: str = ""  # why it cannot be labelled (the page says so)


@dataclass
class _Cached:
    stamp: object
    value: object


def _tree_stamp(folder: Path) -> tuple[int, int]:
    """(files, latest change) under ``folder``: a corpus edited by hand or by an action changes it."""
    count, latest = 0, 0
    for dirpath, _dirs, files in os.walk(folder):
        latest = max(latest, os.stat(dirpath).st_mtime_ns)
        for name in files:
            try:
                latest = max(latest, os.stat(os.path.join(dirpath, name)).st_mtime_ns)
            except FileNotFoundError:
                continue
            count += 1
    return count, latest


def _file_stamp(path: Path) -> tuple[int, int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return (0, 0, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def sheet_fields(path: Path) -> list[str]:
    """The blank (label) fields a sheet's first row holds: what is neither shown nor its row id."""
    for _, row in load_jsonl(path):
        return [k for k in row if k not in SHOWN and k != "row"]
    return []


def pick_rubric(config: Config, path: Path, fields: Sequence[str], rubrics: Sequence[Rubric]) -> Rubric:
    """The rubric a sheet is labelled under: the one whose kind labels its fields (the gates'
    rubric when several do).

    Raises:
        UsageError: no rubric, or several, label those fields.
    """

    # A rubric of a kind the app has no form for (a pair verifier) labels no sheet.
    fits = [r for r in rubrics if r.kind in FORMS and form_for(r, fields).fields]
    if len(fits) == 1:
        return fits[0]
    default = config.settings.gates.rubric
    chosen = [r for r in fits if r.name == default]
    if chosen:
        return chosen[0]
    if fits:
        raise UsageError(
            f"{path}: rubrics {', '.join(r.name for r in fits)} all label its fields; say which with --rubric"
        )
    raise UsageError(
        f"{path}: its blank fields ({', '.join(fields) or 'none'}) are none that a rubric labels; "
        "make it with propeval agree sample --field ... (e.g. fact_score, propaganda, accuracy, tone)"
    )


@dataclass
class Workspace:
    """The corpus and the files of one review session (see the module docstring)."""

    config: Config
    labels: Path  # the raters' label folder
    sheets: Sequence[Path] = ()
    rubric: str | None = None  # the rubric of every sheet, when given
    humans: Sequence[Path] = ()  # human label files the run viewer compares with
    _cache: dict[str, _Cached] = field(default_factory=dict)
    _stores: dict[tuple[str, str], LabelStore] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _dirty: set[LabelStore] = field(default_factory=set)
    _wake: threading.Event = field(default_factory=threading.Event)
    _flushing: threading.Lock = field(default_factory=threading.Lock)
    _vouched: dict[Path, bytes] = field(default_factory=dict)  # sheets check_sheets found as they loaded before
    _compactor: threading.Thread | None = None
    _trees: dict[Path, tuple[float, tuple[int, int]]] = field(default_factory=dict)
    _walking: set[Path] = field(default_factory=set)
    _generation: int = 0
    _texts: dict[int, tuple[object, list[str]]] = field(default_factory=dict)

    @property
    def blind(self) -> bool:
        """A rating session: sheets to label, and nothing else served (no runs, ledger, dedup or
        gold cases, whose pages show models, verdicts and item ids)."""
        return bool(self.sheets)

    # ------------------------------------------------------------------ corpus and rubrics

    def workspace(self) -> CoreWorkspace:
        """The corpus as propeval's core reads it now: a :class:`propeval.workspace.Workspace` over
        this session's corpus (read again when a file changed), for the gates' readings."""
        from propeval.workspace import Workspace as CoreWorkspace

        return CoreWorkspace(self.config, corpus=self.corpus())

    def tree(self, folder: Path) -> tuple[int, int]:
        """``folder``'s tree stamp. Walking 10k files takes ~100-200 ms, so a request never waits for
        it once there is a stamp: one older than TREE_SECONDS is walked again on a thread, and the
        request after that sees the change (the app's own actions call :meth:`invalidate`)."""
        now = time.monotonic()
        with self._lock:
            hit = self._trees.get(folder)
            stale = hit is not None and now - hit[0] >= TREE_SECONDS and folder not in self._walking
            if stale:
                self._walking.add(folder)
        if hit is None:
            return self._walk(folder)
        if stale:
            threading.Thread(target=self._walk, args=(folder,), name="review-walk", daemon=True).start()
        return hit[1]

    def _walk(self, folder: Path) -> tuple[int, int]:
        started, generation = time.monotonic(), self._generation
        try:
            stamp = _tree_stamp(folder) if folder.is_dir() else (0, 0)
        except OSError:
            stamp = (-1, -1)
        with self._lock:
            if generation == self._generation:  # not begun before an invalidate: still true
                self._trees[folder] = (started, stamp)
            self._walking.discard(folder)
        return stamp

    def invalidate(self) -> None:
        """Forget the tree stamps: the app changed the corpus."""
        with self._lock:
            self._trees.clear()
            self._generation += 1

    def texts(self, rows: list[Any], text: Callable[[Any], str]) -> list[str]:
        """Each row's search text, case-folded, kept with the (cached) list of rows it belongs to."""
        with self._lock:
            hit = self._texts.get(id(rows))
            if hit is not None and hit[0] is rows:
                return hit[1]
        out = [text(r).casefold() for r in rows]
        with self._lock:
            if len(self._texts) > 16:
                self._texts.clear()
            self._texts[id(rows)] = (rows, out)
        return out

    def warm(self) -> None:
        """Read the corpus, the ledger and every graded run now (a thread at start), so that the
        first visit to a view does not wait for it."""
        from propeval.review.runs_view import graded_files

        with contextlib.suppress(PropevalError, OSError):
            self.corpus()
            self.ledger_rows()
            for graded in graded_files(self.config):
                self.run_view(graded, None)

    def corpus(self) -> Corpus:
        from propeval.corpus import load_corpus

        stamp = self.tree(self.config.questions)
        with self._lock:
            hit = self._cache.get("corpus")
            if hit is None or hit.stamp != stamp:
                hit = self._cache["corpus"] = _Cached(stamp, load_corpus(self.config))
            return hit.value  # type: ignore[return-value]

    def run_view(self, graded: GradedFile, human: Path | None) -> RunView:
        """Every row of a graded run (with ``human``'s labels), kept while its files stay unchanged."""
        from propeval.review.runs_view import run_view

        corpus = self.corpus()
        stamp = (self.tree(graded.path.parent), id(corpus), _file_stamp(human) if human else None)
        key = f"run:{graded.path}:{human}"
        with self._lock:
            hit = self._cache.get(key)
            if hit is None or hit.stamp != stamp:
                hit = self._cache[key] = _Cached(stamp, run_view(self.config, corpus, graded, human=human))
            return hit.value  # type: ignore[return-value]

    def ledger_rows(self) -> tuple[list[LedgerRow], str]:
        """Every active item's answerability record as the gate judges it, kept while the corpus,
        the ledger and the settings stay unchanged."""
        from propeval.review.runs_view import answerability_rows

        corpus = self.corpus()
        ledger = self.config.root / self.config.settings.gates.ledger_dir
        stamp = (id(corpus), self.tree(ledger), self.tree(self.rubrics_dir()))
        with self._lock:
            hit = self._cache.get("ledger")
            if hit is None or hit.stamp != stamp:
                hit = self._cache["ledger"] = _Cached(stamp, answerability_rows(self.workspace()))
            return hit.value  # type: ignore[return-value]

    def guide(self, source: RatingSource) -> Guide:
        """The rater's guidelines for ``source``'s rubric (examples only when labelling a sheet)."""
        from propeval.review.guide import guide_for

        rubric = source.rubric
        key = f"guide:{rubric.name}:{source.kind}"
        with self._lock:
            hit = self._cache.get(key)
            if hit is None or hit.stamp != rubric.hash:
                folder = self.rubrics_dir() / rubric.name
                guide = guide_for(rubric, folder, examples=source.kind == "sheet")
                hit = self._cache[key] = _Cached(rubric.hash, guide)
            return hit.value  # type: ignore[return-value]

    def rubrics_dir(self) -> Path:

        return self.config.root / self.config.settings.judge.rubrics_dir

    def rubric_names(self) -> list[str]:
        from propeval.judge.rubric import list_rubrics

        return list_rubrics(self.rubrics_dir()).names

    def load_rubric(self, name: str) -> Rubric:
        from propeval.judge.rubric import load_rubric

        folder = self.rubrics_dir() / name
        stamp = tuple(_file_stamp(p) for p in sorted(folder.glob("*")) if p.suffix in (".yaml", ".md"))
        with self._lock:
            hit = self._cache.get(f"rubric:{name}")
            if hit is None or hit.stamp != stamp:
                hit = self._cache[f"rubric:{name}"] = _Cached(
                    stamp, load_rubric(self.rubrics_dir(), name, root=self.config.root)
                )
            return hit.value  # type: ignore[return-value]

    # ------------------------------------------------------------------ rating sources

    def check_sheets(self) -> None:
        """Load every sheet named on the command line now, so a bad one stops the start; a sheet
        that loaded before under the same rubric and code, unchanged since (its stat stamp, as
        :mod:`propeval.memo` keeps it), is not read here but by :meth:`load_sheets` (a thread, once
        the socket listens: a 10k-row sheet is half a second of the start).

        Raises:
            LoadError: a sheet does not load; UsageError: its rubric cannot be told.
        """
        from propeval import memo

        for entry in self.sources():
            if entry.kind != "sheet":
                continue
            fact = self._sheet_fact(entry)
            slot = f"{SHEET_SLOT} {entry.path}"
            if fact is not None and memo.remembered(slot, fact):
                self._vouched[entry.path] = fact
                continue
            self.source(entry.slug)
            if fact is not None:
                memo.remember(slot, fact)

    def _sheet_fact(self, entry: SourceEntry) -> bytes | None:
        """What a sheet's load checked: the file's stat stamp, its rubric and the code that read it."""
        from propeval import memo

        if entry.error:
            return None
        code = hashlib.sha256()
        here = Path(__file__).parent
        for module in (here / "rating.py", here / "forms.py", here.parent / "loader.py"):
            code.update(module.read_bytes())
        return memo.file_fact(entry.path, entry.rubric, self.load_rubric(entry.rubric).hash, code.hexdigest())

    def load_sheets(self) -> None:
        """Read every sheet now (a thread at start: the first page waits for it on the lock and
        shows why, should one no longer load)."""
        for entry in self.sources():
            if entry.kind == "sheet":
                with contextlib.suppress(PropevalError, OSError):
                    self.source(entry.slug)

    def sources(self) -> list[SourceEntry]:
        """The sheets named on the command line, then each rubric's gold cases and candidates (read
        again when a sheet or the rubrics folder changed)."""
        stamp = (tuple(_file_stamp(p) for p in self.sheets), self.tree(self.rubrics_dir()))
        with self._lock:
            hit = self._cache.get("sources")
            if hit is None or hit.stamp != stamp:
                hit = self._cache["sources"] = _Cached(stamp, self._sources())
            return list(hit.value)  # type: ignore[call-overload]

    def _sources(self) -> list[SourceEntry]:
        out: list[SourceEntry] = []
        taken: set[str] = set()

        def unique(name: str) -> str:
            n, base = 2, name
            while name in taken:
                name, n = f"{base}-{n}", n + 1
            taken.add(name)
            return name

        rubrics: list[Rubric] = []
        errors: dict[str, str] = {}
        for name in self.rubric_names():
            try:
                rubrics.append(self.load_rubric(name))
            except LoadError as e:
                errors[name] = str(e)
        for path in self.sheets:
            entry = SourceEntry(unique(slug(path.stem)), path, self.rubric or "", "sheet", path.name)
            try:
                if not self.rubric:
                    entry.rubric = pick_rubric(self.config, path, sheet_fields(path), rubrics).name
            except (LoadError, UsageError) as e:
                entry.error = str(e)
            out.append(entry)
        for name in [] if self.blind else self.rubric_names():
            for file in CASE_FILES:
                path = self.rubrics_dir() / name / file
                if path.is_file():
                    what = "gold set" if file == CASE_FILES[0] else "gold candidates"
                    entry = SourceEntry(
                        unique(slug(f"{name}-{path.stem}")), path, name, "cases", f"{name}: {what} ({file})"
                    )
                    entry.error = errors.get(name, "")
                    out.append(entry)
        return out

    def entry(self, source_slug: str) -> SourceEntry:
        for e in self.sources():
            if e.slug == source_slug:
                return e
        raise KeyError(source_slug)

    def source(self, source_slug: str) -> RatingSource:
        """The source ``source_slug``, read again when its file changed.

        Raises:
            KeyError: no such source; LoadError, UsageError: it cannot be labelled.
        """
        entry = self.entry(source_slug)
        if entry.error:
            raise UsageError(entry.error)
        rubric = self.load_rubric(entry.rubric)
        stamp = (_file_stamp(entry.path), rubric.hash)
        with self._lock:
            hit = self._cache.get(f"source:{source_slug}")
            if hit is None or hit.stamp != stamp:
                vouched = self._vouched.pop(entry.path, None)
                src = load_source(
                    entry.path,
                    rubric,
                    root=self.config.root,
                    source_slug=entry.slug,
                    kind=entry.kind,
                    vouched=vouched is not None and vouched == self._sheet_fact(entry),
                )
                hit = self._cache[f"source:{source_slug}"] = _Cached(stamp, src)
                self._stores = {k: v for k, v in self._stores.items() if k[0] != source_slug}
            return hit.value  # type: ignore[return-value]

    def store(self, source_slug: str, rater: str) -> LabelStore:
        src = self.source(source_slug)
        with self._lock:
            key = (source_slug, rater)
            st = self._stores.get(key)
            if st is None or st.source is not src:
                st = self._stores[key] = LabelStore(src, self.labels, rater)
            return st

    # ------------------------------------------------------------------ compacting the raters' journals

    def saved(self, store: LabelStore) -> None:
        """Note a save: the store's label file is written from its journal shortly after (a
        background thread, at most one compaction at a time, so a save never waits for one)."""
        with self._lock:
            self._dirty.add(store)
            if self._compactor is None or not self._compactor.is_alive():
                self._compactor = threading.Thread(target=self._compact_loop, name="review-compact", daemon=True)
                self._compactor.start()
        self._wake.set()

    def _compact_loop(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(COMPACT_AFTER)  # a burst of keys is one compaction
            self._wake.clear()
            self.flush()

    def recover(self) -> list[str]:
        """Write the label files of saves that a stopped server left in the journals (a crash before
        its compaction); returns why any could not be (their saves stay in the journal)."""
        problems = []
        for entry in self.sources():
            folder = self.labels / entry.slug
            if entry.error or not folder.is_dir():
                continue
            for journal in folder.glob(".*.journal.jsonl"):
                try:
                    self.store(entry.slug, journal.name[1 : -len(".journal.jsonl")]).compact()
                except (PropevalError, OSError) as e:
                    problems.append(str(e))
        return problems

    def flush(self) -> list[str]:
        """Write every label file that has saves pending; returns why any could not be (kept pending).
        A flush waits for one under way (the background one), so that its files are written on return."""
        with self._flushing:
            with self._lock:
                stores, self._dirty = self._dirty, set()
            problems = []
            for store in stores:
                try:
                    store.compact()
                except (PropevalError, OSError) as e:
                    problems.append(str(e))
                    with self._lock:
                        self._dirty.add(store)
            return problems

    def shown_path(self, path: Path) -> str:
        """A path as the page shows it: relative to the corpus root when under it."""
        return relative_path(path, self.config.root)
