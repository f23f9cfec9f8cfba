"""What the CLI does with an exception nobody meant to raise: keep the traceback, say it is a bug.

A crash must never look like a finding (exit 1) and never spill a traceback onto a hook's or a CI
job's terminal. The traceback goes to a file under the user state folder (``platformdirs``:
``$XDG_STATE_HOME/propeval/crashes`` on Linux), or to a temporary file when that folder cannot be
written, and the CLI prints one line that names the file.
"""

from __future__ import annotations

import datetime
import errno
import os
import platform
import sys
import tempfile
import traceback
from pathlib import Path

from propeval import __version__
from propeval.result import clip

# OSErrors that are the machine's state, not propeval's logic: reported as tool failures (exit 3)
# with the file and the reason, and no "bug" line.
RESOURCE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EFBIG,
        errno.EROFS,
        errno.EIO,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENOMEM,
        errno.EACCES,
        errno.EPERM,
    }
)


def is_resource_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS


def describe_os_error(exc: OSError) -> str:
    """One line for a resource OSError: what failed, on which file, and what to do."""
    name = errno.errorcode.get(exc.errno or 0, "?")
    what = f"cannot use {exc.filename}" if exc.filename else "a file operation failed"
    reason = exc.strerror or str(exc)
    hint = {
        errno.ENOSPC: "free some disk space and run the command again",
        errno.EDQUOT: "free some space within your quota and run the command again",
        errno.EFBIG: "the file would exceed the size limit of this process or file system",
    }.get(exc.errno or 0, "check the file's permissions and the file system")
    return clip(f"{what}: {reason} ({name}); {hint}", 500)


def write_report(exc: BaseException, argv: list[str] | None = None) -> Path | None:
    """Write ``exc``'s traceback to a new file and return its path (None when nothing could be written)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"crash-{stamp}-{os.getpid()}.txt"
    text = "".join(
        [
            f"propeval {__version__} on Python {platform.python_version()} ({sys.platform})\n",
            f"command: {' '.join(argv if argv is not None else sys.argv)}\n\n",
            *traceback.format_exception(exc),
        ]
    )
    for folder in _folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix=name[:-4] + "-", suffix=".txt", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(text)
            return Path(path)
        except OSError:
            continue
    return None


def _folders() -> list[Path]:
    out = []
    try:
        from platformdirs import user_state_dir

        out.append(Path(user_state_dir("propeval")) / "crashes")
    except Exception:  # a broken platformdirs still leaves the temp folder
        pass
    out.append(Path(tempfile.gettempdir()))
    return out


def bug_line(exc: BaseException, report: Path | None) -> str:
    """The one line the CLI prints for an unexpected exception."""
    what = " ".join(f"{type(exc).__name__}: {exc}".split())
    where = f"the traceback is in {report}" if report else "the traceback could not be written to any folder"
    return (
        f"propeval: internal error (a bug in propeval, not a problem in your files): {clip(what, 300)}; "
        f"{where}; please report it with that file"
    )
