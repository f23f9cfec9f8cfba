"""All git access, in small functions that return paths or text.

Checks never see a repository object: they get lists of paths and file contents. Every command
runs as ``git`` in a subprocess at the work tree's top (as gitpython's ``Repo.git`` would, without
importing gitpython, which costs a commit's hook 40-50 ms to start a few git processes).
Messages are read in the C locale, and git never reads standard input.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from propeval.errors import GitError

F = TypeVar("F", bound=Callable[..., Any])
_SNAPSHOT: dict[tuple[Any, ...], Any] | None = None


@contextlib.contextmanager
def snapshot() -> Iterator[None]:
    """Within the block, each question about refs and changes (the merge base, the changed paths,
    the files at a ref) is asked of git once and its answer reused: for a command whose parts each
    ask the same while nothing changes the repository (``propeval hook``: check, groups and dedup
    each asked for the merge base and the changed paths, six git runs instead of two)."""
    global _SNAPSHOT
    outer = _SNAPSHOT
    _SNAPSHOT = {} if outer is None else outer
    try:
        yield
    finally:
        _SNAPSHOT = outer


def _snapshotted(fn: F) -> F:
    """``fn``'s answers kept for the :func:`snapshot` block (lists copied: callers may change theirs)."""

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        memo = _SNAPSHOT
        if memo is None:
            return fn(*args)
        key = (fn.__name__, *args)
        if key not in memo:
            memo[key] = fn(*args)
        value = memo[key]
        return list(value) if isinstance(value, list) else value

    return wrapper  # type: ignore[return-value]


class _Failed(Exception):
    """A git command exited non-zero; ``stderr`` is what it said."""

    def __init__(self, stderr: str) -> None:
        super().__init__(stderr)
        self.stderr = stderr


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "LANGUAGE": "C", "LC_ALL": "C"}


@lru_cache(maxsize=8)
def _top(root: Path) -> Path:
    """The top of the work tree ``root`` is in, where every command runs."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=root,
            env=_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError as e:  # no such folder, or no git
        raise GitError(f"{root} is not inside a git repository; --changed-since needs one ({e})") from e
    top = done.stdout.decode("utf-8", "surrogateescape").strip()
    if done.returncode != 0 or not top:
        raise GitError(f"{root} is not inside a git repository; --changed-since needs one")
    return Path(top)


def _run(root: Path, args: list[str], *, env: dict[str, str] | None = None, timeout: float | None = None) -> bytes:
    """The standard output of ``git args`` at ``root``'s work tree top; _Failed when it exits non-zero."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=_top(root),
            env=env or _env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        raise _Failed(f"no answer in {timeout:g} seconds") from e
    except OSError as e:
        raise _Failed(str(e)) from e
    if done.returncode != 0:
        raise _Failed(done.stderr.decode("utf-8", "replace").strip())
    return done.stdout


def _git(root: Path, *args: str) -> str:
    try:
        return _run(root, list(args)).decode("utf-8", "surrogateescape")
    except _Failed as e:
        raise GitError(f"git {' '.join(args)} failed: {e.stderr or 'it exited non-zero'}") from e


