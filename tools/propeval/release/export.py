"""``propeval export``: check the corpus, then write the release folder atomically."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from propeval.config import Config
from propeval.errors import UsageError
from propeval.filetypes import scan
from propeval.langtags import language_key
from propeval.release.card import render_card
from propeval.release.inputs import ReleaseInputs, load_inputs
from propeval.release.rows import active_items, item_row, to_jsonl, to_parquet, tombstone_rows
from propeval.release.stats import Stats, compute_stats
from propeval.result import Problem, Severity

SUMS_FILE = "SHA256SUMS"
RELEASE_FILES = ("README.md", "items.jsonl", "tombstones.jsonl", "data/test.parquet", SUMS_FILE)
SPLIT = "test"  # the one split: every item is for evaluation; the card's configs declare it


def data_files(languages: list[str]) -> dict[str, str]:
    """Config name -> its Parquet file: ``default`` (every item), then one per language."""
    return {"default": f"data/{SPLIT}.parquet"} | {lang: f"data/{lang}/{SPLIT}.parquet" for lang in languages}


@dataclass
class ExportResult:
    """What ``export_release`` did, or the problems that stopped it."""

    out: Path
    problems: list[Problem]
    files: list[str] = field(default_factory=list)
    stats: Stats | None = None

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


def _write_tree(out: Path, files: dict[str, bytes]) -> None:
    """Build the release next to ``out`` and rename it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
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


def export_release(config: Config, out: Path, *, inputs: ReleaseInputs | None = None) -> ExportResult:
    """Check the corpus, then write the release to ``out`` atomically.

    ``out`` must not exist, be an empty folder, or hold an earlier release (which is replaced).
    Check errors stop the export before anything is written.
    """
    from propeval.checker import check_corpus

    out = out.resolve()
    root = config.root.resolve()
    if out == root or root.is_relative_to(out):
        raise UsageError(f"--out {out} would replace the corpus itself; choose a new folder such as dist/release")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not _is_release(out))):
        raise UsageError(
            f"--out {out} exists and is not a propeval release (no {SUMS_FILE}); choose a new or empty folder"
        )
    checked = check_corpus(config)
    if checked.errors:
        return ExportResult(out, checked.problems)
    inputs = inputs or load_inputs(config)
    stats = compute_stats(inputs)
    files = _release_files(inputs, stats)
    _write_tree(out, files)
    return ExportResult(out, [*checked.problems, *inputs.warnings], sorted(files), stats)
