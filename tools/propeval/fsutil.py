"""Durable file writes: a reader or a kill sees the old file or the new one, never half of either.

A write that fails (full disk, the process's file size limit, a read-only folder) raises
:class:`~propeval.errors.StorageError` after undoing what it wrote: the temporary file is removed,
an appended line is truncated away.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from propeval.errors import StorageError


def _storage_error(path: Path, e: OSError, undone: str) -> StorageError:
    reason = e.strerror or str(e)
    return StorageError(f"cannot write {path}: {reason}; {undone}", path=str(path), errno=e.errno, reason=reason)


def atomic_write(path: Path, data: str | bytes, *, encoding: str = "utf-8", cache: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync, then rename.

    A device or a FIFO at ``path`` is written to, not replaced, unless ``cache``: a cache's file
    is always renamed over whatever is there (a FIFO planted in a cache folder would block the write).

    Raises StorageError when the write fails; ``path`` then still holds what it held before.
    """
    raw = data.encode(encoding) if isinstance(data, str) else data
    if not cache and _special(path):
        # A device or a FIFO (`-o /dev/null`, `--sarif /dev/stdout`) is written to, never renamed
        # over: run as root, a rename would replace /dev/null with a regular file for every process.
        try:
            with path.open("wb") as fh:
                fh.write(raw)
        except OSError as e:
            raise _storage_error(path, e, "nothing else was changed") from e
        return
    created = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(path, raw)
    except OSError as e:
        for folder in created:  # deepest first: a folder made for this file goes with it
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise _storage_error(path, e, "the file was left as it was") from e


def _special(path: Path) -> bool:
    """Whether ``path`` (followed through links) is a character or block device, or a FIFO."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)


def _atomic_write(path: Path, raw: bytes) -> None:
    with atomic_stream(path) as fh:
        fh.write(raw)


@contextlib.contextmanager
def atomic_stream(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content to, for content too big to hold in memory: a
    temporary file in the same folder, fsynced and renamed over ``path`` when the block ends.

    When the block raises, or the write fails, the temporary file is removed, ``path`` still holds
    what it held before, and the exception (an OSError as the system raised it) goes on.
    :func:`atomic_write` is this, for bytes in hand.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private; give it the mode the old file had, or the umask's default.
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def create_exclusive(path: Path, data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Write a new file at ``path``, failing with FileExistsError if anything is there already.

    The name is taken with ``O_EXCL`` (atomic: of two writers, exactly one gets it), then the
    content replaces the empty placeholder through :func:`atomic_write`, so a reader sees nothing,
    an empty file, or the whole file; never half of it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    os.close(fd)
    try:
        atomic_write(path, data, encoding=encoding)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        raise


def append_line(path: Path, line: str) -> None:
    """Append one whole line durably (O_APPEND, fsync), or nothing at all.

    A short write is finished; a failed one (full disk, file size limit) is cut back to the old
    end of the file, so a reader never meets half a line, and StorageError is raised.
    """
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as e:
        raise _storage_error(path, e, "nothing was written") from e
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as e:
            try:
                os.ftruncate(fd, start)
            except OSError:
                undone = f"the line could not be cut back: remove what follows byte {start}"
                raise _storage_error(path, e, undone) from e
            raise _storage_error(path, e, "the line was not appended") from e
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: Path, timeout: float = 60.0, busy: Callable[[], Exception] | None = None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (a lock file, created if missing, or a folder) for
    the ``with`` block.

    The lock filelock's ``FileLock`` takes on POSIX (``flock`` of the same file), so a process that
    uses either excludes the other; written here because importing filelock costs a commit's hook
    about 40 ms (it imports asyncio and logging), on a path that takes its lock once. Raises
    ``busy()``, or TimeoutError (an OSError), when the lock is not free within ``timeout`` seconds.
    """
    import fcntl
    import time

    fd = os.open(path, os.O_RDONLY) if path.is_dir() else os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    if busy is not None:
                        raise busy() from None
                    raise TimeoutError(f"the lock {path} is held by another process") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class UnsafeFileError(OSError):
    """A cache file that is not read: a symbolic link, a FIFO, a device or a folder, or a file over
    its reader's size cap. Every cache reader takes it as a miss, as it takes a damaged file."""


def open_regular(path: Path, limit: int | None = None) -> io.BufferedReader:
    """``path`` opened for reading (binary, buffered, ``name`` the path) when it is a regular file
    of at most ``limit`` bytes, never following a link at its last step and never waiting on a
    FIFO: what a cache reader opens, since a cache folder restored or copied from elsewhere can hold
    a FIFO (a read that never returns), a link to ``/dev/zero`` (a read that never ends) or a file
    of any size.

    Raises:
        FileNotFoundError: nothing is at ``path``.
        UnsafeFileError: it is no regular file, or it is over ``limit`` bytes.
        OSError: it cannot be opened.
    """
    import errno
    import stat

    def opener(name: str, flags: int) -> int:
        try:
            return os.open(name, flags | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise UnsafeFileError(errno.ELOOP, "a symbolic link, which a cache never holds", name) from None
            raise

    try:
        fh = open(path, "rb", opener=opener)  # noqa: SIM115 (the caller closes it)
    except IsADirectoryError:
        raise UnsafeFileError(errno.EISDIR, "a folder, where a cache file should be", str(path)) from None
    try:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder)", str(path))
        if limit is not None and st.st_size > limit:
            raise UnsafeFileError(errno.EFBIG, f"{st.st_size} bytes, over the {limit} a cache file may hold", str(path))
    except BaseException:
        fh.close()
        raise
    return fh


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` as :func:`open_regular` opens it: a regular file of at most ``limit``
    bytes (a file that grows past it while read raises too).

    Raises:
        FileNotFoundError, UnsafeFileError, OSError: as :func:`open_regular`.
    """
    import errno

    with open_regular(path, limit) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFileError(errno.EFBIG, f"over the {limit} bytes a cache file may hold", str(path))
    return data


def prune(folder: Path, pattern: str, *, keep: int, max_age_days: float, spare: Path | None = None) -> int:
    """Remove the files of ``folder`` matching ``pattern`` beyond the ``keep`` most recently
    modified, and any older than ``max_age_days``, but ``spare``: a user cache that holds one file
    per checkout (or per corpus) stays bounded however many checkouts come and go. Returns how many
    were removed; a file that cannot be removed (another process's, gone already) is left."""
    import time

    try:
        found = [(p.stat().st_mtime, p) for p in folder.glob(pattern) if p != spare and p.is_file()]
    except OSError:
        return 0
    found.sort(reverse=True)
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    for n, (mtime, path) in enumerate(found):
        if n >= keep - (spare is not None) or mtime < cutoff:
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
    return removed
