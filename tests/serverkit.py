"""The one kit for servers on loopback in tests: the scripted judge server and a free port.

``loopback`` is a fixture: ``loopback(script, latency=0)`` starts a real
:class:`~propeval.judge.loopback.LoopbackServer` (an OpenAI-compatible HTTP server on 127.0.0.1,
replying as ``script`` says) and stops every server it started at the end of the test. A test
module that uses it imports it: ``from serverkit import loopback  # noqa: F401  (fixture)``.
A test that needs a server for longer than one test (a module fixture, a session of several
commands) uses ``LoopbackServer`` as a context manager. :func:`free_port` is a port nothing
listens on, for a server a test starts itself (llama.cpp, ``serve-local``).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest

from propeval.judge.loopback import LoopbackServer, Script, default_script

__all__ = ["LoopbackServer", "Script", "default_script", "free_port", "loopback"]


@pytest.fixture
def loopback() -> Iterator[Callable[..., LoopbackServer]]:
    """``loopback(script, latency=0)`` starts a server; all are stopped at the end of the test."""
    started: list[LoopbackServer] = []

    def start(script: Script = default_script, latency: float = 0.0) -> LoopbackServer:
        srv = LoopbackServer(script, latency=latency).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


def free_port() -> int:
    """A loopback port free when asked (the OS's pick; a server started on it soon after gets it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
