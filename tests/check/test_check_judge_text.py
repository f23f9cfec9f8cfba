"""`judge-text`: facts and frame markers that could pass for judge-prompt structure are refused."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from propeval.cli import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "judge_text"
REPO = Path(__file__).resolve().parents[2]


def check(corpus: Any, fixture: str, *, rubrics: bool = True) -> Any:
    corpus.write("questions/c0001/claim.yaml", (FIXTURES / fixture).read_bytes())
    if rubrics:
        shutil.copytree(REPO / "rubrics", corpus.root / "rubrics")
    before = corpus.snapshot()
    result = CliRunner().invoke(cli, ["check", "--rule", "judge-text"], catch_exceptions=False)
    assert corpus.snapshot() == before
    return result


def test_override_fact_is_refused_at_its_line(good_corpus: Any) -> None:
    r = check(good_corpus, "claim-override.yaml")
    assert r.exit_code == 1
    where = "questions/c0001/claim.yaml:6:11 [judge-text] facts/0/text"
    assert r.output.splitlines() == [
        f"{where} has a Markdown heading line '## How to grade'; write plain text",
        f"{where} holds a line break: write one line (use a folded `>` block, not a literal `|` block, to wrap it)",
        "2 error(s), 0 warning(s) in 2 file(s) checked",
    ]


def test_fence_tokens_and_section_titles_are_refused(good_corpus: Any) -> None:
    r = check(good_corpus, "claim-fence-marker.yaml")
    assert r.exit_code == 1
    fence = "the judge prompt uses it to mark untrusted text: remove it"
    assert r.output.splitlines() == [
        f"questions/c0001/claim.yaml:8:11 [judge-text] facts/1/text holds the fence token '>>>'; {fence}",
        f"questions/c0001/claim.yaml:14:11 [judge-text] official_frame_markers/0/text holds the fence token '<<<'; "
        f"{fence}",
        "questions/c0001/claim.yaml:16:11 [judge-text] official_frame_markers/1/text has a line 'The answer:' that "
        "reads as a section of the judge prompt; reword it",
        "questions/c0001/claim.yaml:16:11 [judge-text] official_frame_markers/1/text holds a line break: write one "
        "line (use a folded `>` block, not a literal `|` block, to wrap it)",
        "4 error(s), 0 warning(s) in 2 file(s) checked",
    ]


def test_folded_text_and_cjk_pass(good_corpus: Any) -> None:
    r = check(good_corpus, "claim-folded-ok.yaml")
    assert r.exit_code == 0, r.output


def test_without_rubrics_fence_tokens_and_headings_are_still_refused(good_corpus: Any) -> None:
    r = check(good_corpus, "claim-override.yaml", rubrics=False)
    assert r.exit_code == 1
    assert "has a Markdown heading line '## How to grade'" in r.output
    assert "reads as a section of the judge prompt" not in r.output
