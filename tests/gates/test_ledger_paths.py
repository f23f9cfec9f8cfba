"""Every ledger path comes from [tool.propeval.gates] ledger_dir; one rubric listing; one door into the judge."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import REPO, configure

from propeval.cli import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def set_ledger_dir(corpus: Any, folder: str) -> None:
    path = corpus.root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[tool.propeval.gates]\n", f'[tool.propeval.gates]\nledger_dir = "{folder}"\n'))


@pytest.mark.slow
def test_difficulty_writes_its_bands_where_stats_and_the_card_read_them(gate_corpus: Any, tmp_path: Path) -> None:
    """`propeval difficulty` used to write ledger/difficulty.json whatever the config said, while
    the card read [tool.propeval.release] difficulty_ledger: with another ledger folder, the bands
    were computed and never shown."""
    set_ledger_dir(gate_corpus, "evidence")
    for n, model in enumerate(("m1", "m2", "m3")):
        path = gate_corpus.root / "runs" / f"run-{model}" / "grades-facts-v1.jsonl"
        path.parent.mkdir(parents=True)
        rows = [_grade(item, model, score) for item, score in (("i0001", 5 - n), ("i0002", n))]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run("difficulty")
    assert result.exit_code == 0, result.output
    assert "wrote evidence/difficulty.json: 2 item(s), 3 model(s)" in result.output
    assert (gate_corpus.root / "evidence/difficulty.json").is_file()
    assert not (gate_corpus.root / "ledger/difficulty.json").exists()
    stats = json.loads(run("stats", "--format", "json").output)
    assert stats["difficulty"]["ledger"] == "evidence/difficulty.json"
    assert sum(stats["by_band"].get(b, 0) for b in ("easy", "medium", "hard")) == 2
    out = tmp_path / "release"
    assert run("export", "--out", str(out)).exit_code == 0
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["difficulty_band"] in ("easy", "medium", "hard") for r in rows)


def _grade(item: str, model: str, score: int) -> dict[str, Any]:
    """One scored line of grades-facts-v1.jsonl, as `propeval grade` writes it."""
    return {
        "item_id": item,
        "model": model,
        "rubric": "facts-v1",
        "rubric_version": "1",
        "rubric_hash": "sha256:0",
        "judge_model": "judge",
        "prompt_hash": "sha256:1",
        "attempts": 1,
        "status": "scored",
        "verdict": None,
        "reason": None,
        "raw": None,
        "fact_states": None,
        "fact_score": score,
        "propaganda": 0,
        "frame_adopted": None,
    }


@pytest.mark.parametrize("key", ["dedup_report", "difficulty_ledger", "judge_ledger"])
def test_the_release_ledger_keys_are_refused_with_where_the_file_lies_now(gate_corpus: Any, key: str) -> None:
    path = gate_corpus.root / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8") + f'\n[tool.propeval.release]\n{key} = "ledger/x.json"\n')
    result = run("check")
    assert result.exit_code == 2
    assert result.output.startswith(
        f"propeval: error: pyproject.toml: [tool.propeval.release] {key} moved: every ledger record lies under "
        "[tool.propeval.gates] ledger_dir ("
    )
    assert "delete it here" in result.output


@pytest.mark.slow
def test_a_dot_folder_in_rubrics_is_not_a_rubric_for_run_report_or_export(gate_corpus: Any, tmp_path: Path) -> None:
    """`rubrics/.draft/` (an editor's or a work in progress): once `propeval run` failed at the
    judge step with exit 2 while `report` and `export` left it out without a word."""
    shutil.copytree(gate_corpus.root / "rubrics/facts-v1", gate_corpus.root / "rubrics/.draft")
    result = run("run", "--skip", "dedup")
    judge = next(line for line in result.output.splitlines() if line.startswith("judge "))
    assert judge.split()[1] in ("failed", "advisory")  # the real rubrics have no records: not an error
    assert "judge: left out, not rubrics: rubrics/.draft/ (a folder whose name starts with '.' is not a rubric)" in (
        result.output
    )
    assert "ci-judge" not in result.output
    assert result.exit_code == 1
    stats = json.loads(run("stats", "--format", "json").output)
    assert sorted(j["rubric"] for j in stats["judge"]) == ["audit-v1", "facts-v1", "same-question-v1"]


def test_an_unset_api_key_is_one_error_from_grade_and_from_the_gates(
    gate_corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One check, one exit code (2): the gates' own check used to exit 3 where grade exited 2."""
    monkeypatch.delenv("PROPEVAL_TEST_API_KEY", raising=False)
    configure(gate_corpus, key_env="PROPEVAL_TEST_API_KEY")
    message = (
        "propeval: error: endpoint '{ep}' reads its API key from the environment variable PROPEVAL_TEST_API_KEY, "
        "which is not set; export it first"
    )
    gate = run("gate", "answerability", "--all", "--online")
    judge = run("gate", "judge", "--rubric", "facts-v1", "--online")
    run_dir = gate_corpus.root / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "answers.jsonl").write_text(
        json.dumps({"item_id": "i0001", "model": "m", "status": "answered", "answer": "x"}) + "\n", encoding="utf-8"
    )
    graded = run("grade", "r1", "--rubric", "facts-v1", "--judge", "jdg")
    assert (gate.exit_code, judge.exit_code, graded.exit_code) == (2, 2, 2)
    assert gate.output.startswith(message.format(ep="ref"))
    assert judge.output.startswith(message.format(ep="ref"))
    assert graded.output.startswith(message.format(ep="jdg"))


@pytest.mark.slow
def test_the_judge_gate_grades_its_gold_set_from_memory(
    gate_corpus: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No throw-away corpus on disk: the gold cases go through grade's loop in memory. They used to
    were written as YAML into a temporary folder, so a machine without a writable temp folder could
    not record the judge gate."""
    srv = loopback()
    configure(gate_corpus, srv.base_url)
    gone = tmp_path / "no-temp-folder"  # where every temporary file would go: a folder that is not there
    monkeypatch.setattr(tempfile, "tempdir", str(gone))
    result = run("gate", "judge", "--rubric", "facts-v1", "--online")
    assert "graded the gold set of facts-v1" in result.output, result.output
    assert not gone.exists()
    record = json.loads((gate_corpus.root / "ledger/judge/facts-v1.json").read_text(encoding="utf-8"))
    gold = [json.loads(x) for x in (REPO / "rubrics/facts-v1/gold.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [c["id"] for c in record["result"]["cases"]] == [str(g["id"]) for g in gold]
    assert len(srv.seen) == len(gold)
    # and the record verifies offline: the same prompts and verdicts grade would have made
    offline = run("gate", "judge", "--rubric", "facts-v1")
    assert "[ledger-derived]" not in offline.output
    assert "[ledger-unsigned]" not in offline.output
