"""Judge fixtures: a small corpus with the shipped rubrics, and loopback servers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from judgekit import small_corpus

from propeval.judge.loopback import LoopbackServer, Script, default_script


@pytest.fixture
def judge_corpus(corpus: Any) -> Any:
    return small_corpus(corpus)


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

