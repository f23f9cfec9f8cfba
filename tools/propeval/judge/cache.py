"""The response cache: a judge request asked once is never paid for again.

A re-grade with the same judge (model and endpoint base URL), the same prompt, rubric version
and settings sends the very same request, so its reply is read from here instead. The key is the
sha256 of a canonical JSON (sorted keys, no spaces, UTF-8) of the full request: the endpoint's
name and base URL, model, every message, temperature, max_tokens and the ``response_format``
body, plus the rubric's name, version and content hash. The judge prompt's per-call boundary
token (``prompt.py``) is replaced by a fixed placeholder first, or no two requests would ever
match. There is no expiry: the key pins every input, so an entry can only go stale if the server
changes what it serves under the same model id, and ``--no-cache`` is the answer to that. The
endpoint's name is in the key so that two panel members on one model (a self-consistency panel
at a temperature above 0) stay two judges on a re-grade instead of sharing one reply.

Only a reply that gave a valid verdict is stored: an error, a malformed or truncated reply
(``finish_reason`` ``length``) and an invalid verdict never are. One JSON file per key, under
``<user cache dir>/propeval/responses/<2 hex>/<key>.json`` (``platformdirs``), written
atomically; ``$PROPEVAL_RESPONSE_CACHE`` names another folder. The cache is untrusted on read:
an entry that is too big, not JSON, of the wrong shape or filed under another key is a miss with
a warning, and the request goes to the server. So is an entry whose MAC (HMAC-SHA256 under this
user's cache key, :mod:`propeval.cachekey`, over everything else in the entry) does not check out:
a verdict rewritten in the cache, or an entry written by another user or machine, is asked again,
never used. A grade record says ``cached: true`` when its verdict came from here, and ``grade``,
``score`` and the report count those grades.

`answer` does not use it: repeated answer runs of one model exist to measure its sampling spread
(mean ± sd over runs), and a cache would hand every run the first run's answers.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval import cachekey

FORMAT = 2  # 2: every entry carries a MAC
ENV = "PROPEVAL_RESPONSE_CACHE"
MAX_ENTRY_BYTES = 2 << 20  # a reply is capped far below this (max_tokens x 8 characters)
_PLACEHOLDER = "BOUNDARY"


def default_dir() -> Path:
    """``$PROPEVAL_RESPONSE_CACHE``, else ``<user cache dir>/propeval/responses``."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "responses"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(
    *,
    endpoint: str,
    base_url: str,
    model: str,
    messages: list[dict[str, str]],
    params: dict[str, Any],
    rubric: dict[str, str],
    token: str = "",
) -> str:
    """The cache key of one request: sha256 of its canonical JSON, the boundary ``token`` masked."""

    def mask(text: str) -> str:
        return text.replace(token, _PLACEHOLDER) if token else text

    body = {
        "format": FORMAT,
        "endpoint": endpoint,
        "base_url": base_url.rstrip("/"),
        "model": model,
        "messages": [{k: mask(v) for k, v in m.items()} for m in messages],
        "params": params,
        "rubric": rubric,
    }
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Hit:
    text: str
    finish_reason: str | None


@dataclass
class ResponseCache:
    """Entries under ``folder``; ``warnings`` collects what was wrong with the entries read (and
    writes that failed), as ``(path, message)``."""

    folder: Path
    warnings: list[tuple[str, str]] = field(default_factory=list)
    hits: int = 0
    stored: int = 0

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Hit | None:
        """The stored reply under ``key``, or None (missing, or unusable: then with a warning)."""
        from propeval.fsutil import read_regular

        path = self.path(key)
        try:
            data = read_regular(path, MAX_ENTRY_BYTES)
        except FileNotFoundError:
            return None
        except OSError as e:  # no regular file (a FIFO, a link, a device), over the cap, unreadable
            return self._bad(path, f"cannot be read ({e.strerror or e})")
        try:
            entry = json.loads(data)
        except (ValueError, RecursionError):
            return self._bad(path, "is not JSON")
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
            return self._bad(path, "is not an entry of this key and format")
        if not cachekey.same(_mac(entry), entry.get("mac")):
            return self._bad(
                path,
                "failed authentication (its MAC does not match this user's cache key: it was written by another "
                "user, machine or CI runner, which is the usual reason, or changed since)",
            )
        text, finish = entry.get("text"), entry.get("finish_reason")
        if not isinstance(text, str) or not text or not (finish is None or isinstance(finish, str)):
            return self._bad(path, "holds no reply text")
        if finish == "length":
            return self._bad(path, "holds a reply cut at max_tokens, which is never cached")
        self.hits += 1
        return Hit(text, finish)

    def reject(self, key: str, why: str) -> None:
        """A hit whose reply failed validation: warn; the request goes to the server."""
        self.hits -= 1
        self._bad(self.path(key), f"holds a reply that is not a valid verdict ({why})")

    def put(self, key: str, text: str, finish_reason: str | None, about: dict[str, Any]) -> None:
        """Store a reply that gave a valid verdict (never an error, a cut or an invalid reply)."""
        from propeval.errors import StorageError
        from propeval.fsutil import atomic_write

        if finish_reason == "length" or not text:
            return
        entry = {"format": FORMAT, "key": key, "text": text, "finish_reason": finish_reason, **about}
        entry["mac"] = _mac(entry)
        try:
            atomic_write(self.path(key), canonical(entry) + "\n", cache=True)
        except StorageError as e:
            self.warnings.append((str(self.path(key)), f"response cache entry not written: {e}"))
            return
        self.stored += 1

    def _bad(self, path: Path, why: str) -> Hit | None:
        self.warnings.append((str(path), f"response cache entry {why}; treated as a miss and asked again"))
        return None


def _mac(entry: dict[str, Any]) -> str:
    """The MAC of an entry: over the canonical JSON of every field but ``mac``."""
    body = {k: v for k, v in entry.items() if k != "mac"}
    return cachekey.mac(cachekey.cache_key(), b"propeval response cache v2", canonical(body).encode("utf-8"))
