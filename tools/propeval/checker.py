"""``propeval check``'s core: the workspace's corpus, the checks, narrowed to what was asked.

A rule about one file at a time looks only at the files a run reports on; a cross-file rule sees
the whole corpus (see :mod:`propeval.checks`). So a hook that checks one new item among 10,000
validates one file against the schema, not 10,000.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval import gitutil
from propeval.checks import DRAFT_RULES, UNNARROWED, Context, run_checks
from propeval.config import Config
from propeval.corpus import IMPORT_JOURNAL, IMPORT_STAGE
from propeval.errors import UsageError
from propeval.result import CheckResult

if TYPE_CHECKING:
    from propeval.workspace import Workspace

# A change to one of these re-checks the whole corpus, whatever else changed.
GLOBAL_FILES = ("schema.json", "pyproject.toml")


def check_corpus(
    ws: Workspace,
    paths: Sequence[Path] = (),
    *,
    changed_since: str | None = None,
    rules: Iterable[str] | None = None,
) -> CheckResult:
    """Check the corpus; report problems for ``paths`` (or what changed since a ref, or everything)."""
    config = ws.config
    result = CheckResult()
    result.extend(ws.schema.problems)

    corpus = ws.corpus
    ctx = Context(ws, ws.schema.schema)

    selected: set[str] | None = None
    if paths:
        selected = _expand(config, paths)
    if changed_since is not None:
        base = gitutil.merge_base(config.root, changed_since)
        ctx.base_ref = changed_since
        ctx.base_paths = gitutil.files_at(config.root, base, config.questions_dir)
        tip = gitutil.commit_of(config.root, changed_since)
        if tip is not None and tip != base:  # the base moved since the branch point: ids may collide
            ctx.tip_paths = gitutil.files_at(config.root, tip, config.questions_dir)
            ctx.tip_blob = lambda path: gitutil.blob_at(config.root, tip, path)
        changed = set(gitutil.changed_paths(config.root, base))
        schema_rel = config.schema
        if changed & {*GLOBAL_FILES, schema_rel}:
            result.notes.append(
                f"{', '.join(sorted(changed & {*GLOBAL_FILES, schema_rel}))} changed since "
                f"{changed_since}: checking the whole corpus"
            )
        else:
            in_corpus = {p for p in changed if p.startswith(config.questions_dir + "/")}
            selected = in_corpus if selected is None else selected & in_corpus

    ctx.selected = selected
    problems = list(corpus.problems)
    drafts = corpus.draft_paths()
    # A draft is checked for syntax (the loader's problems) and schema, and keeps the rules that
    # guard identity and safety; the completeness rules (placeholders, sources, ...) wait until
    # it is made active.
    problems.extend(p for p in run_checks(ctx, rules) if p.path not in drafts or p.rule in DRAFT_RULES)
    if drafts:
        result.notes.append(
            f"{len(drafts)} draft file(s) checked for syntax, schema, ids and safety only (status: draft)"
        )
    if ws.schema.schema is not None:
        result.notes.extend(stale_editor_schemas(config, ws.schema.schema.data))
    if (config.root / IMPORT_STAGE / IMPORT_JOURNAL).is_file():
        result.notes.append(
            f"an import was interrupted half-way ({IMPORT_STAGE}/{IMPORT_JOURNAL} lists its renames): the corpus "
            "holds part of it; run `propeval import` (of anything, or the same input again) to finish it"
        )
    if selected is not None:
        problems = [p for p in problems if p.path in selected or p.rule in UNNARROWED]
        result.files_checked = len(selected & set(corpus.files))
    else:
        result.files_checked = len(corpus.files)
    result.extend(problems)
    result.problems = result.sorted()
    return result


def stale_editor_schemas(config: Config, data: dict[str, Any]) -> list[str]:
    """A note for each editor's schema (``propeval init`` wrote them) that differs from the schema
    this check used: the editor would flag what check passes, or pass what it flags."""
    from propeval.init import EDITOR_SCHEMAS
    from propeval.schema_show import kind_text

    out = []
    for kind, rel in EDITOR_SCHEMAS.items():
        path = config.root / rel
        if path.is_symlink() or not path.is_file():
            continue
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != kind_text(data, kind):
            out.append(
                f"{rel} (the editor's schema) differs from the schema check uses; refresh it: "
                f"propeval schema show --corpus --kind {kind} -o {rel}"
            )
    return out


def selected_paths(config: Config, paths: Sequence[Path]) -> set[str]:
    """Corpus-relative paths named by ``paths`` (files or folders)."""
    return _expand(config, paths)


def _expand(config: Config, paths: Sequence[Path]) -> set[str]:
    """Corpus-relative paths named by ``paths``; links are never followed (a link is its own path)."""
    from propeval.filetypes import scan

    root = config.root.resolve()
    out: set[str] = set()
    for p in paths:
        # Resolve the folders above the last part, never the last part itself: a link named
        # questions/c0001/i0163.yaml is that path, wherever it points.
        full = (p.parent.resolve() / p.name) if p.name not in ("", ".", "..") else p.resolve()
        if not os.path.lexists(full):
            raise UsageError(f"{p}: no such file or folder")
        try:
            rel = full.relative_to(root)
        except ValueError as e:
            raise UsageError(f"{p} is outside the corpus at {root}") from e
        if full.is_dir() and not full.is_symlink():
            found = scan(full, root)
            out.update(f.relative_to(root).as_posix() for f in (*found.files, *found.refused))
        else:
            out.add(rel.as_posix())
    return out
