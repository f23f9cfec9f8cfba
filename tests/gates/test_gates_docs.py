"""The starter corpus's gates are advisory; the PR workflow is safe."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from gatekit import REPO

from propeval.cli import cli


def test_in_the_starter_corpus_both_gates_are_advisory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The starter corpus ships no answerability record (every one it had hashed a judge prompt the
    grader no longer makes, so none could ever verify) and an unsigned judge record: both gates
    report that and pass."""
    monkeypatch.chdir(REPO)
    answerability = CliRunner().invoke(cli, ["gate", "answerability", "--all"], catch_exceptions=False)
    assert answerability.exit_code == 0, answerability.output
    assert "note: the answerability gate is advisory" in answerability.output
    assert "[answerability] (warning) i0001: no answerability record" in answerability.output
    judge = CliRunner().invoke(cli, ["gate", "judge", "--rubric", "facts-v1"], catch_exceptions=False)
    assert judge.exit_code == 0, judge.output
    assert "ledger/judge/facts-v1.json [ledger-unsigned] (warning)" in judge.output
