"""Gate a branch on its schema.json changes: ``propeval schema diff`` and ``propeval ci``'s schema step.

``schema_gate(ws, base_ref)`` diffs schema.json at the merge base with ``base_ref`` against the
working tree (:func:`propeval.schemadiff.diff_schemas`, the pure differ), requires the matching
``schema_version`` bump and a CHANGELOG.md entry, and requires every claim and item to validate
under the new schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.config import Config
from propeval.loader import Document, LoadError, load_text
from propeval.result import CheckResult, Problem, Severity
from propeval.schemadiff import ADDITIVE, BREAKING, DOCS, IMPACTS, LEVELS, Change, Version, diff_schemas, required_bump

if TYPE_CHECKING:
    from propeval.workspace import Workspace

__all__ = ["CHANGELOG", "SchemaGateResult", "changelog_has", "schema_gate"]

CHANGELOG = "CHANGELOG.md"


@dataclass
class SchemaGateResult(CheckResult):
    """A CheckResult plus what the diff found."""

    changes: list[Change] = field(default_factory=list)
    old_version: str = ""
    new_version: str = ""
    bump: str | None = None
    expected_version: str = ""
    summary: str = ""


def changelog_has(text: str, version: str) -> bool:
    """True when a Markdown heading of ``text`` names ``version`` (``## 2.0.0``, ``## [2.0.0] - ...``)."""
    v = re.escape(version)
    return re.search(rf"^#{{1,6}}[ \t]+\[?v?{v}\]?(?=[\s\]]|$)", text, re.MULTILINE) is not None


def summary_line(changes: list[Change], old: str, bump: str | None, expected: str) -> str:
    counts = ", ".join(f"{k}: {sum(c.impact == k for c in changes)}" for k in IMPACTS)
    if bump is None:
        return f"{counts} -> no version bump needed"
    return f"{counts} -> needs a {bump} bump ({old} -> {expected})"


def schema_gate(ws: Workspace, base_ref: str) -> SchemaGateResult:
    """Diff schema.json at the merge base with ``base_ref`` against the working tree, and gate it.

    Fails (errors in the result) when ``schema_version`` was not bumped to match the changes,
    when CHANGELOG.md has no entry for the new version, or when a claim or item does not
    validate under the new schema (which means a migration is missing or was not run).

    Args:
        ws: the workspace; its config's schema is the new one (``ci`` gives the tree's own).
        base_ref: a branch, tag or commit; the merge base of it and HEAD is compared.

    Raises:
        GitError: the ref is missing, the clone is shallow, or this is not a git repository.
    """
    from propeval import gitutil

    config = ws.config
    result = SchemaGateResult()
    rel = config.schema
    base = gitutil.merge_base(config.root, base_ref)
    raw_old = gitutil.blob_at(config.root, base, rel)

    new_schema = ws.schema.schema
    if new_schema is None:
        result.extend(ws.schema.problems)
        result.notes.append(f"{rel} does not load or is not a valid schema; fix it before it can be compared")
        return result
    new_doc = new_schema.doc
    result.new_version = new_schema.version
    result.files_checked = 1

    if raw_old is None:
        result.notes.append(f"{rel} does not exist at {base_ref}; nothing to compare")
        result.old_version = ""
        _changelog(config, result, new_doc, result.new_version)
        return result
    try:
        old_doc = load_text(raw_old, f"{rel}@{base_ref}", kind="json")
    except LoadError as e:
        result.extend([e.problem])
        return result
    result.old_version = str(old_doc.data.get("schema_version", ""))

    changes = diff_schemas(old_doc.data, new_doc.data)
    result.changes = changes
    for c in changes:
        rule = f"schema-{c.impact}"
        result.problems.append(new_doc.problem(c.pointer, rule, c.message, key=True, severity=Severity.NOTICE))

    bump = required_bump(changes)
    result.bump = bump
    old_v = Version.parse(result.old_version)
    new_v = Version.parse(result.new_version)
    expected = old_v.bump(bump) if (old_v and bump) else old_v
    result.expected_version = str(expected) if expected else ""
    result.summary = summary_line(changes, result.old_version, bump, result.expected_version)
    result.notes.append(result.summary)

    version_problem = _version(new_doc, base_ref, old_v, new_v, bump, changes, result)
    if version_problem is not None:
        result.problems.append(version_problem)
    if (new_v is not None and old_v is not None and new_v != old_v) or bump is not None:
        target = result.new_version if version_problem is None else result.expected_version
        if target:
            _changelog(config, result, new_doc, target)
    if changes:
        result.extend(_corpus_validates(ws, new_schema, result))
    result.problems = sorted(result.problems, key=lambda p: (p.path != rel, p.path, p.line, p.col, p.rule))
    return result


def _version(
    doc: Document,
    base_ref: str,
    old_v: Version | None,
    new_v: Version | None,
    bump: str | None,
    changes: list[Change],
    result: SchemaGateResult,
) -> Problem | None:
    ptr = "/schema_version"
    if old_v is None:
        # The base had no usable version: accept any valid one now.
        if new_v is None:
            return doc.problem(ptr, "schema-version", _bad_semver(result.new_version))
        return None
    if new_v is None:
        return doc.problem(ptr, "schema-version", _bad_semver(result.new_version))
    if bump is None:
        if new_v == old_v or new_v in {old_v.bump(level) for level in LEVELS}:
            return None
        return doc.problem(
            ptr,
            "schema-version",
            f"schema_version went from {old_v} to {new_v}, which is not the next major, minor or patch version; "
            f"use {old_v.bump('patch')}, {old_v.bump('minor')} or {old_v.bump('major')}",
        )
    allowed = {old_v.bump(level) for level in LEVELS[: LEVELS.index(bump) + 1]}
    expected = old_v.bump(bump)
    n = sum(c.impact == {"major": BREAKING, "minor": ADDITIVE, "patch": DOCS}[bump] for c in changes)
    described = {"major": "breaking", "minor": "additive", "patch": "documentation-only"}[bump]
    why = f"{n} {described} change(s) since {base_ref}"
    if new_v in allowed:
        return None
    if new_v == old_v:
        return doc.problem(
            ptr,
            "schema-version",
            f"schema_version is still {old_v} but the schema has {why}; a {bump} bump is needed: "
            f'set "schema_version": "{expected}" and add a "## {expected}" entry to {CHANGELOG}',
        )
    return doc.problem(
        ptr,
        "schema-version",
        f"schema_version went from {old_v} to {new_v}, but the schema has {why}, which needs a {bump} bump: "
        f'set "schema_version": "{expected}"',
    )


def _bad_semver(value: str) -> str:
    return f'schema_version {value!r} is not a MAJOR.MINOR.PATCH version; write it like "1.0.0"'


def _changelog(config: Config, result: CheckResult, doc: Document, version: str) -> None:
    path = config.root / CHANGELOG
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        result.problems.append(
            Problem(
                CHANGELOG,
                0,
                0,
                "schema-changelog",
                f'{CHANGELOG} is missing; create it with a "## {version}" entry that says what changed in the schema',
            )
        )
        return
    except (OSError, UnicodeDecodeError) as e:
        result.problems.append(Problem(CHANGELOG, 0, 0, "schema-changelog", f"cannot read {CHANGELOG}: {e}"))
        return
    if not changelog_has(text, version):
        result.problems.append(
            Problem(
                CHANGELOG,
                1,
                1,
                "schema-changelog",
                f'{CHANGELOG} has no entry for schema version {version}; add a "## {version}" heading '
                "with a line per change (and the migration to run, if any)",
            )
        )


def _corpus_validates(ws: Workspace, schema: Any, result: SchemaGateResult) -> Iterator[Problem]:
    """Every claim and item must validate under the new schema; else a migration is due."""
    from propeval.checks import Context, run_checks

    corpus = ws.corpus
    bad = list(run_checks(Context(ws, schema), ["schema"]))
    result.files_checked += len(corpus.files)
    if not bad:
        return
    yield from bad
    files = len({p.path for p in bad})
    bumped = Version.parse(result.new_version) != Version.parse(result.old_version)
    target = (result.new_version if bumped else result.expected_version) or result.new_version
    module = _migration_module(result.old_version, target)
    from propeval.errors import PropevalError
    from propeval.migrations import load_registry

    try:
        has_step = bool(load_registry().path(result.old_version, target))
    except PropevalError:  # a broken registry is reported by `propeval migrate` itself
        has_step = False
    if has_step:
        how = f"run `propeval migrate --to {target}` to rewrite them, and commit the result"
    else:
        how = (
            f"ship a migration (tools/propeval/migrations/{module}) and run `propeval migrate --to {target}` "
            "to rewrite them, or make the change backward compatible"
        )
    doc = schema.doc
    yield doc.problem(
        "/schema_version",
        "schema-migration",
        f"{files} corpus file(s) do not validate under schema {target}; {how}",
    )


def _migration_module(old: str, new: str) -> str:
    return f"v{old.replace('.', '_')}__to__v{new.replace('.', '_')}.py"
