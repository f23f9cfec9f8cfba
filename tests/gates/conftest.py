"""Gate fixtures: a small corpus with the shipped rubrics, configured for a loopback judge."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gatekit import make_gate_corpus

from propeval.judge.loopback import LoopbackServer, Script, default_script


@pytest.fixture
def gate_corpus(corpus: Any) -> Any:
    """One claim, two active items and a retired one, the shipped rubrics, a loopback config."""
    return make_gate_corpus(corpus)


@pytest.fixture
def loopback() -> Iterator[Callable[..., LoopbackServer]]:
    started: list[LoopbackServer] = []

    def start(script: Script = default_script) -> LoopbackServer:
        srv = LoopbackServer(script).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()
