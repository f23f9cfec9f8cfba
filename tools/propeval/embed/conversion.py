"""What the converted models share: e5 in onnxruntime (:mod:`propeval.embed.e5ort`) and USE's
memory-mapped copy (:mod:`propeval.embed.useconv`) each keep, beside their files, one JSON record per
key: a conversion that succeeded (its files, their sizes and sha256) or one that failed (and why).

The record is read before any file is opened; a file whose size differs from the record is taken as
half-written (no record), and its hash is checked on load by the module that owns it. The record
carries an HMAC-SHA256 under this user's cache key (:mod:`propeval.cachekey`), over every other
field: a folder restored or copied from elsewhere, whose model was replaced and whose sha256 was
updated to match, holds no record this user's propeval wrote, and the model is converted again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


class ConversionError(Exception):
    """The model could not be converted, or its conversion does not compute the original's vectors."""


class DamagedError(Exception):
    """A converted file does not match its record (damaged or half-written)."""


def read_record(
    folder: Path, key: str, fmt: int, *, failure_holds: Callable[[dict[str, Any]], bool] | None = None
) -> dict[str, Any] | None:
    """The record of ``key`` in ``folder``: a conversion that succeeded (every file present at its
    recorded size), or one that failed (while ``failure_holds(record)``, when given: a failure may be
    remembered only for the runtime that failed); else None."""
    from propeval.fsutil import read_regular

    try:
        meta = json.loads(read_regular(folder / f"{key}.json", MAX_RECORD_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != fmt or meta.get("key") != key or not authentic(meta):
        return None
    if meta.get("status") == "failed":
        return meta if failure_holds is None or failure_holds(meta) else None
    if meta.get("status") != "ok":
        return None
    try:
        for entry in meta["files"].values():
            if (folder / entry["name"]).stat().st_size != entry["bytes"]:
                return None
    except (OSError, KeyError, TypeError, AttributeError):
        return None
    return meta


MAX_RECORD_BYTES = 1 << 20  # a record is a few kB


def _mac(meta: dict[str, Any]) -> str | None:
    """The MAC of a record: every field but ``mac``, as canonical JSON; None without a usable key."""
    from propeval import cachekey
    from propeval.errors import ConfigError

    try:
        secret = cachekey.cache_key()
    except (ConfigError, OSError):
        return None
    body = json.dumps({k: v for k, v in meta.items() if k != "mac"}, sort_keys=True, separators=(",", ":"))
    return cachekey.mac(secret, b"propeval converted model record v1", body.encode("utf-8"))


def authentic(meta: dict[str, Any]) -> bool:
    """Whether this user's propeval wrote ``meta`` (its MAC checks out under the cache key)."""
    from propeval import cachekey

    mac = _mac(meta)
    return mac is not None and cachekey.same(mac, meta.get("mac"))


def sealed(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with its MAC (as it is written), or as it is when there is no usable cache key."""
    mac = _mac(meta)
    return meta if mac is None else {**{k: v for k, v in meta.items() if k != "mac"}, "mac": mac}


def usable_record(record: dict[str, Any] | None, folder: Path, key: str) -> dict[str, Any]:
    """``record`` if it is of a conversion that succeeded.

    Raises:
        DamagedError: there is no usable record.
        ConversionError: the record says the conversion failed.
    """
    if record is None:
        raise DamagedError(f"no complete conversion record for {key} in {folder}")
    if record.get("status") != "ok":
        raise ConversionError(str(record.get("reason", "the conversion failed")))
    return record


def write_record(folder: Path, key: str, meta: dict[str, Any]) -> None:
    """Write ``key``'s record atomically; a read-only folder costs a conversion next time, nothing else."""
    from propeval.fsutil import atomic_write

    with contextlib.suppress(OSError):
        atomic_write(folder / f"{key}.json", json.dumps(sealed(meta), indent=2, sort_keys=True) + "\n", cache=True)


def convert_once(
    folder: Path,
    key: str,
    read: Callable[[Path, str], dict[str, Any] | None],
    convert: Callable[[], dict[str, Any]],
    failure: Callable[[str], dict[str, Any]],
    *,
    prefix: str = "",
) -> dict[str, Any]:
    """The record of ``key``: read if one exists, else made by ``convert()`` under a lock (two
    processes at once: the second waits for the first and finds its record). A failure is recorded
    (``failure(reason)``) so it is said once, not retried on every run; an unexpected error's reason
    is ``prefix`` + its type and message.

    Raises:
        ConversionError: the conversion failed, now or when it was recorded.
    """
    from filelock import FileLock

    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / f"{key}.lock"), timeout=900):
        meta = read(folder, key)
        if meta is not None:
            if meta.get("status") != "ok":
                raise ConversionError(str(meta.get("reason")))
            return meta
        try:
            return convert()
        except ConversionError as e:
            write_record(folder, key, failure(str(e)))
            raise
        except Exception as e:  # numpy, onnx, onnxruntime, the packages and the file system raise many kinds
            reason = f"{prefix}{type(e).__name__}: {e}"
            write_record(folder, key, failure(reason))
            raise ConversionError(reason) from e
