"""``propeval migrate``'s core: move every claim and item from one schema version to another.

Where the corpus's version comes from: the corpus has no version of its own. Its files were last
validated against the schema committed at HEAD, so ``--from`` defaults to the ``schema_version``
of schema.json at HEAD, and ``--to`` to the ``schema_version`` in the working tree. The usual
flow is therefore: edit schema.json (with its version bump), add the migration module, run
``propeval migrate``, commit everything together. Once the schema change is committed, HEAD
already carries the new version; pass ``--from`` explicitly then. Every operation is idempotent,
so naming a version the files have already left does no harm.

How a file is rewritten, so that nothing but the migrated fields changes:

1. It is loaded strictly (``propeval.loader``) and the migration steps are applied to a plain
   copy of its data: that is the *expected* result.
2. It is loaded with ruamel.yaml's round-trip loader (``typ="rt"``, quotes preserved; the
   indentation that reproduces the file is picked among a few candidates). Where ruamel cannot
   reproduce a line the migration does not touch (an escape inside double quotes), the original
   line is kept; where the dump does not line up with the file at all, the file is refused and
   must be migrated by hand.
3. The same steps are applied to the round-trip document and it is dumped.
4. The new text must load, through ``propeval.loader``, to exactly the expected data.

Nothing is written unless every file passes; then each file is replaced atomically
(``fsutil.atomic_write``), so a kill leaves every file either old or new, and a re-run finishes
the job.
"""

from __future__ import annotations

import copy
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.corpus import CLAIM_FILE, corpus_files
from propeval.errors import GitError, UsageError
from propeval.fsutil import atomic_write
from propeval.loader import LoadError, load_file, load_text
from propeval.result import CheckResult, Problem, Severity

__all__ = ["MigrateOptions", "MigrateResult", "migrate_corpus", "rewrite"]


@dataclass
class MigrateOptions:
    to: str | None = None
    source: str | None = None
    check: bool = False
    migrations_dir: Path | None = None


@dataclass
class MigrateResult(CheckResult):
    source: str = ""
    target: str = ""
    steps: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    summary: str = ""


class RewriteError(Exception):
    """A file cannot be rewritten safely; ``rule`` and ``line`` say why and where."""

    def __init__(self, rule: str, line: int, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.line = line


@dataclass
class Rewrite:
    relpath: str
    path: Path
    new_text: str
    log: list[str]
    line: int


def _candidates(text: str) -> list[tuple[int, int, int]]:
    """(mapping, sequence, offset) indentations to try, the guessed one first."""
    from ruamel.yaml.util import load_yaml_guess_indent

    try:
        _, ind, bsi = load_yaml_guess_indent(text)
    except Exception:  # the strict loader has already accepted the file; guessing is best effort
        ind, bsi = None, None
    out: list[tuple[int, int, int]] = []
    if ind:
        out.append((ind - (bsi or 0) or 2, ind, bsi or 0))
    for m in (2, 4):
        out += [(m, m + 2, 2), (m, m, 0), (m, m + 2, m)]
    return list(dict.fromkeys(out))


def _yaml(indent: tuple[int, int, int]) -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 1 << 16  # never re-wrap a long line
    y.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    return y


def _writer(text: str) -> tuple[Any, Any, str]:
    """A round-trip writer, the document, and its unchanged dump: the one that reproduces
    ``text`` exactly when there is one, else the best guess."""
    first: tuple[Any, Any, str] | None = None
    for indent in _candidates(text):
        y = _yaml(indent)
        rt = y.load(text)
        out = _dump(y, rt)
        if out == text:
            return y, rt, out
        first = first or (y, rt, out)
    assert first is not None
    return first


def _patch(original: str, baseline: str, new: str) -> str | None:
    """Apply the ``baseline`` -> ``new`` edits to ``original``, line for line.

    ruamel re-renders a few things it cannot keep (escapes inside double quotes, odd spacing).
    When such a line is not one the migration touches, the original line is kept. This needs the
    baseline to line up with the original line by line; when it does not, None.
    """
    import difflib

    o, b, n = (t.splitlines(keepends=True) for t in (original, baseline, new))
    if len(o) != len(b):
        return None
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, b, n, autojunk=False).get_opcodes():
        out.extend(o[i1:i2] if tag == "equal" else n[j1:j2])
    return "".join(out)


def _dump(y: Any, data: Any) -> str:
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def _first_diff(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False), start=1):
        if x != y:
            return i
    return min(len(a.splitlines()), len(b.splitlines())) + 1


def rewrite(text: str, relpath: str, kind: str, steps: list[Any]) -> tuple[str, list[str]]:
    """The migrated text of one YAML file, and what was done; ``(text, [])`` when nothing applies.

    Raises:
        LoadError: the file does not load strictly.
        RewriteError: ruamel cannot reproduce the file, a step failed, or the result does not
            load back to the expected data.
    """
    from propeval.migrations.ops import MigrationConflictError, recording

    doc = load_text(text, relpath)
    expected = copy.deepcopy(doc.data)
    with recording() as log:
        try:
            for step in steps:
                step.apply(expected, kind)
        except MigrationConflictError as e:
            raise RewriteError("migrate-conflict", 1, f"{e}, then run the migration again") from e
        except Exception as e:
            raise RewriteError(
                "migrate-error", 1, f"migration step failed: {type(e).__name__}: {e}; fix the migration module"
            ) from e
    if expected == doc.data:
        return text, []

    y, rt, baseline = _writer(text)
    for step in steps:
        step.apply(rt, kind)
    new_text = _dump(y, rt)
    if baseline != text:
        patched = _patch(text, baseline, new_text)
        if patched is None:
            raise RewriteError(
                "migrate-roundtrip",
                _first_diff(text, baseline),
                "the round-trip YAML writer would also change this line, which the migration does not touch; "
                "rewrite it in the usual style (2-space indents, one document) or migrate the file by hand",
            )
        new_text = patched
    try:
        again = load_text(new_text, relpath)
    except LoadError as e:
        why = f"the rewritten file does not load: {e.problem.message}"
        raise RewriteError("migrate-verify", e.problem.line, why) from e
    if again.data != expected:
        raise RewriteError(
            "migrate-verify",
            _first_diff(text, new_text),
            "the rewritten file does not load to the migrated data; migrate this file by hand",
        )
    return new_text, log


