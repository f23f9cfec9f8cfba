"""Checks that passed, remembered between runs: a file unchanged since it checked out is not checked again.

Some checks read a whole input only to find it as it was last time: the embedding cache's MAC over
its vectors (20 MB at 10k items), schema.json against its metaschema. A commit's hook would pay each on
every run. :func:`remember` records that a check passed on a *fact* (bytes that name exactly
what was checked: a file's path and stat stamp with its recorded MAC, or a digest of the file and
the checker's version) and :func:`remembered` answers whether that fact is the one recorded.

One record per *slot* (the embedding cache of one model, the schema of one corpus): a new fact
replaces the old, so records never pile up. A record is an HMAC-SHA256 of its slot and fact under
this user's cache key (:mod:`propeval.cachekey`), in the user cache folder (or in a ``checked``
folder of the cache it vouches for): a record copied from elsewhere, or forged without the key, is
not recognised, and the check runs. As in git's index, a file changed in place with its stat stamp
(size, mtime, inode and ctime) put back is not seen: only code running as this user can do that,
and it could as well read the key. A file changed in the last seconds is never vouched for.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from pathlib import Path


def default_folder() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "checked"


def _record(slot: str, fact: bytes) -> str | None:
    from propeval import cachekey
    from propeval.errors import ConfigError

    try:
        key = cachekey.cache_key()
    except (ConfigError, OSError):  # no usable key: nothing is remembered, every check runs
        return None
    return hmac.digest(key, b"propeval checked\0" + slot.encode("utf-8") + b"\0" + fact, "sha256").hex()


def _path(slot: str, folder: Path | None) -> Path:
    name = hashlib.sha256(slot.encode("utf-8")).hexdigest()[:32]
    return (default_folder() if folder is None else folder / "checked") / name


def remembered(slot: str, fact: bytes, folder: Path | None = None) -> bool:
    """Whether a check that passed on ``fact`` is what ``slot`` records."""
    want = _record(slot, fact)
    if want is None:
        return False
    return hmac.compare_digest(_read_record(_path(slot, folder)), want)


def _read_record(path: Path) -> str:
    """The record at ``path``: a plain file's first bytes, never following a link or waiting on a
    FIFO that a restored cache folder may hold ("" when it is anything else, unreadable, or not the
    ASCII a record is, which ``hmac.compare_digest`` could not compare)."""
    from propeval.fsutil import read_regular

    try:
        text = read_regular(path, 256).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return text


def remember(slot: str, fact: bytes, folder: Path | None = None) -> None:
    """Record that a check passed on ``fact`` in ``slot`` (a folder that cannot be written costs
    the next run the check, nothing else)."""
    from propeval.fsutil import atomic_write

    record = _record(slot, fact)
    if record is None:
        return
    path = _path(slot, folder)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, record + "\n", cache=True)
    from propeval.fsutil import prune

    prune(path.parent, "?" * 32, keep=KEEP_RECORDS, max_age_days=60, spare=path)  # one per corpus or model


KEEP_RECORDS = 256


# As in git's index: a file whose status changed this recently is never vouched for, since another
# write within the same clock tick could leave its stamp as it is. The one racy rule of every stat
# stamp on disk: this memo's, the load cache's and dedup's text records.
RACY_SECONDS = 2.0


def file_fact(path: Path, *parts: str, st: os.stat_result | None = None) -> bytes | None:
    """A fact naming ``path`` as it is now, or as ``st`` (a stat of it taken before it was read)
    found it: its stat stamp (size, mtime_ns, inode, ctime_ns), and ``parts``. None when it cannot
    be stat-ed, or changed less than :data:`RACY_SECONDS` ago."""
    import time

    if st is None:
        try:
            st = path.stat()
        except OSError:
            return None
    if time.time() - st.st_ctime < RACY_SECONDS:
        return None
    stamp = f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_ctime_ns}"
    return "\0".join((stamp, *parts)).encode("utf-8", "surrogateescape")
