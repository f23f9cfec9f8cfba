"""Helpers for the gate tests: configuration for a loopback judge (fixtures are in conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from propeval.policy import user_config_path
from propeval.signing import SigningKey, default_key_path, load_key, new_key

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

[tool.propeval.signers]
maintainer = "{public_key}"
"""

# The maintainer's own config file: --online takes its endpoints from here, never from the tree.
USER_TOML = """
[endpoints.ref]
base_url = "{base_url}"
model = "{answer_model}"
api_key_env = "{key_env}"
response_format = "json_schema"

[endpoints.jdg]
base_url = "{base_url}"
model = "{judge_model}"
api_key_env = "{key_env}"
response_format = "json_schema"
"""


def maintainer_key() -> SigningKey:
    """The test maintainer's key, made once per test in its own user config folder."""
    key = load_key(required=False)
    return key if key is not None else new_key(default_key_path(), forbidden=[])


def user_endpoints(
    base_url: str, *, key_env: str = "", answer_model: str = "ref-model", judge_model: str = "judge-model"
) -> Path:
    """Write the maintainer's config file (under XDG_CONFIG_HOME) with the loopback endpoints."""
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        USER_TOML.format(base_url=base_url, key_env=key_env, answer_model=answer_model, judge_model=judge_model),
        encoding="utf-8",
    )
    return path


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
    """Point the corpus's pyproject.toml, and the maintainer's own config file, at ``base_url``.

    The tree lists the test maintainer's key as the one signer.
    """
    path = corpus.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8").split("\n[tool.propeval.judge]")[0]
    path.write_text(
        text
        + GATE_TOML.format(
            base_url=base_url,
            key_env=key_env,
            mode=mode,
            answer_model=answer_model,
            judge_model=judge_model,
            public_key=maintainer_key().public,
        )
        + extra,
        encoding="utf-8",
    )
    user_endpoints(base_url, key_env=key_env, answer_model=answer_model, judge_model=judge_model)


def make_gate_corpus(corpus: Any) -> Any:
    """One claim, two active items and a retired one, the shipped rubrics, a loopback config."""
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", question_type="frame_testing", prompt="Why was the riot put down?")
    corpus.item("i0003", status="retired", retired_reason="duplicate of i0001")
    shutil.copytree(REPO / "rubrics", corpus.root / "rubrics")
    configure(corpus)
    return corpus