def _empty_tree(root: Path) -> str:
    """The id of the empty tree in this repository's object format, hashed from empty stdin.

    Not from /dev/null: where /dev/null has been replaced by a regular file (an atomic write
    as root renames over it), that file is not empty and git refuses it as a tree.
    """
    import subprocess

    done = subprocess.run(
        ["git", "hash-object", "-t", "tree", "--stdin"], cwd=root, input=b"", capture_output=True, check=False
    )
    if done.returncode != 0:
        raise GitError(f"git hash-object -t tree --stdin failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode().strip()


@_snapshotted
def toplevel(root: Path) -> Path:
    return Path(_git(root, "rev-parse", "--show-toplevel").strip())


def is_shallow(root: Path) -> bool:
    return _git(root, "rev-parse", "--is-shallow-repository").strip() == "true"


@_snapshotted
def merge_base(root: Path, ref: str) -> str:
    """The merge base of ``ref`` and HEAD. A missing ref or a shallow clone is a GitError."""
    try:
        _run(root, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    except _Failed as e:
        if ref == "HEAD" and not _has_commits(root):
            # The first commit of a new repository (a pre-commit hook's --changed-since HEAD):
            # compare with the empty tree, so everything counts as new.
            return _empty_tree(root)
        raise GitError(
            f"git ref {ref!r} does not exist here; fetch it first (git fetch origin {ref}) "
            "or name an existing branch, tag or commit",
            ref=ref,
        ) from e
    if is_shallow(root):
        raise GitError(
            f"this clone is shallow, so the merge base with {ref!r} cannot be trusted; "
            "fetch the history first (git fetch --unshallow, or actions/checkout with fetch-depth: 0)",
            ref=ref,
        )
    try:
        return _run(root, ["merge-base", ref, "HEAD"]).decode("ascii", "replace").strip()
    except _Failed as e:
        raise GitError(f"{ref!r} and HEAD share no history; --changed-since needs a common ancestor", ref=ref) from e


@_snapshotted
def commit_of(root: Path, ref: str) -> str | None:
    """The commit ``ref`` names, or None when it names none (HEAD before the first commit)."""
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip() or None
    except GitError:
        return None


def is_ancestor(root: Path, ancestor: str, commit: str = "HEAD") -> bool:
    """Whether ``ancestor`` is ``commit`` or one of its ancestors (False for an unknown commit)."""
    try:
        _run(root, ["merge-base", "--is-ancestor", ancestor, commit])
    except _Failed:
        return False
    return True


def _has_commits(root: Path) -> bool:
    try:
        _run(root, ["rev-parse", "--verify", "--quiet", "HEAD"])
    except _Failed:
        return False
    return True


@_snapshotted
def changed_paths(root: Path, base: str) -> list[str]:
    """Paths (relative to ``root``) added, modified, deleted, renamed or retyped since commit ``base``.

    Includes uncommitted and untracked (not ignored) files, so it serves pre-commit as well as CI.
    A rename counts as both of its paths, and a deletion counts: callers that look only at files
    that exist skip it, the stable-ids rule and the ledger gates speak for it. Paths are taken as
    git names them and never resolved: a link is changed under its own name, wherever it points.
    """
    top = toplevel(root)
    out = _git(root, "diff", "--name-only", "-z", "--no-renames", base, "--")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    paths = {p for p in (out + untracked).split("\0") if p}
    prefix = _prefix(root, top)
    return sorted(p.removeprefix(prefix) for p in paths if p.startswith(prefix))


def given_changes(root: Path, base: str, paths: list[str]) -> None:
    """Within a :func:`snapshot` block, answer ``changed_paths(root, base)`` with ``paths`` (relative
    to ``root``) instead of asking git: pre-commit names the staged files it runs a hook on, and
    git's own diff and untracked-file scan cost a 10k-item commit a tenth of a second."""
    if _SNAPSHOT is None:
        raise RuntimeError("given_changes() outside a gitutil.snapshot() block")
    _SNAPSHOT[("changed_paths", root, base)] = sorted(set(paths))


def _prefix(root: Path, top: Path) -> str:
    """``root`` relative to the work tree's top, as a prefix of git's paths ("" at the top)."""
    rel = root.resolve().relative_to(top.resolve()).as_posix()
    return "" if rel == "." else rel + "/"


def common_dir(root: Path) -> Path | None:
    """The repository's common git folder (shared by its worktrees), or None outside a repository.

    Not through :func:`_top`: outside a work tree (a bare repository) this still answers.
    """
    import subprocess

    try:
        done = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git, or no such folder: not a repository we can use
        return None
    out = done.stdout.strip() if done.returncode == 0 else ""
    return Path(out) if out else None


@_snapshotted
def files_at(root: Path, ref: str, folder: str) -> list[str]:
    """Paths of files under ``folder`` (relative to ``root``) in commit ``ref``."""
    top = toplevel(root)
    prefix = (root.resolve() / folder).relative_to(top).as_posix()
    out = _git(root, "ls-tree", "-r", "--name-only", "-z", ref, "--", prefix)
    root_rel = root.resolve().relative_to(top).as_posix()
    strip = "" if root_rel == "." else root_rel + "/"
    return sorted(p.removeprefix(strip) for p in out.split("\0") if p)


def blob_at(root: Path, ref: str, path: str) -> bytes | None:
    """The bytes of ``path`` (relative to ``root``) at ``ref``, or None when it is absent there."""
    top = toplevel(root)
    rel = (root.resolve() / path).relative_to(top).as_posix()
    try:
        return _run(root, ["show", f"{ref}:{rel}"])
    except _Failed:
        return None


def config_value(root: Path, key: str) -> str | None:
    """``git config --get key`` in the repository at ``root`` (None when unset or not a repository)."""
    try:
        value = _git(root, "config", "--get", key).strip()
    except GitError:
        return None
    return value or None


def head_commit(root: Path) -> tuple[str, str] | None:
    """``(sha, committer date in ISO 8601)`` of HEAD, or None outside a repository or before the first commit."""
    try:
        out = _git(root, "log", "-1", "--format=%H %cI").strip()
    except GitError:
        return None
    sha, _, date = out.partition(" ")
    return (sha, date) if sha else None


def is_dirty(root: Path, folders: list[str]) -> bool:
    """Whether ``folders`` (relative to ``root``) hold uncommitted or untracked changes."""
    existing = [f for f in folders if (root / f).exists()]
    if not existing:
        return False
    return bool(_git(root, "status", "--porcelain", "--untracked-files=all", "--", *existing).strip())


def name_status(root: Path, base: str) -> list[tuple[str, str, str]]:
    """``(status, old, new)`` for each path changed since commit ``base``, relative to ``root``.

    Status is git's letter (A, C, D, M, R, T); renames are detected, so a moved file reads as R
    with both paths, and a deleted one as D (old == new). Links are not followed: a path is
    reported as git names it. Committed and uncommitted changes both count; untracked files are
    left to :func:`changed_paths`.
    """
    top = toplevel(root)
    fields = _git(root, "diff", "--name-status", "-z", "-M", base, "--").split("\0")
    root_rel = root.resolve().relative_to(top).as_posix()
    strip = "" if root_rel == "." else root_rel + "/"
    out = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][0]
        if status in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old = new = fields[i + 1]
            i += 2
        if old.startswith(strip) or new.startswith(strip):
            out.append((status, old.removeprefix(strip), new.removeprefix(strip)))
    return out


def changed_repo_paths(root: Path, base: str) -> list[str]:
    """Like :func:`changed_paths`, but every path of the repository, relative to its top: files
    outside the corpus folder (``.github/``, ``.pre-commit-config.yaml``) decide what runs too."""
    out = _git(root, "diff", "--name-only", "-z", "--no-renames", base, "--", ":/")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", ":/")
    return sorted({p for p in (out + untracked).split("\0") if p})


def blob_id(root: Path, ref: str, path: str) -> str | None:
    """The blob id of ``path`` (relative to the repository's top) at ``ref``, or None when absent."""
    try:
        out = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}:{path}").strip()
    except GitError:
        return None
    return out or None


