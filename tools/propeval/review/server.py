"""Serving the review app: bind the socket, say the URL, open the browser, run uvicorn until Ctrl-C."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from propeval.errors import UsageError
from propeval.review.security import TOKEN_ENV, is_loopback, new_token

MIN_TOKEN = 16


@dataclass
class Bound:
    """A listening socket and what the app needs to know of it."""

    sock: socket.socket
    host: str
    port: int
    token: str
    remote: bool

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"


def bind(host: str, port: int, *, allow_remote: bool) -> Bound:
    """Listen on ``host:port`` (port 0: any free one) with a token (``$PROPEVAL_REVIEW_TOKEN`` or a
    new one).

    Raises:
        UsageError: a non-loopback address without ``allow_remote``, a short token, or the port in use.
    """
    remote = not is_loopback(host)
    if remote and not allow_remote:
        raise UsageError(
            f"--host {host} serves the app beyond this machine over plain HTTP: anyone who reaches it with the "
            "token can read and write labels and the corpus. Say so with --allow-remote (the token is the only lock)"
        )
    token = os.environ.get(TOKEN_ENV) or new_token()
    if len(token) < MIN_TOKEN:
        raise UsageError(f"${TOKEN_ENV} must be at least {MIN_TOKEN} characters (a random token)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: a response written as headers then body must not wait for the
    # client's delayed ACK (about 40 ms a request on a kept-alive connection, seen here without it).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {host} is in use (another propeval review?); pass --port N, or --port 0 for any "
                "free one"
            ) from None
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return Bound(sock, host, sock.getsockname()[1], token, remote)


class _OneLine:
    """uvicorn logs a request's exception with its traceback; the app's handler has written that to a
    crash report and named it on the page, so the terminal gets one line."""

    def filter(self, record: Any) -> bool:
        if record.exc_info:
            record.msg = "propeval review: a request hit a bug; the page names the file with its traceback"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def run(app: Any, bound: Bound, *, on_start: Callable[[], None] | None = None) -> None:
    """Serve ``app`` on the bound socket until Ctrl-C (or SIGTERM): uvicorn finishes the requests in
    flight, then this returns (a stop is the normal end of a server, not a failure)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=3,
        server_header=False,
    )
    import logging

    logging.getLogger("uvicorn.error").addFilter(_OneLine())
    server = uvicorn.Server(config)
    # Ctrl-C (or SIGTERM) stops the server cleanly from the moment it says it serves. Until uvicorn
    # has its own handlers (on_start still opens the browser, uvicorn still imports the app), a
    # signal only asks it to stop: a KeyboardInterrupt raised there can land in a callback that
    # Python ignores (an import's module lock), and the request to stop would be lost. uvicorn
    # restores this handler when it ends and raises the signals it caught again, which land here too.
    import signal

    def stop(signum: int, frame: Any) -> None:
        server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    with contextlib.suppress(KeyboardInterrupt):
        if on_start is not None:
            on_start()
        server.run(sockets=[bound.sock])
