"""Gate fixtures: a small corpus with the shipped rubrics, configured for a loopback judge."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from propeval.judge.loopback import LoopbackServer, Script, default_script

REPO = Path(__file__).resolve().parents[2]

GATE_TOML = """
[tool.propeval.judge]
max_attempts = 2
backoff_base = 0.01
backoff_max = 0.02
max_total_wait = 1.0
timeout = 5.0
connect_timeout = 2.0
max_reasks = 1
answer_endpoint = "ref"
judge_endpoint = "jdg"

[tool.propeval.judge.endpoints.ref]
base_url = "{base_url}"
model = "{answer_model}"
api_key_env = "{key_env}"
response_format = "json_schema"

[tool.propeval.judge.endpoints.jdg]
base_url = "{base_url}"
model = "{judge_model}"
api_key_env = "{key_env}"
response_format = "json_schema"

[tool.propeval.gates]
answerability = "{mode}"
"""


def configure(
    corpus: Any,
    base_url: str = "http://127.0.0.1:9/v1",
    *,
    key_env: str = "",
    mode: str = "required",
    answer_model: str = "ref-model",
    judge_model: str = "judge-model",
    extra: str = "",
) -> None:
    path = corpus.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8").split("\n[tool.propeval.judge]")[0]
    path.write_text(
        text
        + GATE_TOML.format(
            base_url=base_url, key_env=key_env, mode=mode, answer_model=answer_model, judge_model=judge_model
        )
        + extra,
        encoding="utf-8",
    )


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