def file_blob_id(path: Path) -> str | None:
    """The blob id git would give the file at ``path`` as it is on disk (a link: its target's
    text), or None when there is no file. Computed here, without git's filters: the bytes decide."""
    import hashlib
    import os

    try:
        data = os.readlink(path).encode("utf-8", "surrogateescape") if path.is_symlink() else path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def tree_blobs(root: Path, ref: str, folder: str) -> dict[str, str]:
    """``{path under folder: blob id}`` of every file under ``folder`` (relative to the repository's
    top) at ``ref``; empty when the folder is not there."""
    out = _git(root, "ls-tree", "-r", "-z", "--full-tree", ref, "--", folder)
    found = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        _mode, kind, sha = meta.split()
        if kind == "blob":
            found[path.removeprefix(folder.rstrip("/") + "/")] = sha
    return found


def added_blobs(root: Path, base: str) -> list[tuple[str, str, str]]:
    """``(commit, path, blob id)`` of every file added or changed in each commit since ``base``
    (``base..HEAD``), relative to the repository's top: what a branch carries in its history, also
    where a later commit removed it again."""
    fields = _git(
        root,
        "log",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--diff-filter=AMT",
        "--format=%x01%H",
        "--raw",
        f"{base}..HEAD",
        "--",
    ).split("\0")
    out = []
    commit = ""
    i = 0
    while i < len(fields):
        token = fields[i].lstrip("\n")
        i += 1
        if token.startswith("\x01"):
            # The commit line, and (with -z) possibly the first raw entry after its newline.
            head, _, rest = token.partition("\n")
            commit = head[1:]
            token = rest.lstrip("\n")
        if token.startswith(":") and i < len(fields):
            new_blob = token.split()[3]
            out.append((commit, fields[i], new_blob))
            i += 1
    return out


