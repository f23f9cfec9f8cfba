"""A converted model's files, checked against their recorded sha256 once, then remembered.

Hashing a 35-65 MB converted file on every load costs a hook several hundredths of a CPU-second,
so a check that passed is remembered in ``<key>.verified``: each file's (size, mtime_ns, inode,
device) and sha256, under an HMAC with this user's cache key (:mod:`propeval.cachekey`). A file
whose stamp changed, or a memo that is missing, unauthenticated or made by someone else, means
hashing again. A file changed in place with its mtime put back is not seen until its stamp
changes: only code running as this user can do that, and it could as well rewrite the memo's key.

Used by both conversions: e5's onnxruntime graph (:mod:`propeval.embed.e5ort`) and USE's
memory-mapped weights (:mod:`propeval.embed.useconv`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
from pathlib import Path


class Mismatch(Exception):
    """A file is unreadable or does not match its recorded sha256."""


def verify(folder: Path, key: str, paths: dict[str, Path], sha256: dict[str, str], *, label: bytes) -> None:
    """Check each of ``paths`` (role -> file) against ``sha256`` (role -> hex digest), or find that
    check remembered in ``folder/<key>.verified`` under ``label`` (which names the kind of model).

    Raises:
        Mismatch: a file is unreadable or does not match its record.
    """
    from propeval import cachekey

    memo = folder / f"{key}.verified"
    stamps = {}
    for role, path in paths.items():
        try:
            st = path.stat()
        except OSError as e:
            raise Mismatch(f"{path} is unreadable ({e})") from e
        stamps[role] = [path.name, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, sha256[role]]
    payload = json.dumps(stamps, sort_keys=True).encode("utf-8")
    try:
        secret = cachekey.cache_key()
    except Exception:  # no usable cache key (ConfigError, an unreadable file): hash every time
        secret = None
    mac = hmac.digest(secret, label + b"\0" + payload, "sha256").hex() if secret else None
    from propeval.fsutil import open_regular, read_regular

    if mac is not None:
        try:
            if hmac.compare_digest(read_regular(memo, 256).decode("ascii").strip(), mac):
                return
        except (OSError, UnicodeDecodeError):
            pass
    for role, path in paths.items():
        try:
            with open_regular(path) as fh:
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError as e:
            raise Mismatch(f"{path} is unreadable ({e})") from e
        if digest != sha256[role]:
            raise Mismatch(f"{path} does not match its recorded sha256 (damaged or half-written)")
    if mac is not None:
        from propeval.fsutil import atomic_write

        with contextlib.suppress(OSError):  # a read-only folder costs a hash next time, nothing else
            atomic_write(memo, mac + "\n", cache=True)
