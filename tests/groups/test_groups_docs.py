"""Every groups rule is documented, and the command's help has examples."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from propeval.cli import cli
from propeval.groups import RULES

REPO = Path(__file__).resolve().parents[2]


def test_every_rule_and_the_hook_are_named_in_contributing_and_help():
    contributing = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    help_text = CliRunner().invoke(cli, ["groups", "--help"], catch_exceptions=False).output
    for rule in RULES:
        assert f"`{rule}`" in contributing, rule
        assert rule in help_text, rule
    assert "`propeval-groups`" in contributing


def test_settings_docs_name_every_groups_key():
    text = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    for key in ("drift_encoder", "drift_threshold", "languages", "closed_exit_cues"):
        assert key in text, key
