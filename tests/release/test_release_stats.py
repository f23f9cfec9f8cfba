"""``propeval stats``: the card's numbers in a terminal and as JSON."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from propeval.cli import cli


def test_stats_json_numbers(ledgers: Any) -> None:
    result = CliRunner().invoke(cli, ["stats", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert (data["items"], data["claims"], data["retired"]) == (4, 2, 1)
    assert data["by_question_type"] == {"named_fact": 2, "frame_testing": 1, "closed_exit": 1}
    assert data["by_language"] == {"en": 2, "ru": 1, "zh": 1}
    assert data["by_framing"] == {"neutral": 3, "loaded": 1}
    assert data["by_band"] == {"easy": 1, "medium": 0, "hard": 0, "unbanded": 3}
    assert data["by_category"]["freedom_of_expression"] == 3
    assert data["sources"]["max_items_per_url"] == {"url": "https://en.wikipedia.org/wiki/A", "items": 3}
    assert data["source_dates"] == {
        "dated": 3,
        "undated": 1,
        "earliest": "2024-05-01",
        "latest": "2024-05-01",
        "by_year": {"2024": 3},
        "knowledge_cutoffs": [],
    }
    assert data["gaps"]["claims_missing_framing"] == [{"claim_id": "c0002", "missing": ["loaded"]}]
    assert len(data["gaps"]["category_language"]) == 17
    assert {"category": "state_ideology", "language": "ru"} not in data["gaps"]["category_language"]
    assert data["dedup"]["status"] == "run"
    assert data["judge"][0]["metrics"] == {"metrics.fact_states.kappa": 0.8}
    assert data["judge"][0]["confusions"] == ["metrics.fact_states"]


def test_stats_text_tables(small: Any) -> None:
    result = CliRunner().invoke(cli, ["stats"], env={"COLUMNS": "100"}, catch_exceptions=False)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "4 active item(s), 2 claim(s), 1 retired"
    assert "│ named_fact    │     2 │ 50.0% │" in lines
    assert "│ most items from one URL  │ 3 (https://en.wikipedia.org/wiki/A) │" in lines
    assert "│ 2024 │     3 │ 100.0% │" in lines
    assert "Knowledge cutoffs: none declared ([tool.propeval.judge.endpoints.NAME] knowledge_cutoff)" in lines
    assert "Dedup passes: not run" in lines
    assert "Judge agreement: not run" in lines
    assert "│ c0002 │ loaded  │" in lines


def test_stats_source_dates_against_knowledge_cutoffs(small: Any) -> None:
    small.claim(
        "c0002",
        title="Second claim",
        source_url="https://www.example.org/b",
        source_date='"2023-02-01"',
        categories="[state_ideology, democracy_governance]",
    )
    with (small.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(
            '\n[tool.propeval.judge.endpoints.old]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "old-model"\n'
            'knowledge_cutoff = "2024-01"\n'
        )
    data = json.loads(CliRunner().invoke(cli, ["stats", "--format", "json"], catch_exceptions=False).stdout)
    dates = data["source_dates"]
    assert dates["by_year"] == {"2023": 1, "2024": 3}
    assert dates["knowledge_cutoffs"] == [
        {"endpoint": "old", "model": "old-model", "knowledge_cutoff": "2024-01", "before": 1, "after": 3, "undated": 0}
    ]


def test_stats_exits_1_when_a_file_does_not_load(small: Any) -> None:
    small.write("questions/c0002/i0009.yaml", "id: [unclosed\n")
    result = CliRunner().invoke(cli, ["stats", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["items"] == 4
    assert result.stderr.startswith("questions/c0002/i0009.yaml:2:1 [yaml-syntax]")
