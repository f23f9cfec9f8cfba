"""Review fixtures: a corpus with a four-fact claim, a graded run, and a sheet `agree sample` made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from reviewkit import build_corpus, graded_run

from propeval.cli import cli


@pytest.fixture
def rcorpus(corpus: Any) -> Any:
    return build_corpus(corpus)


@pytest.fixture
def sheet(rcorpus: Any) -> Path:
    """A blinded sheet of every graded item of run r1 (facts-v1: states, score, propaganda, quote)."""
    graded_run(rcorpus.root, [f"i{n:04d}" for n in range(1, 7)])
    fields = ("fact_states", "fact_score", "propaganda", "frame_adopted")
    args = ["agree", "sample", "runs/r1/grades-facts-v1.jsonl", "--fraction", "1", "--seed", "7"]
    args += [x for f in fields for x in ("--field", f)]
    res = CliRunner().invoke(cli, [*args, "--out", "sheet.jsonl", "--key", "private/key.json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return rcorpus.root / "sheet.jsonl"
