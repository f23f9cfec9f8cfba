"""The dataset card, rendered from its template: every byte, and the Markdown escaping of table cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from propeval.cli import cli

GOLDEN = Path(__file__).parent / "golden"


def export_card(tmp_path: Path) -> str:
    out = tmp_path / "rel"
    result = CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return (out / "README.md").read_text(encoding="utf-8")


def test_card_is_the_golden_card(ledgers: Any, tmp_path: Path) -> None:
    # golden/card.md is this fixture's card, read line by line when it was made: the committed
    # Gemma 3 270M judge records (at chance level), a dedup record of an exact-pass run, difficulty
    # bands, no answerability record. Regenerate it only after reading the diff.
    assert export_card(tmp_path) == (GOLDEN / "card.md").read_text(encoding="utf-8")


def test_table_cells_from_the_ledgers_are_escaped(small: Any, tmp_path: Path) -> None:
    from propeval.gates.ledger import make_record, write_record

    binding = {"answer_model": "ref|model\nv2", "judge_model": "judge|x", "rubric": "facts-v1"}
    write_record(
        small.root / "ledger/answerability/i0001.json",
        make_record("answerability", "i0001", binding, {"status": "scored", "fact_score": 5}),
    )
    lines = export_card(tmp_path).splitlines()
    # a pipe would split the cell and a newline the row
    row = next(line for line in lines if line.startswith("| ref\\"))
    assert row.startswith("| ref\\|model v2 | judge\\|x | facts-v1: not run | 1 | 0 | not checked | 1: ")


def test_corpus_text_in_the_card_is_inert_markdown_and_html(small: Any, tmp_path: Path) -> None:
    """Issue #34: a source_url carrying raw HTML or a Markdown link to javascript: reached the card.
    The card is rendered here by a real Markdown renderer (markdown-it-py, CommonMark with HTML on,
    plus tables): no link, image or tag from the corpus survives, and the text is still there."""
    from markdown_it import MarkdownIt

    hostile = 'https://example.org/x"><img/src=x/onerror=alert(1)>](javascript:alert(2))[click](javascript:alert(3))'
    path = small.root / "questions/c0002/claim.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("source_url: https://www.example.org/b", f"source_url: '{hostile}'"), encoding="utf-8")
    for n in range(9, 15):  # the most items from one URL: this one
        small.item(f"i{n:04d}", "c0002", prompt=f"Question number {n} about the second claim?")
    card = export_card(tmp_path)
    html = MarkdownIt("commonmark").enable("table").render(card)
    assert "<img" not in html and "<a " not in html
    row = next(line for line in card.splitlines() if line.startswith("| most items from one URL |"))
    assert row.startswith(
        '| most items from one URL | 7 (https://example.org/x"&gt;&lt;img/src=x/onerror=alert(1)&gt;'
    ), row
    assert row.endswith("\\](javascript:alert(2))[click\\](javascript:alert(3))) |"), row
    # the text is all there, as text
    assert "x&quot;&gt;&lt;img/src=x/onerror=alert(1)&gt;](javascript:alert(2))[click](javascript:alert(3))" in html