def _version_at_head(config: Config) -> str:
    from propeval import gitutil

    try:
        raw = gitutil.blob_at(config.root, "HEAD", config.schema)
    except GitError as e:
        raise UsageError(f"cannot read {config.schema} at HEAD ({e}); pass --from VERSION") from e
    if raw is None:
        raise UsageError(f"{config.schema} is not committed at HEAD; pass --from VERSION")
    try:
        data = load_text(raw, f"{config.schema}@HEAD", kind="json").data
    except LoadError as e:
        raise UsageError(f"{config.schema} at HEAD does not load ({e}); pass --from VERSION") from e
    return str(data.get("schema_version", ""))


def _version_here(config: Config) -> str:
    try:
        return str(load_file(config.schema_path, root=config.schema_root).data.get("schema_version", ""))
    except LoadError as e:
        raise UsageError(f"{config.schema} does not load ({e}); pass --to VERSION") from e


def migrate_corpus(
    config: Config,
    options: MigrateOptions,
    *,
    on_write: Callable[[str], None] | None = None,
) -> MigrateResult:
    """Migrate every claim and item from ``options.source`` to ``options.to``.

    Args:
        config: the corpus configuration.
        options: versions (defaults: schema.json at HEAD, and in the working tree), ``check``
            (report only), and the folder of migration modules (default: the package's).
        on_write: called with each file's path just before it is replaced (fault injection in
            tests; progress elsewhere).

    Raises:
        UsageError: a version is not MAJOR.MINOR.PATCH, a downgrade was asked for, or no chain of
            migrations leads from one version to the other.
        ConfigError: a migration module is malformed.
    """
    # About 90 lines, on purpose: plan every file first and write nothing if one cannot be
    # migrated, then replace each file atomically. Kept as one sequence so that order is plain.
    from propeval.migrations import load_registry
    from propeval.schemadiff import Version

    target = options.to or _version_here(config)
    source = options.source or _version_at_head(config)
    sv, tv = Version.parse(source), Version.parse(target)
    for name, v, raw in (("--from", sv, source), ("--to", tv, target)):
        if v is None:
            raise UsageError(f"{name} {raw!r} is not a MAJOR.MINOR.PATCH version")
    assert sv is not None and tv is not None
    if tv < sv:
        raise UsageError(f"--to {target} is older than --from {source}; migrations only go forward")
    result = MigrateResult(source=source, target=target)
    if sv == tv:
        result.summary = f"nothing to migrate: the corpus is already at {target}"
        return result
    registry = load_registry(options.migrations_dir)
    steps = registry.path(source, target)
    if steps is None:
        raise UsageError(
            f"no chain of migrations leads from {source} to {target}; "
            f"write tools/propeval/migrations/{registry.missing(source, target)} with FROM, TO and migrate(doc, kind)"
        )
    result.steps = [s.name for s in steps]

    plans: list[Rewrite] = []
    for path in corpus_files(config.questions):
        if path.suffix.lower() != ".yaml":
            continue  # `propeval check` reports the file name
        rel = path.resolve().relative_to(config.root.resolve()).as_posix()
        result.files_checked += 1
        kind = "claim" if path.name == CLAIM_FILE else "item"
        try:
            text = load_file(path, root=config.root).text
            new_text, log = rewrite(text, rel, kind, steps)
        except LoadError as e:
            result.problems.append(e.problem)
            continue
        except RewriteError as e:
            result.problems.append(Problem(rel, e.line, 1, e.rule, str(e)))
            continue
        if new_text != text:
            plans.append(Rewrite(rel, path, new_text, log, _first_diff(text, new_text)))
    result.changed = [p.relpath for p in plans]
    step = f"{source} -> {target}"

    if result.errors:
        result.summary = f"nothing written: {len(result.errors)} file(s) cannot be migrated ({step}); fix them first"
        return result
    if options.check:
        for p in plans:
            result.problems.append(
                Problem(p.relpath, p.line, 1, "migrate", f"would migrate ({step}): {'; '.join(p.log)}")
            )
        result.summary = (
            f"{len(plans)} file(s) would change ({step}); run `propeval migrate --to {target}`"
            if plans
            else f"nothing to migrate: every file is already at {target}"
        )
        return result
    for p in plans:
        if on_write is not None:
            on_write(p.relpath)
        mode = p.path.stat().st_mode & 0o7777
        atomic_write(p.path, p.new_text)
        os.chmod(p.path, mode)  # atomic_write's temporary file is 0600; keep the file's own mode
        result.written.append(p.relpath)
        result.problems.append(
            Problem(p.relpath, p.line, 1, "migrate", f"migrated ({step}): {'; '.join(p.log)}", severity=Severity.NOTICE)
        )
    result.summary = (
        f"migrated {len(plans)} file(s) ({step})" if plans else f"nothing to migrate: every file is already at {target}"
    )
    return result
