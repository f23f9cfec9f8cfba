"""The import run: read, plan, render through ``new``'s writer, stage, validate, move into place.

Nothing is half-imported. The new files are written to a staging copy of the corpus
(``.propeval-import/`` at the corpus root, under ``new``'s id lock), where ``check``, ``groups``
and ``dedup`` run over the corpus as it would be. Only when the staged corpus has no blocking
problem are the new claim folders (and a release's rubric folders) renamed into place, one
``rename`` each; if one fails, those already moved are moved back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from propeval.config import Config
from propeval.corpus import CLAIM_FILE, corpus_scan
from propeval.errors import UsageError
from propeval.ingest.build import Options, Plan, Planned, plan_release, plan_table
from propeval.ingest.table import MAX_INPUT_BYTES, InputError, Row, read_rows
from propeval.loader import LoadError
from propeval.result import Problem, Severity

STAGE = ".propeval-import"
SUMS_FILE = "SHA256SUMS"


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
            "problems": [p.to_dict() for p in self.problems],
            "notes": self.notes,
        }


@dataclass
class Validation:
    """Which corpus-wide checks run on the staged corpus, and which of them block the import."""

    dedup_passes: tuple[str, ...] = ("exact", "lexical", "semantic")
    strict: bool = False  # groups and dedup errors block too (check errors always do)


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


def read_release(folder: Path, shown: str) -> tuple[list[Row], list[Row], dict[str, bytes]]:
    """items.jsonl and tombstones.jsonl rows and the rubric files of a release, every file checked
    against SHA256SUMS first."""
    sums = _sums(folder, shown)
    for name in ("items.jsonl", "tombstones.jsonl"):
        if name not in sums:
            raise InputError(
                Problem(f"{shown}/{SUMS_FILE}", 1, 1, "import-sums", f"{name} is not listed", fix="export it again")
            )
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
) -> ImportResult:
    """Import a release folder or a CSV/JSONL file into the corpus at ``config``.

    Raises:
        UsageError: the source is neither a release folder nor a .csv/.jsonl file.
    """
    from propeval.scaffold import allocation_lock, next_id

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
        if release:
            plan = plan_release(items, tombstones)
            plan.rubrics = rubrics
        else:
            first_claim = int(next_id(config, "claim")[1:])
            first_item = int(next_id(config, "item")[1:])
            plan = plan_table(rows, replace(options, source=options.source or source.name), first_claim, first_item)
        result.rows = plan.rows
        result.problems.extend(plan.problems)
        result.notes.extend(plan.notes)
        result.claims = sorted({p.folder for p in plan.files})
        result.items = [p.data["id"] for p in plan.files if p.name != CLAIM_FILE]
        result.rubrics = sorted({"/".join(n.split("/")[:2]) for n in plan.rubrics})
        if plan.errors:
            return result
        result.problems.extend(_collisions(config, plan))
        if result.errors:
            return result
        _stage_and_move(config, plan, result, validation, dry_run, announce)
    return result


def _collisions(config: Config, plan: Plan) -> list[Problem]:
    found = corpus_scan(config.questions, config.root)
    taken_items = {p.stem for p in (*found.files, *found.refused) if p.name != CLAIM_FILE}
    taken_claims = {e.name for e in os.scandir(config.questions)} if config.questions.is_dir() else set()
    out = []
    for p in plan.files:
        if p.name == CLAIM_FILE and p.folder in taken_claims:
            out.append(
                p.origin.problem(
                    "claim_id" if "claim_id" in p.origin.fields else None,
                    "import-collision",
                    f"claim {p.folder} already exists in this corpus",
                    "import into an empty corpus, or renumber one side (propeval renumber)",
                )
            )
        elif p.name != CLAIM_FILE and p.data["id"] in taken_items:
            out.append(
                p.origin.problem(
                    "id",
                    "import-collision",
                    f"item {p.data['id']} already exists in this corpus",
                    "import into an empty corpus, or renumber one side (propeval renumber)",
                )
            )
    for name, data in plan.rubrics.items():
        target = config.root / name
        if _rubric_folder(config.root, name).exists() and (
            target.is_symlink() or not target.is_file() or target.read_bytes() != data
        ):
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
) -> None:
    from propeval.scaffold import render

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
        blocking = _validate(staged, by_path, result, validation, announce)
        if blocking or dry_run:
            if not blocking:
                result.notes.append(f"dry run: {len(by_path)} file(s) would be written; nothing was")
            return
        _move(stage, config.root, config.questions_dir, sorted({p.folder for p in plan.files}), new_rubrics)
        result.written = True
    finally:
        shutil.rmtree(stage, ignore_errors=True)


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
    return Config(root=stage, raw=config.raw, source=config.source)


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
) -> bool:
    """Run check, groups and dedup on the staged corpus; report the new files' problems at their
    rows. True when the import must not go on."""
    from propeval.checker import check_corpus
    from propeval.groups import check_groups

    checked = check_corpus(staged)
    mine = [_back(p, by_path, "check") for p in checked.problems if p.path in by_path]
    result.problems.extend(mine)
    blocking = any(p.severity is Severity.ERROR for p in mine)
    new_claims = sorted({p.folder for p in by_path.values()})
    grouped = check_groups(staged, new_claims)
    found = [_back(p, by_path, "groups") for p in grouped.problems if p.path in by_path]
    if validation.dedup_passes:
        from propeval.dedup import Options as DedupOptions
        from propeval.dedup import find_duplicates, pair_problem

        dd = find_duplicates(staged, DedupOptions(passes=validation.dedup_passes), announce=announce)
        for pair in dd.unreviewed:
            if pair.a.path in by_path or pair.b.path in by_path:
                p = pair_problem(pair)
                found.append(_back(p, by_path, "dedup") if p.path in by_path else p)
        result.notes.append(
            f"dedup ({', '.join(validation.dedup_passes)}) compared {dd.units} text(s) of the corpus with the import"
        )
    else:
        result.notes.append("dedup not run (--no-dedup)")
    result.problems.extend(found)
    if validation.strict:
        blocking = blocking or any(p.severity is Severity.ERROR for p in found)
    elif any(p.severity is Severity.ERROR for p in found):
        result.notes.append("groups and dedup problems above are reported, not blocking; --strict makes them block")
    return blocking


def _move(stage: Path, root: Path, questions_dir: str, claims: Sequence[str], rubrics: dict[str, bytes]) -> None:
    """Rename each new claim folder (and rubric folder) into place; undo all on a failure."""
    moves: list[tuple[Path, Path]] = [(stage / questions_dir / c, root / questions_dir / c) for c in claims]
    for name in sorted({"/".join(n.split("/")[:2]) for n in rubrics}):
        moves.append((stage / name, root / name))
    done: list[tuple[Path, Path]] = []
    try:
        for src, dst in moves:
            dst.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(dst):
                raise FileExistsError(f"{dst} appeared while importing")
            os.rename(src, dst)
            done.append((src, dst))
    except BaseException:
        for src, dst in reversed(done):
            with contextlib.suppress(OSError):
                os.rename(dst, src)
        raise


__all__ = ["ImportResult", "Validation", "import_source", "is_release", "read_release"]
