"""What keeps the review server to its one user: a token, a server-side session, a write key that
never travels in a cookie, same-origin writes, safe pages.

* **Token.** The server makes a random token at start (or takes ``PROPEVAL_REVIEW_TOKEN``) and
  prints the URL with it. The request that carries it opens a session: a cookie (``HttpOnly``,
  ``SameSite=Strict``, named after the port) that holds only the session's random id, and a *write
  key* handed to the page in the redirect's fragment (``#write=...``, never sent to a server), which
  the page keeps in its origin's ``localStorage``. Anything without a session is refused (403).
* **Sessions live on the server**, in memory and in a file of the user's state folder (``0600``;
  one per corpus, labels folder and port), which holds only hashes of the ids and keys: a restart
  keeps everyone signed in with their rater name and place. Browsers send a ``127.0.0.1`` cookie to
  every port of that host, so another local server can read the cookie; it is never enough to write.
* **Writes.** Every POST needs an ``Origin`` (or ``Referer``) that is this server, host and port,
  and the session's write key (a form field ``csrf`` or the header ``X-CSRF-Token``), compared in
  constant time. The key is in no cookie and no page: only the tab that opened the token's URL (and
  tabs of the same origin) holds it.
* **Host.** Only the names this server answers to are served (Starlette's ``TrustedHostMiddleware``):
  on loopback ``127.0.0.1``, ``localhost`` and ``[::1]``, so a DNS-rebinding page is refused.
* **Pages.** A Content-Security-Policy allows scripts and styles from this server only (no inline
  script runs, whatever a text holds); pages are not framed, not cached, and send a referrer to this
  server only.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
TOKEN_ENV = "PROPEVAL_REVIEW_TOKEN"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
MAX_SESSIONS = 200
SESSION_DAYS = 30
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``): parsed, never matched as text, so
    ``127.evil.example`` is a name like any other."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def served_names(host: str) -> list[str]:
    """The Host names a server bound to ``host`` answers to: the loopback names on loopback, else
    ``host`` itself (for an any-address bind, this machine's names)."""
    bare = host.strip("[]")
    if is_loopback(host):
        named = f"[{bare}]" if ":" in bare else bare
        return list(LOOPBACK_HOSTS) + ([] if named in LOOPBACK_HOSTS else [named])
    try:
        addr = ipaddress.ip_address(bare)
    except ValueError:
        return [host]
    if addr.is_unspecified:
        import socket

        names = {socket.gethostname(), socket.getfqdn()}
        return sorted(names) + list(LOOPBACK_HOSTS)
    return [f"[{bare}]" if addr.version == 6 else bare]


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


class Session(dict[str, Any]):
    """One browser's session: ``rater`` and ``place`` (the last rating page), and the write key's
    hash. Changing it marks it to be saved."""

    def __init__(self, store: SessionStore, sid_hash: str, data: dict[str, Any]) -> None:
        super().__init__(data)
        self._store = store
        self._sid_hash = sid_hash

    def __setitem__(self, key: str, value: Any) -> None:
        if self.get(key) != value:
            super().__setitem__(key, value)
            self._store.changed(self._sid_hash, self)

    def write_ok(self, sent: str | None) -> bool:
        want = self.get("write")
        return isinstance(want, str) and isinstance(sent, str) and hmac.compare_digest(want, _digest(sent))


class SessionStore:
    """The server's sessions, by the hash of their id; kept in ``path`` (``0600``) when one is given."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._sessions: dict[str, dict[str, Any]] = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        if self.path is None:
            return {}
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return {}
        try:
            with os.fdopen(fd, "rb") as fh:
                data = json.loads(fh.read(1 << 20))
        except (OSError, ValueError):
            return {}
        now = time.time()
        if not isinstance(data, dict):
            return {}
        return {
            k: v
            for k, v in data.items()
            if isinstance(v, dict) and isinstance(v.get("seen"), float | int) and now - v["seen"] < SESSION_DAYS * 86400
        }

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._sessions, fh)
            os.replace(tmp, self.path)
        except OSError:
            pass  # sessions then last as long as this server: signing in again is the remedy

    def open(self, port: int) -> tuple[str, str]:
        """A new session of the server on ``port``: (its id, for the cookie; its write key, for the page)."""
        sid, key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                oldest = sorted(self._sessions, key=lambda k: self._sessions[k]["seen"])
                for k in oldest[: len(self._sessions) - MAX_SESSIONS + 1]:
                    del self._sessions[k]
            self._sessions[_digest(sid)] = {"write": _digest(key), "port": port, "seen": time.time()}
            self._save()
        return sid, key

    def get(self, sid: str | None, port: int) -> Session | None:
        """The session ``sid`` of the server on ``port`` (a session of another port is none)."""
        if not sid:
            return None
        h = _digest(sid)
        with self._lock:
            data = self._sessions.get(h)
            return None if data is None or data.get("port") != port else Session(self, h, data)

    def changed(self, sid_hash: str, session: Session) -> None:
        with self._lock:
            self._sessions[sid_hash] = {**session, "seen": time.time()}
            self._save()


def session_file(root: Path, labels: Path, port: int) -> Path:
    """Where a server's sessions are kept: the user's state folder, one file per corpus, labels
    folder and port (another server never reads this one's)."""
    from platformdirs import user_state_dir

    name = _digest(f"{root.resolve()}\0{labels.resolve()}\0{port}")[:24]
    return Path(user_state_dir("propeval")) / "review-sessions" / f"{name}.json"


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", []):
        if k == name:
            return str(v.decode("latin-1"))
    return None


def _cookie(scope: Scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    for part in raw.split(";"):
        k, _, v = part.strip().partition("=")
        if k == name:
            return v
    return None


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """The token, the session, the same-origin check on writes and the page headers (see the
    module docstring). Puts the :class:`Session` in ``scope["session"]``."""

    def __init__(self, app: ASGIApp, token: str, port: int, store: SessionStore, names: list[str]) -> None:
        self.app = app
        self.token = token
        self.store = store
        self.port = port
        self.cookie = f"propeval_review_{port}"
        self.origins = {f"http://{n}:{port}" for n in names}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        sent = query.get("token")
        if sent is not None and hmac.compare_digest(sent.encode(), self.token.encode()):
            sid, key = self.store.open(self.port)
            rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
            location = scope.get("path", "/") + (f"?{rest}" if rest else "") + f"#write={quote(key)}"
            cookie = f"{self.cookie}={sid}; Path=/; HttpOnly; SameSite=Strict"
            await _plain(
                send, 303, "signed in\n", [(b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode())]
            )
            return
        session = self.store.get(_cookie(scope, self.cookie), self.port)
        if session is None:
            await _plain(
                send,
                403,
                "propeval review: open the URL that `propeval review` printed (it carries the session's token)\n",
            )
            return
        scope["session"] = session
        if scope.get("method") not in ("GET", "HEAD") and not self._same_origin(scope):
            await _plain(send, 403, "propeval review: a write from another origin is refused\n")
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _same_origin(self, scope: Scope) -> bool:
        origin = _header(scope, b"origin")
        if origin is None or origin == "null":
            referer = _header(scope, b"referer")
            if referer is None:
                return False
            parts = urlsplit(referer)
            origin = f"{parts.scheme}://{parts.netloc}"
        # host AND port of this server, whatever the request's Host header says
        return origin in self.origins
