"""Gate fixtures: a small corpus with the shipped rubrics, configured for a loopback judge."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gatekit import REPO, configure

from propeval.judge.loopback import LoopbackServer, Script, default_script


@pytest.fixture
def gate_corpus(corpus: Any) -> Any:
    """One claim, two active items and a retired one, the shipped rubrics, a loopback config."""
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", question_type="frame_testing", prompt="Why was the riot put down?")
    corpus.item("i0003", status="retired", retired_reason="duplicate of i0001")
    shutil.copytree(REPO / "rubrics", corpus.root / "rubrics")
    configure(corpus)
    return corpus


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
