"""score, report and difficulty read a graded run through one reader, so they agree on it.

The run holds what real runs hold: an endpoint error on an item and then a successful retry (the
latest record wins), an unscored item (a judge failure: not a verdict), an unanswered item (fact 0),
a grade record that fails validation (named with its file and line), and two rubrics.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.config import load_config
from propeval.difficulty import load_runs
from propeval.errors import ConfigError
from propeval.judge.runs import records
from propeval.release import load_inputs
from propeval.report import summarise_runs
from propeval.settings import DifficultySettings
from propeval.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]


def answer(item_id: str, language: str, status: str = "answered") -> dict[str, Any]:
    meta = {"language": language, "framing": "neutral", "question_type": "named_fact", "categories": []}
    return {
        "item_id": item_id,
        "model": "m-a",
        "item": meta,
        "status": status,
        "answer": "text" * (status != "unanswered"),
    }


def facts(item_id: str, status: str, score: int | None = None, propaganda: int | None = 0) -> dict[str, Any]:
    scored = status == "scored"
    return {
        "item_id": item_id,
        "model": "m-a",
        "rubric": "facts-v1",
        "status": status,
        "fact_score": score if scored else (0 if status == "unanswered" else None),
        "propaganda": propaganda if scored else (0 if status == "unanswered" else None),
        "reason": "HTTP 503 after 6 attempts" if status == "error" else None,
    }


def audit(item_id: str, accuracy: str) -> dict[str, Any]:
    return {
        "item_id": item_id,
        "model": "m-a",
        "rubric": "audit-v1",
        "status": "scored",
        "accuracy": accuracy,
        "propaganda_inclusion": 0,
        "tone": "Neutral",
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def graded_run(root: Path) -> Path:
    for name in ("facts-v1", "audit-v1"):
        shutil.copytree(REPO / "rubrics" / name, root / "rubrics" / name)
    run = root / "runs" / "r1"
    write_jsonl(
        run / "answers.jsonl",
        [answer("i0001", "en"), answer("i0002", "en"), answer("i0003", "zh"), answer("i0004", "en", "unanswered")],
    )
    write_jsonl(
        run / "grades-facts-v1.jsonl",
        [
            facts("i0001", "error"),  # the judge endpoint failed ...
            facts("i0002", "scored", 3, propaganda=1),
            facts("i0003", "unscored"),
            facts("i0004", "unanswered"),
            facts("i0001", "scored", 5),  # ... and a rerun graded it
        ],
    )
    write_jsonl(run / "grades-audit-v1.jsonl", [audit("i0001", "Correct"), audit("i0002", "Misleading")])
    return run


def test_score_report_and_difficulty_agree_on_a_run_with_retries_and_errors(corpus: Any) -> None:
    run = graded_run(corpus.root)
    config = load_config(corpus.root)

    result = CliRunner().invoke(cli, ["score", "r1", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (scored,) = json.loads(result.stdout)["runs"]
    # i0001 5 (the retry), i0002 3, i0004 unanswered 0; i0003 unscored, counted apart
    assert {k: scored[k] for k in ("items", "counted", "unanswered", "unscored", "ungraded")} == {
        "items": 4,
        "counted": 3,
        "unanswered": 1,
        "unscored": 1,
        "ungraded": 0,
    }
    assert scored["fact_mean"] == 8 / 3

    summary = summarise_runs(load_inputs(Workspace(config)))
    assert summary.warnings == []
    assert summary.files == ["runs/r1/grades-audit-v1.jsonl", "runs/r1/grades-facts-v1.jsonl"]
    audit_panel, facts_panel = summary.panels()  # one panel per rubric, never pooled
    assert (audit_panel.rubric, facts_panel.rubric) == ("audit-v1", "facts-v1")
    cells = {c["language"]: c for c in facts_panel.cells}
    assert sum(c["counted"] for c in cells.values()) == scored["counted"]
    assert sum(c["unscored"] for c in cells.values()) == scored["unscored"] == 1  # the error line is superseded
    assert sum(c["unanswered"] for c in cells.values()) == scored["unanswered"]
    assert cells["en"]["fact_mean"] == scored["fact_mean"]  # the zh item is the unscored one
    assert [c["n"] for c in audit_panel.cells] == [2]

    table = load_runs(config, DifficultySettings(), [run / "grades-facts-v1.jsonl"])
    assert table.problems == []
    observed = {item: scores for (item, _), scores in table.obs.items()}
    assert observed == {"i0001": [5.0], "i0002": [3.0], "i0003": [], "i0004": [0.0]}
    assert sum(len(s) for s in observed.values()) == scored["counted"]
    assert sum(not s for s in observed.values()) == scored["unscored"]


def test_a_bad_grade_record_is_named_by_all_three_and_counted_by_none(corpus: Any) -> None:
    run = graded_run(corpus.root)
    path = run / "grades-facts-v1.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(facts("i0002", "scored", 7)) + "\n")  # line 6: a fact score out of range
    where = "runs/r1/grades-facts-v1.jsonl:6:1 [run-record] status is scored but fact_score is 7"

    result = CliRunner().invoke(cli, ["score", "r1", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1
    assert where in result.stderr
    (scored,) = json.loads(result.stdout)["runs"]
    assert (scored["counted"], scored["ungraded"]) == (2, 1)

    summary = summarise_runs(load_inputs(Workspace(load_config(corpus.root))))
    assert next(f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}" for p in summary.warnings).startswith(where)
    _, facts_panel = summary.panels()
    assert sum(c["ungraded"] for c in facts_panel.cells) == 1

    table = load_runs(load_config(corpus.root), DifficultySettings(), [path])
    assert next(f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}" for p in table.problems).startswith(where)
    assert ("i0002", "m-a") not in table.obs


def test_run_files_are_read_with_json_and_bad_lines_named(corpus: Any) -> None:
    path = write_jsonl(corpus.root / "runs/r1/grades-facts-v1.jsonl", [facts("i0001", "scored", 5)])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"item_id": "i0002", "fact_score": NaN}\n["not", "an", "object"]\n')
    seen = []
    try:
        for n, rec in records(path, corpus.root):
            seen.append((n, rec["item_id"]))
    except Exception as e:
        message = str(e)
    assert seen == [(1, "i0001")]
    assert message == "runs/r1/grades-facts-v1.jsonl:2:1 [json-syntax] NaN is not JSON; remove the line"
    path.write_text(path.read_text(encoding="utf-8").replace("NaN", "1"), encoding="utf-8")
    try:
        list(records(path, corpus.root))
    except Exception as e:
        message = str(e)
    assert message == (
        "runs/r1/grades-facts-v1.jsonl:3:1 [json-syntax] a run record is one JSON object per line; remove the line"
    )


def agree(*args: str) -> Any:
    return CliRunner().invoke(cli, ["agree", *args], catch_exceptions=False)


def test_agree_reads_a_grades_file_as_score_does(corpus: Any) -> None:
    """The retried item is labelled once, by its retry; unscored is a missing rating; unanswered is 0."""
    from propeval.agreement import read_rater_file

    run = graded_run(corpus.root)
    grades = "runs/r1/grades-facts-v1.jsonl"
    judge = read_rater_file(run / "grades-facts-v1.jsonl", field="fact_score", config=load_config(corpus.root))
    assert judge.labels == {("i0001",): 5, ("i0002",): 3, ("i0003",): None, ("i0004",): 0}
    human = write_jsonl(
        corpus.root / "human.jsonl", [{"item_id": f"i000{n}", "fact_score": s} for n, s in ((1, 5), (2, 3), (3, 4))]
    )
    result = agree(grades, str(human), "--field", "fact_score", "--resamples", "0", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["units"] == 4
    assert doc["pairwise"][0]["stats"][0] == {
        "name": "cohen_kappa",
        "value": 1.0,
        "n": 2,
        "reason": None,
        "ci": None,
        "caveat": "TOO FEW UNITS: 2 < 30, not meaningful",
    }


def test_agree_names_a_bad_grade_record_and_keeps_labelled_twice_for_hand_files(corpus: Any) -> None:
    run = graded_run(corpus.root)
    with (run / "grades-facts-v1.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(facts("i0002", "scored", 7)) + "\n")
    result = agree("runs/r1/grades-facts-v1.jsonl", "runs/r1/grades-facts-v1.jsonl", "--field", "fact_score")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "runs/r1/grades-facts-v1.jsonl:6:1 [run-record] status is scored but fact_score is 7, "
        "not an integer 0-5; re-grade the item"
    )
    # the same lines by hand, in a file that is not a grades file: two labels for one unit is an error
    hand = corpus.root / "rater1.jsonl"
    hand.write_text((run / "grades-facts-v1.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    result = agree("rater1.jsonl", "rater1.jsonl", "--field", "fact_score")
    assert result.exit_code == 1
    assert "rater1.jsonl:5:1 [labels] unit i0001 is labelled twice; keep one line" in result.output


def test_agree_on_a_grades_file_of_an_unknown_rubric_says_how_it_was_read(corpus: Any) -> None:
    run = graded_run(corpus.root)
    shutil.copy(run / "grades-facts-v1.jsonl", run / "grades-nope.jsonl")
    result = agree("runs/r1/grades-nope.jsonl", "runs/r1/grades-facts-v1.jsonl", "--field", "fact_score")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "rubrics/nope/rubric.yaml [rubric] no rubric 'nope' (looked for rubric.yaml; known: audit-v1, facts-v1) "
        "(needed to read runs/r1/grades-nope.jsonl as a grades-<rubric>.jsonl file; "
        "name a hand-written label file otherwise)"
    )


def test_agree_sample_takes_one_row_per_graded_item(corpus: Any) -> None:
    graded_run(corpus.root)
    result = agree(
        "sample", "runs/r1/grades-facts-v1.jsonl", "--fraction", "1", "--seed", "1", "--field", "fact_score",
        "--out", "sheet.jsonl", "--key", "key.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output == "wrote 4 of 4 row(s) to sheet.jsonl; key in key.json (keep it from the rater)\n"
    key = json.loads((corpus.root / "key.json").read_text(encoding="utf-8"))
    assert sorted(r["item_id"] for r in key["rows"].values()) == ["i0001", "i0002", "i0003", "i0004"]


def test_every_reader_validates_under_the_named_rubric(corpus: Any) -> None:
    """A rubric whose propaganda scale stops at 1: a 2 fails validation in score, report, difficulty and agree."""
    graded_run(corpus.root)
    folder = corpus.root / "rubrics/facts-x"
    shutil.copytree(corpus.root / "rubrics/facts-v1", folder)
    text = (folder / "rubric.yaml").read_text(encoding="utf-8")
    text = text.replace("name: facts-v1", "name: facts-x").replace("propaganda: [0, 1, 2]", "propaganda: [0, 1]")
    (folder / "rubric.yaml").write_text(text.replace("propaganda: {enum: [0, 1, 2]}", "propaganda: {enum: [0, 1]}"))
    run = corpus.root / "runs/r2"
    write_jsonl(run / "answers.jsonl", [answer("i0001", "en"), answer("i0002", "en")])
    grades = [{**facts("i0001", "scored", 5, propaganda=2), "rubric": "facts-x"}, facts("i0002", "scored", 4)]
    path = write_jsonl(run / "grades-facts-x.jsonl", grades)
    where = (
        "runs/r2/grades-facts-x.jsonl:1:1 [run-record] status is scored but propaganda is 2, not one of [0, 1]; "
        "re-grade the item"
    )
    config = load_config(corpus.root)

    result = CliRunner().invoke(cli, ["score", "r2", "--rubric", "facts-x"], catch_exceptions=False)
    assert (result.exit_code, result.stderr.splitlines()) == (1, [where])
    summary = summarise_runs(load_inputs(Workspace(config)))
    assert [f"{p.path}:{p.line}:{p.col} [run-record] {p.message}" for p in summary.warnings] == [
        f"{where} (item counted as ungraded)"
    ]
    table = load_runs(config, DifficultySettings(rubric="facts-x"), [path])
    assert [f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}" for p in table.problems] == [where]
    result = agree("runs/r2/grades-facts-x.jsonl", "runs/r2/grades-facts-x.jsonl", "--field", "propaganda")
    assert (result.exit_code, result.output.splitlines()[0]) == (1, where)

    with pytest.raises(ConfigError) as e:
        load_runs(config, DifficultySettings(rubric="audit-v1"), [run / "grades-audit-v1.jsonl"])
    assert str(e.value) == (
        "pyproject.toml: [tool.propeval.difficulty] rubric: 'audit-v1' is a rubric of kind audit, and difficulty "
        "reads 0-5 fact scores; name a facts rubric"
    )
