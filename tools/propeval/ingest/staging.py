"""The import run: read, plan, render through ``new``'s writer, stage, validate, move into place.

Nothing is half-imported. The new files are written to a staging copy of the corpus
(``.propeval-import/`` at the corpus root, under ``new``'s id lock), where ``check``, ``groups``
and ``dedup`` run over the corpus as it would be. Only when the staged corpus has no blocking
problem are the new claim folders (new items of a claim already in the corpus, and a release's
rubric folders) renamed into place, one ``rename`` each. Before the first rename, the list of
renames is written to a journal (``.propeval-import/journal.json``, atomically); it is removed
after the last. If a rename fails, those already done are undone. If the process is killed
between two renames, the next ``propeval import`` (of anything) finds the journal and finishes
the renames before it does anything else (:func:`finish_interrupted`): the staged files had
passed validation, so the interrupted import ends as it would have.

Importing the same input again imports nothing twice: a table row already imported (its id, or
without one its content, recorded in the item's notes) is skipped and counted, as is a release
file already in the corpus with the same content. Exact duplicates of corpus text (dedup's exact
pass, which always runs) block an import unless ``allow_duplicates``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.corpus import CLAIM_FILE, IMPORT_JOURNAL, IMPORT_STAGE, corpus_scan
from propeval.errors import UsageError
from propeval.fsutil import atomic_write
from propeval.ingest.from_release import plan_release
from propeval.ingest.from_table import Options, imported_rows, plan_table
from propeval.ingest.plan import Plan, Planned
from propeval.ingest.table import MAX_INPUT_BYTES, InputError, Row, read_rows
from propeval.loader import LoadError
from propeval.progress import Phase
from propeval.result import Problem, Severity

STAGE = IMPORT_STAGE
JOURNAL = IMPORT_JOURNAL
SUMS_FILE = "SHA256SUMS"
# For the kill test only: pause (until killed) after this many renames. Unset, it does nothing.
PAUSE_ENV = "PROPEVAL_TEST_IMPORT_PAUSE_AFTER"


@dataclass
class ImportResult:
    """What an import found, and what it wrote (nothing on a dry run or when blocked)."""

    source: str
    kind: str  # "release" | "table"
    rows: int = 0
    claims: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    rubrics: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: bool = False
    dry_run: bool = False
    skipped: int = 0  # rows (release files) already imported, left as they are
    finished: int = 0  # renames of an interrupted import finished first

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "kind": self.kind,
            "rows": self.rows,
            "claims": self.claims,
            "items": self.items,
            "rubrics": self.rubrics,
            "written": self.written,
            "dry_run": self.dry_run,
            "skipped": self.skipped,
            "finished_interrupted": self.finished,
            "problems": [p.to_dict() for p in self.problems],
            "notes": self.notes,
        }


@dataclass
class Validation:
    """Which corpus-wide checks run on the staged corpus, and which of them block the import."""

    dedup_passes: tuple[str, ...] = ("exact", "lexical", "semantic")
    strict: bool = False  # groups and dedup errors block too (check errors always do)
    allow_duplicates: bool = False  # exact duplicates of corpus text do not block (they always do else)


def _sums(folder: Path, shown: str) -> dict[str, str]:
    """name -> sha256 of a release's SHA256SUMS, each name a plain relative path inside the folder."""
    from propeval.loader import read_text

    try:
        text = read_text(folder / SUMS_FILE)
    except LoadError as e:
        raise InputError(replace(e.problem, path=f"{shown}/{SUMS_FILE}")) from None
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        parts = name.split("/")
        if (
            not sep
            or len(digest) != 64
            or not name
            or name.startswith("/")
            or any(p in ("", ".", "..") for p in parts)
            or "\\" in name
        ):
            raise InputError(
                Problem(
                    f"{shown}/{SUMS_FILE}",
                    n,
                    1,
                    "import-sums",
                    f"line {n} is not '<sha256>  <relative path inside the release>'",
                    fix="export the release again",
                )
            )
        out[name] = digest
    return out