def blob_bytes(root: Path, blob: str, limit: int) -> bytes:
    """The first ``limit`` bytes of a blob."""
    try:
        data = _run(root, ["cat-file", "blob", blob])
    except _Failed as e:
        raise GitError(f"git cat-file blob {blob} failed: {e.stderr}") from e
    return data[:limit]


def worktree_add(root: Path, path: Path, ref: str) -> None:
    """Check ``ref`` out, detached, into a new work tree at ``path``, running no hook at all.

    Every git command here runs with ``core.hooksPath`` at an empty folder: a post-checkout hook
    (``pre-commit install --hook-type post-checkout``) would otherwise run the hooks of the tree
    being checked out, which is a pull request's own code.
    """
    _git_nohooks(root, "worktree", "add", "--detach", "--quiet", str(path), f"{ref}^{{commit}}")


def worktree_remove(root: Path, path: Path) -> None:
    """Remove a work tree made by :func:`worktree_add` (and forget it), changes and all."""
    import shutil

    try:
        _git_nohooks(root, "worktree", "remove", "--force", str(path))
    except GitError:
        shutil.rmtree(path, ignore_errors=True)
    _git_nohooks(root, "worktree", "prune")


def commit_nohooks(worktree: Path, paths: list[str], message: str) -> str | None:
    """Commit ``paths`` (relative to the work tree's top) in ``worktree`` with no hook running
    (``core.hooksPath`` at an empty folder, and ``--no-verify``); the new commit, or None when
    nothing under them changed. ``--force``: a pull request's own .gitignore does not decide which
    records are committed."""
    _git_nohooks(worktree, "add", "--all", "--force", "--", *paths)
    staged = _git_nohooks(worktree, "diff", "--cached", "--name-only", "-z", "--", *paths)
    if not staged.strip("\0"):
        return None
    _git_nohooks(worktree, "commit", "--no-verify", "--quiet", "-m", message, "--", *paths)
    return _git(worktree, "rev-parse", "HEAD").strip()


def branch_ref(root: Path, name: str) -> str | None:
    """``refs/heads/NAME`` when ``name`` is a local branch, else None."""
    try:
        _git(root, "show-ref", "--verify", "--quiet", f"refs/heads/{name}")
    except GitError:
        return None
    return f"refs/heads/{name}"


def checked_out_at(root: Path, ref: str) -> Path | None:
    """The work tree that has the branch ``ref`` (``refs/heads/...``) checked out, if any."""
    out = _git(root, "worktree", "list", "--porcelain", "-z")
    here = None
    for field in out.split("\0"):
        if field.startswith("worktree "):
            here = Path(field.removeprefix("worktree "))
        elif field == f"branch {ref}":
            return here
    return None


def move_ref(root: Path, ref: str, new: str, old: str) -> None:
    """Point ``ref`` at ``new`` if it still points at ``old`` (git's compare-and-swap)."""
    _git_nohooks(root, "update-ref", "-m", "propeval: records", ref, new, old)


def _git_nohooks(root: Path, *args: str) -> str:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="propeval-nohooks-") as empty:
        return _git(root, "-c", f"core.hooksPath={empty}", *args)


def remote_refs(url: str, *, tags: bool = False, head: bool = False, timeout: float = 60.0) -> dict[str, str]:
    """``git ls-remote`` of a repository no clone is needed for: ref name -> commit.

    ``tags``: the tags (``refs/tags/NAME``, not peeled); ``head``: its ``HEAD``. Only the
    transports a hooks repository uses are allowed (``protocol.ext`` runs a command: never), git
    never prompts for a password, and a repository that does not answer in ``timeout`` seconds
    is a GitError.
    """
    import subprocess

    if url.startswith("-"):
        raise GitError(f"{url!r} is not a repository URL or path")
    args = ["git", "-c", "protocol.ext.allow=never", "ls-remote"]
    args += ["--tags", "--refs"] if tags else []
    args += ["--", url] + (["HEAD"] if head else [])
    env = {**_env(), "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
    try:
        done = subprocess.run(
            args, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        raise GitError(f"git ls-remote {url} failed: no answer in {timeout:g} seconds") from e
    except OSError as e:
        raise GitError(f"git ls-remote {url} failed: {e}") from e
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git ls-remote {url} failed: {stderr or f'exit {done.returncode}'}")
    out = done.stdout.decode("utf-8", "surrogateescape")
    refs: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        if sha and ref:
            refs[ref.strip()] = sha.strip()
    return refs
