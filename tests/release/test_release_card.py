"""The dataset card, rendered from its template: every byte, and the Markdown escaping of table cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from helpers import CARD_SECTIONS, card_sections
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
    from propeval.ledger.records import make_record, write_record

    binding = {"answer_model": "ref|model\nv2", "judge_model": "judge|x", "rubric": "facts-v1"}
    write_record(
        small.root / "ledger/answerability/i0001.json",
        make_record("answerability", "i0001", binding, {"status": "scored", "fact_score": 5}),
    )
    lines = export_card(tmp_path).splitlines()
    # a pipe would split the cell and a newline the row
    row = next(line for line in lines if line.startswith("| ref\\"))
    assert row.startswith("| ref\\|model v2 | judge\\|x | facts-v1: failed (not run) | 1 | 0 | not checked | 1: ")


def test_corpus_text_in_the_card_is_inert_markdown_and_html(small: Any, tmp_path: Path) -> None:
    """A source_url carrying raw HTML or a Markdown link to javascript: reached the card.
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


def test_card_opens_with_what_who_and_how_then_the_sections_a_hub_user_expects(ledgers: Any, tmp_path: Path) -> None:
    card = export_card(tmp_path)
    top = [s for s in card_sections(card) if s in CARD_SECTIONS]
    assert top == CARD_SECTIONS
    intro = card.split("\n# propeval\n", 1)[1].split("\n## How to load", 1)[0]
    assert "is a set of evaluation items that test whether a language model states documented facts" in intro
    assert "**Who it is for:**" in intro and "in English for every language" in intro
    # the warnings are curation evidence, under Bias, risks and limitations: not before the dataset is said
    first_warning = card.index("- Judge for facts-v1 (gemma-3-270m): judge agreement")
    assert card.index("## Bias, risks and limitations") < first_warning < card.index("## Personal information")
    assert 'items = load_dataset("path/to/this/folder", split="test")' in card
    assert "**`required_facts` are in English for every language.**" in card


def test_citation_from_the_release_settings_and_its_defaults(small: Any, in_git: Any, tmp_path: Path) -> None:
    """Authors, year and URL: [tool.propeval.release] when set; else "<name> contributors", the release
    commit's year, and the repository's origin remote without its credentials. A Hub id is what the
    card loads and cites."""
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus", "--date", "2031-02-03T04:05:06Z")
    in_git("remote", "add", "origin", "https://user:secret@git.example.org/owner/corpus.git")
    card = export_card(tmp_path)
    bib = card.split("```bibtex\n", 1)[1].split("```", 1)[0]
    assert bib.splitlines()[:5] == [
        "@misc{propeval_0_1_0,",
        "  author = {propeval contributors},",
        "  title = {propeval: evaluation items on censored topics and official narratives},",
        f"  year = {{{bib.split('year = {')[1][:4]}}},",
        "  url = {https://git.example.org/owner/corpus},",
    ]
    assert "secret" not in card and "user:" not in card
    pyproject = small.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8")
        + '\n[tool.propeval.release]\nhub_id = "owner/censored-facts"\nauthors = ["Ada Lovelace", "Alan {Turing}"]\n'
        "year = 2030\n",
        encoding="utf-8",
    )
    card = export_card(tmp_path)
    assert "  author = {Ada Lovelace and Alan Turing}," in card
    assert "  year = {2030}," in card
    assert "  url = {https://huggingface.co/datasets/owner/censored-facts}," in card
    assert 'items = load_dataset("owner/censored-facts", split="test")' in card
    assert "Replace `" not in card


def test_a_citation_url_must_be_http_without_credentials(small: Any) -> None:
    pyproject = small.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + '\n[tool.propeval.release]\nurl = "javascript:alert(1)"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["export", "--out", "rel"], catch_exceptions=False)
    assert result.exit_code == 2
    assert '[tool.propeval.release] url = "javascript:alert(1)" must be an http(s) URL' in result.output
    assert not (small.root / "rel").exists()
