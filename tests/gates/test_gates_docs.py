"""Every gate rule id is documented, every command has help with an example."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from gatekit import REPO

from propeval.cli import cli

RULES = ("answerability", "judge-gate", "ledger-format", "ledger-digest", "labels", "ci-<step>")


@pytest.mark.parametrize("rule", RULES)
def test_rule_is_in_contributing(rule: str) -> None:
    assert f"`{rule}`" in (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["gate"],
        ["gate", "answerability"],
        ["gate", "judge"],
        ["agree"],
        ["agree", "stats"],
        ["agree", "sample"],
        ["agree", "unblind"],
        ["ci"],
    ],
)
def test_help_has_an_example(args: list[str]) -> None:
    res = CliRunner().invoke(cli, [*args, "--help"], catch_exceptions=False)
    assert res.exit_code == 0
    assert "Example" in res.output and "propeval " in res.output


def test_readme_says_both_gates_are_advisory() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "**In the starter corpus both gates are advisory**" in text
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'answerability = "advisory"' in pyproject
    assert 'judge = "advisory"' in pyproject


def test_pr_workflow_fetches_history_and_runs_ci() -> None:
    text = (REPO / ".github/workflows/pr.yml").read_text(encoding="utf-8")
    assert "fetch-depth: 0" in text and "make setup" in text
    assert 'propeval ci --base "origin/${{ github.base_ref }}"' in text
