"""CONTRIBUTING names every rule this area adds."""

from __future__ import annotations

from pathlib import Path

import pytest

from propeval.rules import in_area

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("rule", sorted({*in_area("schema"), *in_area("migrate")}))
def test_every_rule_is_in_contributing(rule: str) -> None:
    assert f"`{rule}`" in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
