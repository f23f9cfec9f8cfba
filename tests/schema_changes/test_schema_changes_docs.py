"""CONTRIBUTING names every rule this area adds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("schemadiff.py", "migrate.py")


def rules_emitted() -> set[str]:
    found: set[str] = set()
    for name in SOURCES:
        text = (ROOT / "tools" / "propeval" / name).read_text(encoding="utf-8")
        found |= set(re.findall(r'"((?:schema|migrate)-[a-z]+)"', text))
    found |= {"schema-breaking", "schema-additive", "schema-docs", "migrate"}
    return found


@pytest.mark.parametrize("rule", sorted(rules_emitted()))
def test_every_rule_is_in_contributing(rule: str) -> None:
    assert f"`{rule}`" in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
