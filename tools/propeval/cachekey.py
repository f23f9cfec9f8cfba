"""The per-user key that authenticates cache entries: a cached value is used only if this user's
propeval wrote it.

The embedding cache and the judge response cache are inputs: a vector or a verdict read from them
decides a result as surely as one computed now. Their folders can be filled from elsewhere (a CI
cache restored from a scope a pull request could write, a cache folder copied between machines or
shared, ``$PROPEVAL_RESPONSE_CACHE`` pointing at a shared folder), so each entry carries an
HMAC-SHA256 under a key kept *outside* the cache: ``$PROPEVAL_CACHE_KEY``, else ``cache-key`` in
the user config folder (``~/.config/propeval/`` on Linux), 32 random bytes made on first use with
mode 0600. An entry whose MAC does not check out is a warning and a miss: the value is computed
again, never used.

What it does not stop: code running as the same user can read the key (as it can read a signing
key); the key keeps out what was written elsewhere, not what runs here.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from propeval.errors import ConfigError

ENV = "PROPEVAL_CACHE_KEY"
FILE = "cache-key"
_KEYS: dict[Path, bytes] = {}


def key_path() -> Path:
    """``$PROPEVAL_CACHE_KEY``, else ``cache-key`` in the user config folder."""
    env = os.environ.get(ENV, "").strip()
    if env:
        return Path(env).expanduser()
    from propeval.signing import user_config_dir

    return user_config_dir() / FILE


def cache_key() -> bytes:
    """This user's cache key, made (mode 0600, never over an existing file) on first use."""
    path = key_path()
    if path in _KEYS:
        return _KEYS[path]
    if not os.path.lexists(path):
        _create(path)
    key = _read(path)
    _KEYS[path] = key
    return key


def _create(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: read theirs
        return
    except OSError as e:
        raise ConfigError(
            f"cannot make the cache key {path}: {e.strerror or e}; point {ENV} at a writable place", key=ENV
        ) from None
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(secrets.token_hex(32) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _read(path: Path) -> bytes:
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"the cache key {path} is not a regular file; remove it (a new one is made)", key=ENV)
        if os.name == "posix" and st.st_mode & 0o077:
            raise ConfigError(
                f"the cache key {path} has mode {stat.S_IMODE(st.st_mode):04o}: others can read or change it; "
                f"run: chmod 600 {path}",
                key=ENV,
            )
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the cache key {path}: {e}", key=ENV) from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ConfigError(
            f"the cache key {path} is not 64 hexadecimal digits; remove it (a new one is made, and every cached "
            "entry is computed again once)",
            key=ENV,
        )
    return key


def mac(key: bytes, *parts: bytes) -> str:
    """The hex HMAC-SHA256 of ``parts``, each length-prefixed so that no two lists of parts collide."""
    h = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def digest(key: bytes, data: bytes) -> str:
    """The hex HMAC-SHA256 of one message (the one-shot C path: for many small entries)."""
    return hmac.digest(key, data, "sha256").hex()


def same(a: str, b: object) -> bool:
    """Whether ``b`` is the MAC ``a`` (constant time). Anything but an ASCII string is not, without
    a ``TypeError`` from ``hmac.compare_digest``, which compares no other ``str``."""
    return isinstance(b, str) and b.isascii() and hmac.compare_digest(a, b)
