"""The dataset card, rendered from its template: every byte, and the Markdown escaping of table cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from release_helpers import write_json

from propeval.cli import cli

GOLDEN = Path(__file__).parent / "golden"


def export_card(tmp_path: Path) -> str:
    out = tmp_path / "rel"
    result = CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return (out / "README.md").read_text(encoding="utf-8")


def test_card_is_the_golden_card(ledgers: Any, tmp_path: Path) -> None:
    # golden/card.md was written by the card renderer as it was before the template (string
    # building in release.py), on this fixture: the template changed no byte of the card.
    assert export_card(tmp_path) == (GOLDEN / "card.md").read_text(encoding="utf-8")


def test_table_cells_from_the_ledgers_are_escaped(small: Any, tmp_path: Path) -> None:
    write_json(
        small.root / "ledger/dedup.json",
        {"passes": [{"name": "semantic|v2\nnew", "threshold": 0.875, "note": None, "extra": [1]}]},
    )
    write_json(
        small.root / "ledger/judge/facts-v1.json",
        {"rubric": "facts|v1", "n": 3, "metrics": {"a|b": {"f1": 0.5}}},
    )
    lines = export_card(tmp_path).splitlines()
    # a pipe would split the cell and a newline the row; the list field is not a column
    assert "| name | threshold | note |" in lines
    assert "| semantic\\|v2 new | 0.875 | - |" in lines
    assert "| facts\\|v1 | - | 3 | metrics.a\\|b.f1 0.500 |" in lines
    assert "Report `ledger/dedup.json` lists no passes." not in lines
