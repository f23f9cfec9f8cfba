"""Making a record never runs a pull request's code: a trusted install, and the pull request as data.

A maintainer who makes a ledger record holds two secrets, the API key and the signing key. Two
things in a checked-out pull request would run code with them: ``git commit`` runs the hooks of
the pull request's ``.pre-commit-config.yaml`` (through its ``scripts/``), and ``make setup``
installs the checkout as editable, so ``.venv/bin/propeval`` *is* the pull request's
``tools/propeval``. So:

* :func:`check_install`: ``gate --online``, ``ledger sign`` and ``ledger approve`` refuse to run
  from a propeval whose code differs from the base branch's (``--base REF``), naming the files
  that differ. It compares the files of the running package, byte for byte (git's blob ids),
  with the tree of the same folder at REF.
* :func:`pr_checkout`: with ``--pr REF`` they read the pull request from git objects: a temporary
  work tree of REF's commit, made with every git hook switched off (``core.hooksPath`` at an
  empty folder), so nothing in it runs; the records are written there and committed there, again
  with no hook; the commit goes on top of REF (a local branch is moved to it) and the work tree
  is removed. The maintainer's own checkout and install (made from the base) are all that runs.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from propeval import gitutil
from propeval.errors import GitError, PolicyError, UsageError

# What an install holds besides the package's own files: compiled bytecode and build metadata.
_IGNORED_PARTS = {"__pycache__"}
_IGNORED_SUFFIXES = {".pyc", ".pyo"}


def running_package() -> Path:
    """The folder the running ``propeval`` package was imported from."""
    import propeval

    return Path(propeval.__file__).resolve().parent


def _enclosing_top(path: Path) -> Path | None:
    """The top of the git work tree ``path`` lies in (None: it lies in none)."""
    for folder in (path, *path.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _disk_blobs(package: Path) -> dict[str, str]:
    out = {}
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(package)
        if set(rel.parts) & _IGNORED_PARTS or path.suffix in _IGNORED_SUFFIXES or path.is_dir():
            continue
        blob = gitutil.file_blob_id(path)
        if blob is not None:
            out[rel.as_posix()] = blob
    return out


@dataclass(frozen=True)
class InstallCheck:
    """The running install against the base: the package folder, and how it was compared (``note``)."""

    package: Path
    note: str


def check_install(root: Path, base: str, *, package: Path | None = None) -> InstallCheck:
    """Refuse (PolicyError) to make records with a propeval whose code the base does not have.

    ``root``: the corpus whose repository ``base`` is resolved in. The running package is
    compared with the folder at ``base`` that holds it: its own path in the repository when it
    lies in a git work tree (the checkout being judged, or a trusted work tree of the base), else
    ``tools/propeval`` (an install from a wheel). When ``base`` has no such folder, this
    repository does not carry propeval's code and there is nothing to compare with, unless the
    package lies inside the tree being judged: then it *is* the tree's code, and is refused.
    """
    package = package or running_package()
    key = (root.resolve(), gitutil.commit_of(root, base) or base, package)
    if key in _CHECKED:  # checked already in this process (before the command's module was loaded)
        return _CHECKED[key]
    _CHECKED[key] = found = _check_install(root, base, package)
    return found


_CHECKED: dict[tuple[Path, str, Path], InstallCheck] = {}


def _check_install(root: Path, base: str, package: Path) -> InstallCheck:
    tree_top = gitutil.toplevel(root).resolve()
    inside_tree = package.is_relative_to(tree_top)
    top = tree_top if inside_tree else _enclosing_top(package)
    rel = package.relative_to(top).as_posix() if top is not None else "tools/propeval"
    wanted = gitutil.tree_blobs(root, base, rel)
    fix = (
        f"make a trusted install from {base} and run from it, reading the pull request with --pr: "
        f"git worktree add ../propeval-trusted {base} && make -C ../propeval-trusted setup, then "
        f"../propeval-trusted/.venv/bin/propeval ... --base {base} --pr <branch> (see SECURITY.md)"
    )
    if not wanted:
        if inside_tree:
            raise PolicyError(
                f"propeval runs from {package}, inside the tree it would make records for, and {base} has no {rel}: "
                f"it is that tree's own code, which could do anything with your keys; {fix}"
            )
        return InstallCheck(package, f"{base} has no {rel}: propeval is installed apart from this repository")
    have = _disk_blobs(package)
    differ = sorted(p for p in set(wanted) | set(have) if wanted.get(p) != have.get(p))
    if differ:
        shown = ", ".join(f"{rel}/{p}" for p in differ[:5]) + (
            f" and {len(differ) - 5} more" if len(differ) > 5 else ""
        )
        where = "the checked-out tree's own code" if inside_tree else "an install that is not at " + base
        raise PolicyError(
            f"propeval runs from {package} ({where}), whose code differs from {base}'s {rel} in {len(differ)} "
            f"file(s): {shown}; a record made with it could run code no maintainer reviewed, with your API and "
            f"signing keys at hand. Refused: {fix}"
        )
    return InstallCheck(package, f"propeval runs from {package}, identical to {rel} at {base}")


@dataclass
class PrTree:
    """A pull request checked out as data: its work tree, the commit it is at, and where it came from."""

    repo: Path  # the maintainer's repository (any of its work trees)
    ref: str  # as given (a branch name, or any commit-ish)
    commit: str  # the commit checked out
    worktree: Path  # the temporary work tree's top
    branch: str | None  # refs/heads/<ref> when ref is a local branch (moved to the records' commit)


def pr_root(pr: PrTree, corpus_root: Path) -> Path:
    """The corpus root inside the pull request's work tree (the same folder as in the repository)."""
    top = gitutil.toplevel(corpus_root).resolve()
    return pr.worktree / corpus_root.resolve().relative_to(top)


@contextmanager
def pr_checkout(root: Path, ref: str) -> Iterator[PrTree]:
    """The pull request at ``ref`` in a temporary work tree, made and removed with no hook running."""
    commit = gitutil.commit_of(root, ref)
    if commit is None:
        raise GitError(
            f"--pr {ref!r} names no commit here; fetch it first (git fetch origin pull/N/head:{ref})", ref=ref
        )
    branch = gitutil.branch_ref(root, ref)
    if branch is not None:
        holder = gitutil.checked_out_at(root, branch)
        if holder is not None:
            raise UsageError(
                f"branch {ref} is checked out in {holder}; records are committed on top of it, which would leave that "
                f"work tree behind its branch: check out something else there, or give the commit (--pr {commit[:12]})"
            )
    folder = Path(tempfile.mkdtemp(prefix="propeval-pr-"))
    worktree = folder / "tree"
    gitutil.worktree_add(root, worktree, commit)
    try:
        yield PrTree(gitutil.toplevel(root), ref, commit, worktree, branch)
    finally:
        gitutil.worktree_remove(root, worktree)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def commit_records(pr: PrTree, paths: list[str], message: str) -> str:
    """Commit ``paths`` (relative to the work tree's top) in the pull request's work tree with no
    hook running, and move its branch there; what was done, in one sentence."""
    new = gitutil.commit_nohooks(pr.worktree, paths, message)
    if new is None:
        return f"nothing to commit: no record changed in {pr.ref}"
    if pr.branch is not None:
        gitutil.move_ref(pr.repo, pr.branch, new, pr.commit)
        return f"committed the records as {new[:12]} on {pr.ref} (no hook ran); push it to the pull request's branch"
    return (
        f"committed the records as {new} on top of {pr.ref} (no hook ran; no branch moved): "
        f"push it with git push <remote> {new}:refs/heads/<the pull request's branch>"
    )
