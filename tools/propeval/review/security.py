"""What keeps the review server to its one user: a token, a session, same-origin writes, safe pages.

* **Token.** The server makes a random token at start (or takes ``PROPEVAL_REVIEW_TOKEN``) and
  prints the URL with it; the first request that carries it gets a session cookie (signed,
  ``HttpOnly``, ``SameSite=Strict``, named after the port) and is sent on to the same URL without the
  token. Anything else is refused (403): another user of this machine, or a page in the browser
  that guesses the port, cannot read or write.
* **Host.** On loopback only ``127.0.0.1``, ``localhost`` and ``[::1]`` are served (Starlette's
  ``TrustedHostMiddleware``): a DNS-rebinding page whose name resolves to 127.0.0.1 is refused.
* **Writes.** Every POST needs an ``Origin`` (or ``Referer``) of this server and the session's own
  CSRF token (a form field ``csrf`` or the header ``X-CSRF-Token``), compared in constant time.
* **Pages.** A Content-Security-Policy allows scripts and styles from this server only (no inline
  script runs, whatever a text holds); pages are not framed, not cached, and send a referrer to this server only.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
TOKEN_ENV = "PROPEVAL_REVIEW_TOKEN"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
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
    return host in LOOPBACK or host.startswith("127.")


def csrf_token(session: MutableMapping[str, Any]) -> str:
    """The session's CSRF token (made on first use)."""
    token = session.get("csrf")
    if not isinstance(token, str) or len(token) < 20:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def csrf_ok(session: MutableMapping[str, Any], sent: str | None) -> bool:
    token = session.get("csrf")
    return isinstance(token, str) and isinstance(sent, str) and hmac.compare_digest(token, sent)


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", []):
        if k == name:
            return str(v.decode("latin-1"))
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
    """The token check, the same-origin check on writes, and the page headers (see the module
    docstring). Runs inside Starlette's ``SessionMiddleware``, which puts ``scope["session"]``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = scope["session"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        sent = query.get("token")
        if sent is not None and hmac.compare_digest(sent.encode(), self.token.encode()):
            session["auth"] = True
            csrf_token(session)
            rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
            location = scope.get("path", "/") + (f"?{rest}" if rest else "")
            await _plain(send, 303, "signed in\n", [(b"location", location.encode("latin-1"))])
            return
        if session.get("auth") is not True:
            await _plain(
                send,
                403,
                "propeval review: open the URL that `propeval review` printed (it carries the session's token)\n",
            )
            return
        if scope.get("method") not in ("GET", "HEAD") and not self._same_origin(scope):
            await _plain(send, 403, "propeval review: a write from another origin is refused\n")
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    @staticmethod
    def _same_origin(scope: Scope) -> bool:
        host = _header(scope, b"host")
        origin = _header(scope, b"origin")
        if origin is None or origin == "null":
            referer = _header(scope, b"referer")
            if referer is None:
                return False
            parts = urlsplit(referer)
            origin = f"{parts.scheme}://{parts.netloc}"
        return host is not None and origin == f"http://{host}"
