"""Files are what they look like: only plain regular files are read from the corpus, rubrics and ledger.

Anything else under ``questions/``, ``rubrics/`` or ``ledger/`` is refused, each kind with its own rule:

* ``file-symlink``: a symbolic link, to a file or a folder, or dangling. Git stores a link as a
  link, so a pull request can add ``questions/c0001/i0163.yaml -> ../../docs/example.yaml``: a path
  that looks like an item, whose content comes from a file no check looks at.
* ``file-hardlink``: a regular file with more than one hard link (``st_nlink > 1``). Its bytes are
  shared with another name, perhaps outside the repository, which can change them unseen. A git
  checkout never makes one.
* ``file-special``: a FIFO, socket or device. Opening a FIFO blocks a reader forever.

Every decision comes from ``lstat``, so nothing is opened, or followed, to classify it; the loader
then opens a file with ``O_NOFOLLOW | O_NONBLOCK`` and checks that it is still the same regular
file (:func:`open_regular`), so a swap between the look and the read is caught too.

Failing (``ln -s ../../docs/example.yaml questions/c0001/i0163.yaml``) gives::

    questions/c0001/i0163.yaml [file-symlink] a symbolic link (to '../../docs/example.yaml'), not a
    regular file: ...; replace the link with the file itself: ...
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from propeval.result import Problem

SYMLINK = "file-symlink"
HARDLINK = "file-hardlink"
SPECIAL = "file-special"

# The rule ids this module reports; their descriptions are in propeval.rules.
RULES = (SYMLINK, HARDLINK, SPECIAL)


def _describe(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file or folder"


def _target(path: Path) -> str:
    try:
        return repr(os.readlink(path))  # repr: a link target is untrusted text (newlines, escapes)
    except OSError:
        return "an unreadable target"


def problem_for(path: Path, relpath: str, st: os.stat_result) -> Problem | None:
    """The problem with the entry whose ``lstat`` is ``st``, or None for a plain file or folder."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return Problem(
            relpath,
            0,
            0,
            SYMLINK,
            f"a symbolic link (to {_target(path)}), not a regular file: a link would be checked under one name "
            f"and read from another; replace the link with the file itself: git rm --cached {relpath}, "
            "then put the real content at that path",
        )
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISREG(mode):
        if st.st_nlink > 1:
            return Problem(
                relpath,
                0,
                0,
                HARDLINK,
                f"a regular file with {st.st_nlink} hard links: its bytes are shared with another file, perhaps "
                f"outside the repository, which can change them unseen; give it its own copy: "
                f"cp {relpath} {relpath}.copy && mv {relpath}.copy {relpath}",
            )
        return None
    return Problem(
        relpath,
        0,
        0,
        SPECIAL,
        f"{_describe(mode)}, not a regular file: propeval never opens it; remove it: rm {relpath}",
    )


def check_path(path: Path, relpath: str) -> Problem | None:
    """``lstat`` ``path`` and say what is wrong with it (None when it is a plain file or missing)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return problem_for(path, relpath, st)


def check_parents(path: Path, root: Path | None) -> Problem | None:
    """A symbolic link among the folders between ``root`` (excluded) and ``path`` (excluded).

    ``questions/c0099 -> /elsewhere`` would make every file below it come from elsewhere. Paths
    outside ``root`` (or with no root) are not looked at: their folders are the caller's choice.
    """
    if root is None:
        return None
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        return None
    folder = Path(os.path.abspath(root))
    for part in rel.parts[:-1]:
        folder = folder / part
        try:
            st = os.lstat(folder)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return problem_for(folder, folder.relative_to(os.path.abspath(root)).as_posix(), st)
    return None


class RefusedFileError(Exception):
    """:func:`open_regular` refused a path; ``problem`` says why (rule ``file-*``)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def open_regular(path: Path, relpath: str, root: Path | None = None) -> int:
    """Open ``path`` for reading only if it is a plain regular file; return the descriptor.

    ``lstat`` first, so a FIFO or a device is never opened; then ``O_NOFOLLOW | O_NONBLOCK`` and an
    ``fstat`` that must show the same inode, so a link or FIFO swapped in meanwhile is refused too.

    Raises:
        RefusedFileError: a link, hard link, special file, or a linked folder on the way.
        OSError: the file cannot be read (missing, no permission).
    """
    parent = check_parents(path, root)
    if parent is not None:
        raise RefusedFileError(parent)
    st = os.lstat(path)
    problem = problem_for(path, relpath, st)
    if problem is None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if problem is not None:
        raise RefusedFileError(problem)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:  # became a link after the lstat
            raise RefusedFileError(check_path(path, relpath) or _swapped(relpath)) from e
        raise
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or problem_for(path, relpath, now) is not None:
        os.close(fd)
        raise RefusedFileError(problem_for(path, relpath, now) or _swapped(relpath))
    return fd


def _swapped(relpath: str) -> Problem:
    return Problem(relpath, 0, 0, SPECIAL, "the file was replaced while it was being read; run the command again")


@dataclass
class Scan:
    """What a walk of one folder found: plain files to read, and everything refused."""

    names: list[str] = field(default_factory=list)  # str(path) of each plain file, sorted by path parts
    stats: dict[str, os.stat_result] = field(default_factory=dict)  # str(path) -> lstat of each file
    refused: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @functools.cached_property
    def files(self) -> list[Path]:
        """The plain files as paths (made on first use: a warm load of 10,000 items reads the
        names alone, and 12,000 Path objects cost it a tenth of a second)."""
        return [Path(p) for p in self.names]


def _suffix(name: str) -> str:
    """``os.path.splitext(name)[1].lower()`` (leading dots are part of the name), without its calls."""
    bare = name.lstrip(".")
    dot = bare.rfind(".")
    return bare[dot:].lower() if dot > 0 else ""


def scan(folder: Path, root: Path, *, suffixes: frozenset[str] | None = None) -> Scan:
    """Walk ``folder`` without following links; sort every entry into plain files or refused ones.

    ``os.scandir`` with one ``lstat`` per file: a link (to a file or to a folder) is never entered
    or opened. The folder itself being a link is refused as well. Paths are sorted by their parts.
    ``suffixes`` (lower case, with the dot) keeps only plain files with those suffixes; refused
    entries are kept whatever their name.
    """
    out = Scan()
    base = os.path.abspath(root)

    def rel(p: str) -> str:
        return os.path.relpath(p, base).replace(os.sep, "/")

    try:
        top = os.lstat(folder)
    except OSError:
        return out
    if not stat.S_ISDIR(top.st_mode):
        problem = problem_for(folder, rel(str(folder)), top)
        if problem is not None:
            out.refused.append(folder)
            out.problems.append(problem)
        return out
    folders = [str(folder)]
    found: list[tuple[str, os.stat_result]] = []
    refused: list[tuple[str, Problem]] = []
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone since the listing
                if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:  # the common case, without a relpath
                    if suffixes is None or _suffix(entry.name) in suffixes:
                        found.append((entry.path, st))
                    continue
                problem = problem_for(Path(entry.path), rel(entry.path), st)
                if problem is None:
                    found.append((entry.path, st))
                else:
                    refused.append((entry.path, problem))
    # By path parts: with the separator as "\0", which sorts before every other character, one
    # string comparison orders two paths as their lists of parts would (without 20k lists)
    found.sort(key=lambda f: f[0].replace(os.sep, "\0"))
    refused.sort(key=lambda f: f[0].replace(os.sep, "\0"))
    out.names = [p for p, _ in found]
    out.stats = dict(found)
    out.refused = [Path(p) for p, _ in refused]
    out.problems = [p for _, p in refused]
    return out
