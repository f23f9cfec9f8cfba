"""``propeval hook``: every propeval pre-commit check in one process, over one Workspace.

A commit ran three hooks (check, groups, dedup), each its own process, and each paid Python's
start-up, propeval's imports and a load of the whole corpus: at 10,000 items that was most of the
commit's time. Here the three parts read one :class:`~propeval.workspace.Workspace`, so the corpus
is loaded once (from the load cache, :mod:`propeval.loadcache`) and each part looks only at what
changed since ``ref`` (HEAD: the staged changes; before the first commit, everything):

* ``check``: the changed files, with the cross-file rules over the whole corpus
  (:func:`propeval.checker.check_corpus`; a changed schema.json or pyproject.toml checks every file);
* ``groups``: every claim group with a file added, changed or deleted (always the whole group);
* ``dedup``: the changed texts against the whole corpus (:func:`propeval.dedup.find_duplicates`).

Each part keeps its own result, so the command shows each under its own heading in the words of
the command it stands for, and exits with the worst part's code. A part that cannot run (the
dedup extra is missing; a git error) is that part's error (exit 3, or the error's own code), and
the other parts still run: their problems are worth seeing either way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import PropevalError

if TYPE_CHECKING:
    from propeval.dedup import DedupResult
    from propeval.groups import GroupsResult
    from propeval.result import CheckResult
    from propeval.workspace import Workspace

PARTS = ("check", "groups", "dedup")


@dataclass
class HookPart:
    """One part's result (a CheckResult, GroupsResult or DedupResult), or why it did not run."""

    name: str
    result: Any = None
    error: PropevalError | None = None
    skipped: bool = False

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return self.error.exit_code
        if self.result is None:
            return 0
        code: int = self.result.exit_code
        return code


@dataclass
class HookResult:
    ref: str
    parts: list[HookPart] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return max((p.exit_code for p in self.parts), default=0)


def run_hook(
    ws: Workspace,
    ref: str = "HEAD",
    *,
    skip: Sequence[str] = (),
    announce: Callable[[str], None] | None = None,
    files: Sequence[str] | None = None,
) -> HookResult:
    """Run check, groups and dedup (but those in ``skip``) over what changed since ``ref``, in that
    order, over the one workspace ``ws``; each part's failure to run stays its own.

    ``files`` (paths as pre-commit passes them: relative to the current folder, or absolute): what
    changed, instead of git's answer (the diff since the merge base with ``ref``, and untracked
    files). ``ref`` still names the base that ids are kept stable against."""
    from propeval import gitutil

    out = HookResult(ref)
    with gitutil.snapshot():  # nothing changes the repository meanwhile: each git question asked once
        if files is not None:
            root = ws.config.root
            with contextlib.suppress(PropevalError):  # no base: each part meets the error and says so
                gitutil.given_changes(root, gitutil.merge_base(root, ref), corpus_paths(root, files))
        for name in PARTS:
            part = HookPart(name)
            out.parts.append(part)
            if name in skip:
                part.skipped = True
                continue
            try:
                part.result = _PARTS[name](ws, ref, announce)
            except PropevalError as e:
                part.error = e
    return out


def corpus_paths(root: Path, files: Sequence[str]) -> list[str]:
    """``files`` relative to the corpus root (forward slashes); files outside it are left out. The
    folders above each file are resolved, never the file itself (a link is its own path)."""
    top = os.path.realpath(root)
    out = []
    for name in files:
        full = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(name))), os.path.basename(name))
        rel = os.path.relpath(full, top)
        if rel != os.curdir and not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
            out.append(rel.replace(os.sep, "/"))
    return out


def _check(ws: Workspace, ref: str, announce: Callable[[str], None] | None) -> CheckResult:
    from propeval.checker import check_corpus

    return check_corpus(ws, changed_since=ref)


def _groups(ws: Workspace, ref: str, announce: Callable[[str], None] | None) -> GroupsResult:
    from propeval.groups import check_groups

    return check_groups(ws, changed_since=ref)


def _dedup(ws: Workspace, ref: str, announce: Callable[[str], None] | None) -> DedupResult:
    from propeval.extras import require_dedup

    settings = ws.config.settings.dedup
    # before numpy, faiss or torch is imported: name what is missing for the configured backend
    require_dedup(settings.backend, settings.second_model, "hook")
    from propeval.dedup import Options, find_duplicates

    return find_duplicates(ws.config, Options(changed_since=ref), announce=announce, corpus=ws.corpus)


_PARTS: dict[str, Callable[[Workspace, str, Callable[[str], None] | None], Any]] = {
    "check": _check,
    "groups": _groups,
    "dedup": _dedup,
}
