"""Helpers and fixtures for the judge tests (no conftest.py here: the root one stays importable as `conftest`).

Test modules import the fixtures they use: ``from judgekit import judge_corpus  # noqa: F401``; the loopback
server is :mod:`serverkit`'s (``from serverkit import loopback``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CorpusDir = Any  # tests/conftest.py's CorpusDir, given by the `corpus` fixture

JUDGE_TOML = """
[tool.propeval.judge]
concurrency = {concurrency}
timeout = {timeout}
connect_timeout = 2.0
max_attempts = {max_attempts}
backoff_base = 0.01
backoff_max = 0.05
max_total_wait = {max_total_wait}
max_reasks = {max_reasks}
{extra}answer_endpoint = "loop"
judge_endpoint = "loop"

[tool.propeval.judge.endpoints.loop]
base_url = "{base_url}"
model = "{model}"
api_key_env = "{key_env}"
response_format = "json_schema"
"""

CLAIM2_FACTS = (
    "\n  - id: f1\n    text: Fact one of the second claim.\n"
    "  - id: f2\n    text: Fact two of the second claim.\n"
    "  - id: f3\n    text: Fact three of the second claim."
)


def configure(
    corpus: CorpusDir,
    base_url: str,
    *,
    concurrency: int = 4,
    timeout: float = 5.0,
    max_attempts: int = 3,
    max_total_wait: float = 5.0,
    max_reasks: int = 2,
    model: str = "answer-model",
    key_env: str = "",
    **extra: Any,
) -> None:
    """Point the corpus at ``base_url``; ``extra`` sets more [tool.propeval.judge] keys
    (``request_deadline=1.0``, ``run_deadline=2.0``, ``max_reply_bytes=...``)."""
    path = corpus.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8").split("\n[tool.propeval.judge]")[0]
    path.write_text(
        text
        + JUDGE_TOML.format(
            concurrency=concurrency,
            timeout=timeout,
            max_attempts=max_attempts,
            max_total_wait=max_total_wait,
            max_reasks=max_reasks,
            base_url=base_url,
            model=model,
            key_env=key_env,
            extra="".join(f"{k} = {v!r}\n" for k, v in extra.items()),
        ),
        encoding="utf-8",
    )


def add_rubrics(corpus: CorpusDir) -> None:
    shutil.copytree(REPO / "rubrics", corpus.root / "rubrics", dirs_exist_ok=True)


def small_corpus(corpus: CorpusDir) -> CorpusDir:
    """Two claims, three active items and one retired one."""
    corpus.claim()
    corpus.item("i0001", language="en", framing="neutral")
    corpus.item("i0002", framing="loaded", question_type="frame_testing", prompt="Why was the riot put down?")
    corpus.claim("c0002", facts=CLAIM2_FACTS, categories="[state_ideology, democracy_governance]")
    corpus.item("i0003", "c0002", language="zh", prompt="第二个问题是什么？")
    corpus.item("i0004", "c0002", status="retired", retired_reason="duplicate of i0003")
    add_rubrics(corpus)
    return corpus


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def judge_corpus(corpus: Any) -> Any:
    return small_corpus(corpus)
