"""``propeval export``: check the corpus, then write the release folder atomically.

The release is built in ``.<out>.<random>.tmp`` beside ``--out`` and renamed into place (an old
release is moved aside to ``.<out>.<random>.old`` first, and removed after). A SIGTERM or ^C during
the build undoes it; a kill -9 cannot be caught, so every export first removes what a killed one
left beside the same ``--out``, under a lock on the folder that holds ``--out`` (``flock`` on the
folder itself, so no lock file is left beside the release) that keeps two exports apart, and
says so. If the kill fell between the two renames, the old release is put back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from propeval.errors import UsageError
from propeval.filetypes import scan
from propeval.langtags import language_key
from propeval.release.card import render_card
from propeval.release.inputs import ReleaseInputs, load_inputs
from propeval.release.rows import active_items, data_files, item_row, to_jsonl, to_parquet, tombstone_rows
from propeval.release.stats import Stats, compute_stats
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.workspace import Workspace

SUMS_FILE = "SHA256SUMS"
RELEASE_FILES = ("README.md", "items.jsonl", "tombstones.jsonl", "data/test.parquet", SUMS_FILE)
# For the kill test only: pause (until killed) once the release is written to its temporary
# folder, before it is renamed into place. Unset, it does nothing.
PAUSE_ENV = "PROPEVAL_TEST_EXPORT_PAUSE"


@dataclass
class ExportResult:
    """What ``export_release`` did, or the problems that stopped it."""

    out: Path
    problems: list[Problem]
    files: list[str] = field(default_factory=list)
    stats: Stats | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if any(p.severity is Severity.ERROR for p in self.problems) else 0


def _release_files(inputs: ReleaseInputs, stats: Stats) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    rows = [item_row(inputs, i) for i in active_items(inputs.corpus)]
    files["items.jsonl"] = to_jsonl(rows).encode("utf-8")
    for config_name, path in data_files(sorted(stats.by_language)).items():
        files[path] = to_parquet(
            rows if config_name == "default" else [r for r in rows if language_key(r["language"]) == config_name]
        )
    files["tombstones.jsonl"] = to_jsonl(tombstone_rows(inputs.corpus)).encode("utf-8")
    rubrics = inputs.config.root / inputs.settings.rubrics_dir
    found = scan(rubrics, inputs.config.root)
    if found.problems:  # `propeval check` refuses these first; never ship what it would refuse
        p = found.problems[0]
        raise UsageError(f"{p.path} [{p.rule}] {p.message}")
    for f in found.files:
        rel_parts = f.relative_to(rubrics).parts
        if len(rel_parts) > 1 and not any(part.startswith(".") for part in rel_parts):
            files["rubrics/" + "/".join(rel_parts)] = _read_regular(f, inputs.config.root)
    files["README.md"] = render_card(inputs, stats).encode("utf-8")
    sums = "".join(f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files))
    files[SUMS_FILE] = sums.encode("utf-8")
    return files


def _read_regular(path: Path, root: Path) -> bytes:
    """The bytes of a plain regular file (the same guard as the loader's)."""
    from propeval.filetypes import RefusedFileError, open_regular

    rel = path.relative_to(root).as_posix()
    try:
        fd = open_regular(path, rel, root)
    except RefusedFileError as e:
        raise UsageError(f"{rel} [{e.problem.rule}] {e.problem.message}") from None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _is_release(folder: Path) -> bool:
    return (folder / SUMS_FILE).is_file() and (folder / "items.jsonl").is_file()


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt here (the CLI's "interrupted", exit 130), so the cleanup of
    a half-built release runs; outside the main thread signals cannot be set, and nothing changes."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def clean_leftovers(out: Path) -> list[str]:
    """Remove what a killed export left beside ``out`` (call it under the export lock): each
    ``.<out>.*.tmp`` folder, and each ``.<out>.*.old`` one, whose release is put back first when
    ``out`` itself is missing (a kill between the two renames). Returns a line per folder."""
    said: list[str] = []
    if not out.parent.is_dir():
        return said
    for entry in sorted(out.parent.iterdir()):
        name = entry.name
        if not name.startswith(f".{out.name}.") or entry.is_symlink() or not entry.is_dir():
            continue
        if name.endswith(".old") and (entry / "release").is_dir() and not os.path.lexists(out):
            os.rename(entry / "release", out)
            said.append(f"put back the release that a killed export had moved aside to {entry.name}")
        if name.endswith((".tmp", ".old")):
            shutil.rmtree(entry, ignore_errors=True)
            said.append(f"removed {entry.name}, left by an export that was killed")
    return said


def _write_tree(out: Path, files: dict[str, bytes]) -> list[str]:
    """Build the release next to ``out`` and rename it into place; returns what was cleaned up
    first (see :func:`clean_leftovers`)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with _folder_lock(out.parent), _terminate_as_interrupt():
        cleaned = clean_leftovers(out)
        _build_and_swap(out, files)
    return cleaned


@contextlib.contextmanager
def _folder_lock(folder: Path, wait: float = 60.0) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` itself (filelock locks files only, and a lock file
    would be left in the release's folder); UsageError when another export holds it ``wait`` s."""
    from propeval.fsutil import locked

    def busy() -> UsageError:
        return UsageError(f"another propeval export has been writing in {folder} for {wait:g} s; wait for it")

    with locked(folder, wait, busy):
        yield


def _build_and_swap(out: Path, files: dict[str, bytes]) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    old: Path | None = None
    try:
        for name, data in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for folder in sorted({p for p in tmp.rglob("*") if p.is_dir()} | {tmp}):
            folder.chmod(0o755)
        if os.environ.get(PAUSE_ENV):
            while True:  # the kill test's hook: wait here to be killed
                time.sleep(60)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rename(out, old / "release")
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and (old / "release").exists() and not out.exists():
            os.rename(old / "release", out)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def export_release(ws: Workspace, out: Path) -> ExportResult:
    """Check the corpus, then write the release to ``out`` atomically.

    ``out`` must not exist, be an empty folder, or hold an earlier release (which is replaced).
    Check errors stop the export before anything is written.
    """
    from propeval.checker import check_corpus

    out = out.resolve()
    root = ws.root.resolve()
    if out == root or root.is_relative_to(out):
        raise UsageError(f"--out {out} would replace the corpus itself; choose a new folder such as dist/release")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not _is_release(out))):
        raise UsageError(
            f"--out {out} exists and is not a propeval release (no {SUMS_FILE}); choose a new or empty folder"
        )
    checked = check_corpus(ws)
    if checked.errors:
        return ExportResult(out, checked.problems)
    inputs = load_inputs(ws)
    stats = compute_stats(inputs)
    files = _release_files(inputs, stats)
    cleaned = _write_tree(out, files)
    from propeval.release.card import citation

    if citation(inputs, stats).url is None:
        cleaned.append(
            "the card's citation has no URL: set [tool.propeval.release] url or hub_id (or give the repository "
            "an origin remote)"
        )
    return ExportResult(out, [*checked.problems, *inputs.warnings], sorted(files), stats, notes=cleaned)
