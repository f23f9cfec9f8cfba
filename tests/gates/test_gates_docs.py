"""The starter corpus's gates are advisory; the PR workflow is safe."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from gatekit import REPO

from propeval.cli import cli


def test_in_the_starter_corpus_both_gates_are_advisory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The starter corpus ships no ledger record (every one it had could never verify: answerability
    records hashed a judge prompt the grader no longer makes, judge-gate records kept labels without
    the judge's raw replies): both gates report that and pass."""
    monkeypatch.chdir(REPO)
    answerability = CliRunner().invoke(cli, ["gate", "answerability", "--all"], catch_exceptions=False)
    assert answerability.exit_code == 0, answerability.output
    assert "note: the answerability gate is advisory" in answerability.output
    assert "[answerability] (warning) i0001: no answerability record" in answerability.output
    judge = CliRunner().invoke(cli, ["gate", "judge", "--rubric", "facts-v1"], catch_exceptions=False)
    assert judge.exit_code == 0, judge.output
    assert "ledger/judge/facts-v1.json [judge-gate] (warning) facts-v1: no judge-agreement record" in judge.output


def test_every_shipped_ledger_record_verifies() -> None:
    """The shipped ledger holds only records that `ledger sign` would accept (or none)."""
    from propeval.config import load_config
    from propeval.gates.sign import _unsound, ledger_files
    from propeval.workspace import Workspace

    ws = Workspace(load_config(REPO))
    assert [(rel, why) for rel in ledger_files(ws) if (why := _unsound(ws, rel)[1])] == []
