"""The starter corpus's gates are advisory; the PR workflow is safe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from gatekit import REPO

from propeval.cli import cli


def test_in_the_starter_corpus_both_gates_are_advisory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped records are unsigned (a tiny model made them): both gates report that and pass."""
    monkeypatch.chdir(REPO)
    answerability = CliRunner().invoke(cli, ["gate", "answerability", "--all"], catch_exceptions=False)
    assert answerability.exit_code == 0, answerability.output
    assert "note: the answerability gate is advisory" in answerability.output
    assert "[ledger-unsigned] (warning)" in answerability.output
    judge = CliRunner().invoke(cli, ["gate", "judge", "--rubric", "facts-v1"], catch_exceptions=False)
    assert judge.exit_code == 0, judge.output
    assert "ledger/judge/facts-v1.json [ledger-unsigned] (warning)" in judge.output


def test_pr_workflow_runs_the_base_branchs_propeval_without_secrets() -> None:
    text = (REPO / ".github/workflows/pr.yml").read_text(encoding="utf-8")
    assert "fetch-depth: 0" in text and "make setup" in text
    # the trusted toolchain is the base commit's; it judges the tree
    assert "ref: ${{ env.BASE_SHA }}" in text
    assert '../trusted/.venv/bin/propeval ci --base "$BASE_SHA" $ACCEPT --format github' in text
    # a policy change is accepted only where a maintainer acted: the merge queue, a push to main
    assert "ACCEPT: ${{ github.event_name != 'pull_request' && '--accept-policy-change' || '' }}" in text
    for trigger in ("pull_request:", "push:", "merge_group:"):
        assert f"\n  {trigger}" in text
    assert "pull_request_target" not in text.split("\non:")[1]
    assert "secrets." not in text and "permissions:\n  contents: read" in text
    assert text.count("persist-credentials: false") == 3


@pytest.mark.slow
def test_pr_workflow_is_a_valid_workflow() -> None:
    exe = Path(sys.executable).with_name("check-jsonschema")
    res = subprocess.run(
        [str(exe), "--builtin-schema", "vendor.github-workflows", str(REPO / ".github/workflows/pr.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr
