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
    assert data["dedup"]["status"] == "current"
    assert data["dedup"]["passes"] == [
        {"allowlisted": 0, "found": 2, "name": "exact", "threshold": 1.0, "unreviewed": 2}
    ]
    judge = {j["rubric"]: j for j in data["judge"]}
    assert (judge["facts-v1"]["status"], judge["facts-v1"]["judge_model"], judge["facts-v1"]["cases"]) == (
        "fail",
        "gemma-3-270m",
        57,
    )
    kappa = next(s for s in judge["facts-v1"]["stats"] if s["name"] == "fact_score cohen_kappa_quadratic")
    assert (round(kappa["value"], 3), kappa["threshold"], kappa["passed"]) == (0.023, 0.6, False)
    a = data["answerability"]
    assert (a["items"], a["missing"], a["counted"]) == (4, 3, 0)
    assert a["groups"][0]["not_checked"] == {"judge gemma-3-270m fails the judge gate": 1}


def test_stats_text_tables(small: Any) -> None:
    result = CliRunner().invoke(cli, ["stats"], env={"COLUMNS": "100"}, catch_exceptions=False)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "4 active item(s), 2 claim(s), 1 retired"
    assert "│ named_fact    │     2 │ 50.0% │" in lines
    cells = {" ".join(line.split()) for line in lines}  # a row, whatever its column widths
    assert "│ most items from one URL │ 3 (https://en.wikipedia.org/wiki/A) │" in cells
    assert "│ claims citing an official statement's own record │ 0 │" in cells
    assert "│ claims citing an archived copy │ 0 │" in cells
    assert (
        "Dedup passes: not recorded (no record; a maintainer records it with `propeval run --record` (or "
        "`propeval dedup --record`) and commits it)"
    ) in " ".join(line.strip() for line in lines)
    assert "Answerability: 0 of 4 item(s) with evidence that counts, 0 pass; 0 not checked, 4 without a record" in lines
    assert "│ 2024 │     3 │ 100.0% │" in lines
    assert "Knowledge cutoffs: none declared ([tool.propeval.judge.endpoints.NAME] knowledge_cutoff)" in lines
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
