"""Helpers for the gate tests: configuration for a loopback judge (fixtures are in conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
