"""The gates skip drafts: a draft item is never gated, so it needs no ledger record."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from propeval.cli import cli


def test_the_answerability_gate_skips_a_draft(gate_corpus: Any) -> None:
    gate_corpus.item("i0009", status="draft", prompt="What is still being written?")
    result = CliRunner().invoke(cli, ["gate", "answerability", "--all"], catch_exceptions=False)
    assert result.exit_code == 1
    # i0001 and i0002 lack records; the draft is not gated at all.
    assert "i0009" not in result.output
    assert result.output.splitlines()[-1] == "2 error(s), 0 warning(s) in 2 file(s) checked"
