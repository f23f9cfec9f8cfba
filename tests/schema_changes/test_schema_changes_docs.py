"""The docs name every rule and command this area adds, and every command's help has an example."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.rules import in_area

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("rule", sorted({*in_area("schema"), *in_area("migrate")}))
def test_every_rule_is_in_contributing(rule: str) -> None:
    assert f"`{rule}`" in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("args", [["schema", "diff"], ["schema"], ["migrate"]])
def test_help_has_examples(args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args, "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "Examples:" in result.output
    assert f"propeval {args[0]}" in result.output


def test_readme_names_the_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "propeval schema diff --base" in readme
    assert "propeval migrate --to" in readme