def _read_verified(folder: Path, shown: str, name: str, digest: str) -> bytes:
    from propeval.filetypes import RefusedFileError, open_regular

    path = folder / name
    try:
        fd = open_regular(path, f"{shown}/{name}", None)
    except RefusedFileError as e:
        raise InputError(e.problem) from None
    except OSError as e:
        raise InputError(Problem(f"{shown}/{name}", 1, 1, "import-input", f"cannot read: {e.strerror}")) from None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES or hashlib.sha256(data).hexdigest() != digest:
        raise InputError(
            Problem(
                f"{shown}/{name}",
                1,
                1,
                "import-sums",
                f"{name} does not match its line in {SUMS_FILE}: the release was changed after export",
                fix="import an unmodified release, or export it again",
            )
        )
    return data


def _complete(folder: Path, shown: str, sums: dict[str, str]) -> None:
    """Every file of the release folder is listed in SHA256SUMS, every listed file is there, and
    each matches its hash (read in chunks: a Parquet file may be large); InputError names the first
    that does not. Nothing but regular files and folders may be in it."""
    from propeval.filetypes import RefusedFileError, open_regular

    present: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        for d in list(dirnames):
            if (base / d).is_symlink():
                filenames.append(d)  # a link to a folder is refused as a file below
                dirnames.remove(d)
        for name in filenames:
            present.add((base / name).relative_to(folder).as_posix())
    present.discard(SUMS_FILE)
    fix = "the release was changed after export: import an unmodified release, or export it again"
    unlisted, missing = sorted(present - sums.keys()), sorted(sums.keys() - present)
    if unlisted:
        raise InputError(
            Problem(
                f"{shown}/{unlisted[0]}",
                1,
                1,
                "import-sums",
                f"{len(unlisted)} file(s) in the release folder but not in {SUMS_FILE} ({_names(unlisted)}): added "
                "after export, or an export cut short; nothing in a release is trusted unless its hash is listed",
                fix=fix,
            )
        )
    if missing:
        raise InputError(
            Problem(
                f"{shown}/{SUMS_FILE}",
                1,
                1,
                "import-sums",
                f"{len(missing)} file(s) listed in {SUMS_FILE} but not in the release folder ({_names(missing)}): "
                "the release is incomplete",
                fix=fix,
            )
        )
    for name in sorted(present):
        try:
            fd = open_regular(folder / name, f"{shown}/{name}", None)
        except RefusedFileError as e:
            raise InputError(e.problem) from None
        except OSError as e:
            raise InputError(Problem(f"{shown}/{name}", 1, 1, "import-input", f"cannot read: {e.strerror}")) from None
        with os.fdopen(fd, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        if digest != sums[name]:
            raise InputError(
                Problem(
                    f"{shown}/{name}",
                    1,
                    1,
                    "import-sums",
                    f"{name} does not match its line in {SUMS_FILE}: the release was changed after export",
                    fix="import an unmodified release, or export it again",
                )
            )


def _names(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def read_release(folder: Path, shown: str) -> tuple[list[Row], list[Row], dict[str, bytes]]:
    """items.jsonl and tombstones.jsonl rows and the rubric files of a release, after the whole
    folder is checked against SHA256SUMS (:func:`_complete`)."""
    sums = _sums(folder, shown)
    for name in ("items.jsonl", "tombstones.jsonl"):
        if name not in sums:
            raise InputError(
                Problem(f"{shown}/{SUMS_FILE}", 1, 1, "import-sums", f"{name} is not listed", fix="export it again")
            )
    _complete(folder, shown, sums)
    rubrics = {n: _read_verified(folder, shown, n, d) for n, d in sorted(sums.items()) if n.startswith("rubrics/")}
    for name in ("items.jsonl", "tombstones.jsonl"):
        _read_verified(folder, shown, name, sums[name])
    items = read_rows(folder / "items.jsonl", f"{shown}/items.jsonl")
    tombstones = read_rows(folder / "tombstones.jsonl", f"{shown}/tombstones.jsonl")
    return items, tombstones, rubrics


def is_release(path: Path) -> bool:
    return path.is_dir() and (path / SUMS_FILE).is_file() and (path / "items.jsonl").is_file()


def import_source(
    config: Config,
    source: Path,
    options: Options,
    *,
    dry_run: bool = False,
    validation: Validation | None = None,
    announce: Callable[[str], None] | None = None,
    progress: Phase | None = None,
) -> ImportResult:
    """Import a release folder or a table (CSV, TSV, JSONL, a JSON array, or text: one prompt a
    line) into the corpus at ``config``. ``progress(what, done, total)`` hears each step.

    Raises:
        UsageError: the source is neither a release folder nor a file of a known type.
    """
    from propeval.scaffold import allocation_lock, next_id

    step: Phase = progress or (lambda what, done, total: None)
    step("reading", 0, 0)
    validation = validation or Validation()
    shown = str(source)
    release = source.is_dir()
    if release and not is_release(source):
        raise UsageError(
            f"{shown} is a folder but not a release (no {SUMS_FILE} and items.jsonl); give a file or a release"
        )
    result = ImportResult(shown, "release" if release else "table", dry_run=dry_run)
    try:
        if release:
            items, tombstones, rubrics = read_release(source, shown)
        else:
            rows = read_rows(source, shown)
    except InputError as e:
        result.problems.append(e.problem)
        return result
    with allocation_lock(config):
        result.finished, note = finish_interrupted(config)
        if note:
            result.notes.append(note)
        step("planning", 0, 0)
        if release:
            plan = plan_release(items, tombstones)
            plan.rubrics = rubrics
        else:
            from propeval.corpus import load_corpus

            first_claim = int(next_id(config, "claim")[1:])
            first_item = int(next_id(config, "item")[1:])
            done = imported_rows(list(load_corpus(config).items.values()))
            named = replace(options, source=options.source or source.name)
            plan = plan_table(rows, named, first_claim, first_item, done)
        result.rows = plan.rows
        result.problems.extend(plan.problems)
        result.notes.extend(plan.notes)
        if plan.errors:
            _describe(result, plan)
            return result
        if release:
            result.problems.extend(_present(config, plan))
        _describe(result, plan)
        if result.errors or (not plan.files and not plan.rubrics):
            return result
        _stage_and_move(config, plan, result, validation, dry_run, announce, step)
    return result


def _describe(result: ImportResult, plan: Plan) -> None:
    """What the plan writes, and what it skips as imported already."""
    result.claims = sorted({p.folder for p in plan.files})
    result.items = [p.data["id"] for p in plan.files if p.name != CLAIM_FILE]
    result.rubrics = sorted({"/".join(n.split("/")[:2]) for n in plan.rubrics})
    result.skipped = len(plan.skipped)
    if plan.skipped:
        ids = [item for _, item in plan.skipped]
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        result.notes.append(f"{len(plan.skipped)} row(s) already imported (same id and content), skipped: {shown}")


def _present(config: Config, plan: Plan) -> list[Problem]:
    """A release's files against the corpus: one already there with the same content is taken off
    the plan (imported already: counted in ``plan.skipped``); one there with other content, or an
    id taken by another claim's item, is an ``import-collision``."""
    from propeval.corpus import content_hash, load_corpus

    corpus = load_corpus(config)
    found = corpus_scan(config.questions, config.root)
    taken_items = {p.stem for p in (*found.files, *found.refused) if p.name != CLAIM_FILE}
    taken_claims = {e.name for e in os.scandir(config.questions)} if config.questions.is_dir() else set()
    out: list[Problem] = []
    keep: list[Planned] = []
    fix = "import into an empty corpus, or renumber one side (propeval renumber)"
    for p in plan.files:
        if p.name == CLAIM_FILE:
            claim = corpus.claims.get(p.folder)
            if claim is not None and content_hash(claim.data) == content_hash(p.data):
                continue  # the claim is there as the release has it; its new items join it
            if p.folder in taken_claims:
                where = "claim_id" if "claim_id" in p.origin.fields else None
                out.append(
                    p.origin.problem(where, "import-collision", f"claim {p.folder} already exists in this corpus", fix)
                )
                continue
        else:
            item = corpus.items.get(p.data["id"])
            if item is not None and item.claim_id == p.folder and content_hash(item.data) == content_hash(p.data):
                plan.skipped.append((p.origin, p.data["id"]))
                continue
            if p.data["id"] in taken_items:
                out.append(
                    p.origin.problem(
                        "id", "import-collision", f"item {p.data['id']} already exists in this corpus", fix
                    )
                )
                continue
        keep.append(p)
    plan.files = keep
    for name, data in list(plan.rubrics.items()):
        target = config.root / name
        if _rubric_folder(config.root, name).exists():
            if not target.is_symlink() and target.is_file() and target.read_bytes() == data:
                del plan.rubrics[name]  # there already, as the release has it
                continue
            out.append(
                Problem(
                    name,
                    1,
                    1,
                    "import-collision",
                    f"{name} already exists with other content",
                    fix="remove or rename the corpus's rubric first",
                )
            )
    return out


def _rubric_folder(root: Path, name: str) -> Path:
    """``rubrics/<rubric>`` of a release file name ``rubrics/<rubric>/...``."""
    return root.joinpath(*name.split("/")[:2])


def _stage_and_move(
    config: Config,
    plan: Plan,
    result: ImportResult,
    validation: Validation,
    dry_run: bool,
    announce: Callable[[str], None] | None,
    step: Phase,
) -> None:
    from propeval.scaffold import render

    step("staging the new files", 0, len(plan.files))
    stage = config.root / STAGE
    shutil.rmtree(stage, ignore_errors=True)  # a leftover of a killed import; we hold the id lock
    try:
        staged = _stage_corpus(config, stage)
        by_path: dict[str, Planned] = {}
        for p in plan.files:
            rel = f"{config.questions_dir}/{p.folder}/{p.name}"
            path = staged.root / rel
            try:
                text = render(path, p.data)
            except (UsageError, LoadError) as e:
                result.problems.append(p.origin.problem(None, "import-row", f"cannot be written as YAML: {e}"))
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as fh:
                fh.write(text)
            by_path[rel] = p
        new_rubrics = {}
        for name, data in plan.rubrics.items():
            target = staged.root / name
            if not _rubric_folder(config.root, name).exists():  # an existing one holds these very bytes
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                new_rubrics[name] = data
        if result.errors:
            return
        blocking = _validate(staged, by_path, result, validation, announce, step)
        if blocking or dry_run:
            if not blocking:
                result.notes.append(f"dry run: {len(by_path)} file(s) would be written; nothing was")
            return
        moves = _moves(config, plan, new_rubrics)
        step("moving into place", 0, len(moves))
        _move(stage, config.root, moves, announce)
        result.written = True
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _moves(config: Config, plan: Plan, rubrics: dict[str, bytes]) -> list[str]:
    """The paths to rename from the stage into the corpus (relative to both roots): each new claim
    folder whole, each new item of a claim already in the corpus, each new rubric folder."""
    new_claims = {p.folder for p in plan.files if p.name == CLAIM_FILE}
    q = config.questions_dir
    moves = [f"{q}/{c}" for c in sorted(new_claims)]
    moves += sorted(f"{q}/{p.folder}/{p.name}" for p in plan.files if p.folder not in new_claims)
    moves += sorted({"/".join(n.split("/")[:2]) for n in rubrics})
    return moves


def finish_interrupted(config: Config) -> tuple[int, str]:
    """Finish the renames of an import that was killed between them (its journal is in the stage).

    Returns how many renames were left to do, and a note saying so ("" when there was no journal).
    Every path of the journal is checked first: one whose staged copy and corpus copy both exist,
    or neither, means the corpus changed since; nothing is moved and PropevalError says what to do.
    """
    from propeval.errors import PropevalError

    stage = config.root / STAGE
    journal = stage / JOURNAL
    if not journal.is_file():
        return 0, ""
    try:
        moves = [str(m) for m in json.loads(journal.read_text(encoding="utf-8"))["moves"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PropevalError(
            f"{journal} (an interrupted import's list of renames) cannot be read ({e}); compare {stage} with "
            "the corpus by hand, move what is missing, then delete the folder"
        ) from None
    todo = []
    for rel in moves:
        src, dst = stage / rel, config.root / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise PropevalError(f"{journal} names {rel!r}, outside the corpus; delete {stage} and import again")
        if os.path.lexists(src) == os.path.lexists(dst):
            where = "in both" if os.path.lexists(src) else "in neither"
            raise PropevalError(
                f"an interrupted import left {journal}, but {rel} is {where} {stage} and the corpus: the corpus "
                f"changed since; move what is missing by hand, then delete {stage}"
            )
        if os.path.lexists(src):
            todo.append((src, dst))
    for src, dst in todo:
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(src, dst)
    _fsync_folders({dst.parent for _, dst in todo})
    journal.unlink()
    shutil.rmtree(stage, ignore_errors=True)
    note = (
        f"an earlier import was interrupted after {len(moves) - len(todo)} of its {len(moves)} rename(s); "
        f"finished it first: {len(todo)} moved into place from {STAGE}/{JOURNAL}"
    )
    return len(todo), note


def _fsync_folders(folders: set[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _stage_corpus(config: Config, stage: Path) -> Config:
    """A copy of what the checks read: the questions folder (links kept as links, so they are
    refused as in the corpus), the schema, the dedup allowlist."""
    stage.mkdir()
    if config.questions.is_dir():
        shutil.copytree(config.questions, stage / config.questions_dir, symlinks=True)
    if not config.builtin_schema and config.schema_path.is_file():
        (stage / config.schema).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(config.schema_path, stage / config.schema, follow_symlinks=False)
    allowlist = config.settings.dedup.allowlist
    src = config.root / allowlist
    if src.is_file() and not src.is_symlink():
        (stage / allowlist).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, stage / allowlist)
    return Config(root=stage, raw=_caches_of(config), source=config.source)


def _caches_of(config: Config) -> dict[str, Any]:
    """``config``'s table with the dedup cache folders (embeddings, the ONNX export) made absolute,
    so that the staged corpus reads the corpus's own warm caches: a relative ``cache_dir`` would
    otherwise point into the staging folder, and every text of the corpus would be embedded again
    on each import (4.3k texts for a 2k-row import)."""
    import copy

    raw = copy.deepcopy(config.raw)
    dedup = raw.get("dedup")
    if not isinstance(dedup, dict):
        return raw
    for key in ("cache_dir", "onnx_dir"):
        value = dedup.get(key)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            dedup[key] = str((config.root / value).resolve())
    return raw


def _back(p: Problem, by_path: dict[str, Planned], where: str) -> Problem:
    """A problem in a staged file, moved to the input row (and column) it comes from."""
    planned = by_path.get(p.path)
    if planned is None:
        return p
    field_ = p.pointer.split("/")[1] if p.pointer.count("/") >= 1 else ""
    row = planned.origin
    column = planned.sources.get(field_)
    if column not in row.fields:  # a default (--kind, --language), not a cell of the input
        column = None
    loc = f"row {row.number}" + (f", column {column!r}" if column else "")
    return replace(
        p,
        path=row.path,
        line=row.line,
        col=row.col(column) if column else 1,
        message=f"{loc}: [{where}] {p.message} (in {p.path} as imported)",
    )


def _validate(
    staged: Config,
    by_path: dict[str, Planned],
    result: ImportResult,
    validation: Validation,
    announce: Callable[[str], None] | None,
    step: Phase,
) -> bool:
    """Run check, groups and dedup on the staged corpus; report the new files' problems at their
    rows. True when the import must not go on."""
    from propeval.checker import check_corpus
    from propeval.groups import check_groups
    from propeval.progress import counted
    from propeval.workspace import Workspace

    ws = Workspace(staged)  # check, groups and dedup read the staged corpus once
    step("check", 0, 0)
    checked = check_corpus(ws)
    mine = [_back(p, by_path, "check") for p in checked.problems if p.path in by_path]
    result.problems.extend(mine)
    blocking = any(p.severity is Severity.ERROR for p in mine)
    new_claims = sorted({p.folder for p in by_path.values()})
    step("groups", 0, 0)
    grouped = check_groups(ws, new_claims)
    found = [_back(p, by_path, "groups") for p in grouped.problems if p.path in by_path]
    passes = validation.dedup_passes
    if not validation.allow_duplicates and "exact" not in passes:
        passes = ("exact", *passes)  # exact duplicates block an import, so the exact pass always runs
    duplicates: list[Problem] = []
    if passes:
        from propeval.dedup import Options as DedupOptions
        from propeval.dedup import find_duplicates, pair_problem

        step(f"dedup ({', '.join(passes)})", 0, 0)
        dd = find_duplicates(
            staged,
            DedupOptions(passes=passes),
            announce=announce,
            progress_factory=counted(step, "dedup: embedding"),
            corpus=ws.corpus,
        )
        for pair in dd.unreviewed:
            if pair.a.path in by_path or pair.b.path in by_path:
                p = pair_problem(pair)
                p = _back(p, by_path, "dedup") if p.path in by_path else p
                if "exact" in pair.scores and not validation.allow_duplicates:
                    duplicates.append(p)
                elif set(pair.scores) & set(validation.dedup_passes):
                    found.append(p)
        embedded = f"; {dd.encoded} embedded now, the rest from the cache" if "semantic" in passes else ""
        result.notes.append(
            f"dedup ({', '.join(passes)}) compared {dd.units} text(s) of the corpus with the import{embedded}"
        )
    else:
        result.notes.append("dedup not run (--no-dedup --allow-duplicates)")
    if duplicates:
        blocking = True
        result.notes.append(
            f"{len(duplicates)} exact duplicate(s) of corpus text: nothing was imported; drop or rewrite those rows, "
            "or pass --allow-duplicates to import them anyway"
        )
    result.problems.extend(duplicates)
    result.problems.extend(found)
    if validation.strict:
        blocking = blocking or any(p.severity is Severity.ERROR for p in found)
    elif any(p.severity is Severity.ERROR for p in found):
        result.notes.append("groups and dedup problems above are reported, not blocking; --strict makes them block")
    return blocking


def _move(stage: Path, root: Path, moves: Sequence[str], announce: Callable[[str], None] | None) -> None:
    """Rename each path of ``moves`` from the stage into place, the list journaled first (see the
    module docstring); on a failure, undo the renames done and drop the journal."""
    journal = stage / JOURNAL
    atomic_write(journal, json.dumps({"format": 1, "moves": list(moves)}, indent=1) + "\n")
    pause = os.environ.get(PAUSE_ENV, "")
    done: list[tuple[Path, Path]] = []
    try:
        for n, rel in enumerate(moves):
            if pause.isdigit() and n == int(pause):
                _pause(n, len(moves), announce)
            src, dst = stage / rel, root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(dst):
                raise FileExistsError(f"{dst} appeared while importing")
            os.rename(src, dst)
            done.append((src, dst))
        _fsync_folders({dst.parent for _, dst in done})
    except BaseException:
        for src, dst in reversed(done):
            with contextlib.suppress(OSError):
                os.rename(dst, src)
        with contextlib.suppress(OSError):
            journal.unlink()
        raise
    journal.unlink()


def _pause(n: int, total: int, announce: Callable[[str], None] | None) -> None:
    """The kill test's hook: say so, then wait to be killed (never reached unless the variable is set)."""
    if announce:
        announce(f"paused after {n} of {total} rename(s) ({PAUSE_ENV})")
    while True:
        time.sleep(60)


__all__ = ["ImportResult", "Validation", "import_source", "is_release", "read_release"]
