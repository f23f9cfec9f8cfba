"""`propeval difficulty` and the `difficulty` check, driven through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from difficulty_helpers import HAND, grade, write_hand_runs, write_run

from propeval.cli import cli
from propeval.loader import dumps_json

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def hand_corpus(corpus: Any) -> Any:
    """Four active items of one claim (i0001, i0003 in ru) and graded runs of four models."""
    corpus.claim()
    for n, iid in enumerate(HAND):
        corpus.item(iid, language="ru" if n % 2 == 0 else "en")
    write_hand_runs(corpus.root)
    return corpus


def run(*args: str) -> tuple[int, list[str]]:
    """Exit code and what a user reads: stdout and errors, without the progress lines on stderr."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, [x for x in result.output.splitlines() if not x.startswith("difficulty: ")]


def test_difficulty_writes_bands_and_flags(hand_corpus) -> None:
    code, lines = run("difficulty")
    assert code == 0
    assert lines == [
        "questions/c0001/i0001.yaml [saturated] (notice) i0001: every model scores at or above the pass mark; "
        "the item no longer separates models (make it harder, or retire it)",
        "questions/c0001/i0002.yaml [unstable] (notice) i0002: the band changes in too many bootstrap draws over "
        "models; grade more models before relying on it",
        "questions/c0001/i0003.yaml [unanswered-by-all] (notice) i0003: every model scores 0; check that the facts "
        "are answerable from the prompt (run the answerability gate)",
        "questions/c0001/i0004.yaml [unstable] (notice) i0004: the band changes in too many bootstrap draws over "
        "models; grade more models before relying on it",
        "wrote ledger/difficulty.json: 4 item(s), 4 model(s) from 4 run(s); easy 1, medium 2, hard 1, none 0",
    ]
    raw = (hand_corpus.root / "ledger/difficulty.json").read_text(encoding="utf-8")
    ledger = json.loads(raw)
    assert raw == dumps_json(ledger) + "\n"  # canonical JSON
    assert [s["run_id"] for s in ledger["sources"]] == ["run-m1", "run-m2", "run-m3", "run-m4"]
    assert all(s["sha256"].startswith("sha256:") for s in ledger["sources"])
    entry = ledger["items"]["i0002"]
    assert (entry["band"], entry["mean"], entry["share_pass"], entry["n_models"]) == ("medium", 0.45, 0.25, 4)
    assert ledger["items"]["i0004"]["n_models"] == 3  # m3 has no grade for it: missing, not zero
    assert ledger["items"]["i0004"]["mean"] == 0.4
    # deterministic: a second run writes the same bytes
    run("difficulty")
    assert (hand_corpus.root / "ledger/difficulty.json").read_text(encoding="utf-8") == raw


def test_check_is_silent_without_a_ledger_and_warns_on_stale_and_missing_bands(hand_corpus) -> None:
    assert run("check") == (0, ["ok: 5 file(s) checked, no problems"])
    run("difficulty")
    assert run("check") == (0, ["ok: 5 file(s) checked, no problems"])
    hand_corpus.item("i0002", prompt="Who gave the order to clear Tiananmen Square in June 1989?")
    hand_corpus.item("i0005")
    hand_corpus.item("i0004", status="retired", retired_reason="superseded by i0005")
    code, lines = run("check")
    assert code == 0  # warnings do not fail the check
    assert lines == [
        "questions/c0001/i0002.yaml:1:5 [difficulty] (warning) i0002 changed since its difficulty band (medium) "
        "was computed; the band is stale: run `propeval difficulty` on graded runs that include it",
        "questions/c0001/i0005.yaml:1:5 [difficulty] (warning) i0005 has no difficulty band; "
        "run `propeval difficulty` on graded runs that include it",
        "0 error(s), 2 warning(s) in 6 file(s) checked",
    ]


def test_check_reports_an_edited_or_corrupt_ledger_once(hand_corpus) -> None:
    run("difficulty")
    path = hand_corpus.root / "ledger/difficulty.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["items"]["i0003"]["band"] = "easy"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert run("check") == (
        0,
        [
            "ledger/difficulty.json:1:1 [difficulty] (warning) the difficulty ledger does not match its "
            "ledger_hash (edited by hand?); recompute it with `propeval difficulty`",
            "0 error(s), 1 warning(s) in 5 file(s) checked",
        ],
    )
    path.write_text('{"format": "propeval-difficulty/1", "items": {', encoding="utf-8")
    code, lines = run("check", "--format", "json")
    problems = json.loads("\n".join(lines))["problems"]
    assert [(p["path"], p["rule"], p["severity"]) for p in problems] == [
        ("ledger/difficulty.json", "difficulty", "warning")
    ]
    assert problems[0]["message"].startswith("the difficulty ledger cannot be read: ")
    code, lines = run("difficulty", "--report")
    assert code == 2
    assert lines[0].startswith("propeval: error: ledger/difficulty.json cannot be read: ")


@pytest.mark.slow
def test_check_does_not_import_numpy_or_scipy(hand_corpus) -> None:
    run("difficulty")
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "propeval", "check"],
        cwd=hand_corpus.root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines()}
    assert "propeval.checks.difficulty" in imported
    assert not {"numpy", "scipy", "matplotlib"} & imported


@pytest.mark.slow
def test_report_tables_json_and_plot(hand_corpus, tmp_path: Path) -> None:
    run("difficulty")
    code, lines = run("difficulty", "--report", "--plot", str(tmp_path / "bands.png"))
    assert code == 0
    assert lines == [
        "bands by category",
        "  category                 easy  medium    hard    none   total",
        "  freedom_of_expression       1       2       1       0       4",
        "",
        "bands by language",
        "  language    easy  medium    hard    none   total",
        "  en             0       2       0       0       2",
        "  ru             1       0       1       0       2",
        "",
        "bands by framing",
        "  framing    easy  medium    hard    none   total",
        "  neutral       1       2       1       0       4",
        "",
        "unstable: 2 active item(s) over 200 bootstrap draws; each draw recomputes every item's mean score over "
        "the drawn models (nothing else is fitted)",
        f"wrote {tmp_path / 'bands.png'}",
    ]
    import matplotlib.image

    image = matplotlib.image.imread(tmp_path / "bands.png")
    assert image.shape[:2] == (450, 800)
    code, lines = run("difficulty", "--report", "--format", "json")
    data = json.loads("\n".join(lines))
    assert data["tables"]["language"]["ru"] == {"easy": 1, "hard": 1, "medium": 0, "none": 0}
    assert data["basis"] == "mean"
    # Every registered format works: github shows the tables in the log, sarif has no results.
    text = run("difficulty", "--report")
    assert run("difficulty", "--report", "--format", "github") == text
    code, lines = run("difficulty", "--report", "--format", "sarif")
    assert code == 0 and json.loads("\n".join(lines))["runs"][0]["results"] == []


def test_matrix_inputs_csv_and_jsonl(corpus) -> None:
    corpus.write("scores.csv", "item_id,a,b,c\nx1,1,1,1\nx2,1,0,\nx3,0,0,0\nx4,1,0,0\n")
    code, lines = run("difficulty", "--matrix", "scores.csv", "--out", "m.json", "--format", "json")
    assert code == 0
    ledger = json.loads((corpus.root / "m.json").read_text(encoding="utf-8"))
    assert ledger["settings"]["scale"] == "binary"
    assert ledger["irt"]["model"] == "2pl"
    assert ledger["items"]["x2"]["n_models"] == 2  # the empty cell is missing
    assert ledger["sources"][0]["matrix"] == "scores.csv"
    rules = [p["rule"] for p in json.loads("\n".join(lines))["problems"]]
    assert rules.count("too-few-models") == 1 and "saturated" in rules
    corpus.write(
        "scores.jsonl",
        '{"item_id": "x1", "scores": {"a": 5, "b": 4, "c": null}}\n{"item_id": "x2", "model": "a", "score": 2}\n',
    )
    code, lines = run("difficulty", "--matrix", "scores.jsonl", "--out", "ledger/difficulty.json")
    assert code == 0
    assert (
        lines[-1] == "wrote ledger/difficulty.json: 2 item(s), 2 model(s) from matrix; easy 0, medium 0, hard 0, none 2"
    )
    ledger = json.loads((corpus.root / "ledger/difficulty.json").read_text(encoding="utf-8"))
    assert ledger["settings"]["scale"] == "0-5"
    assert ledger["irt"]["model"] == "grm"


def test_bad_input_writes_nothing_and_exits_1(hand_corpus) -> None:
    write_run(hand_corpus.root, "run-bad", [grade("i0001", "m9", 9)])
    before = hand_corpus.snapshot()
    code, lines = run("difficulty")
    assert code == 1
    assert lines == [
        "runs/run-bad/grades-facts-v1.jsonl:1:1 [run-record] status is scored but fact_score is 9, "
        "not an integer 0-5; re-grade the item",
        "note: ledger/difficulty.json not written: fix the input problems above first",
    ]
    assert hand_corpus.snapshot() == before


def test_usage_errors(corpus) -> None:
    code, lines = run("difficulty")
    assert (code, lines) == (
        2,
        [
            "propeval: error: no graded runs found (runs/*/grades-facts-v1.jsonl); answer and grade a run first "
            "(`propeval answer`, then `propeval grade`), or pass --matrix FILE"
        ],
    )
    assert run("difficulty", "--report") == (
        2,
        ["propeval: error: ledger/difficulty.json does not exist; run `propeval difficulty` first"],
    )
    corpus.write("pyproject.toml", '[tool.propeval]\n[tool.propeval.difficulty]\nbasis = "median"\n')
    code, lines = run("difficulty")
    assert (code, lines) == (
        2,
        [
            'propeval: error: pyproject.toml: [tool.propeval.difficulty] basis must be one of "mean", "irt" (got \'median\')'
        ],
    )


def test_irt_basis_with_quantile_cuts(hand_corpus) -> None:
    hand_corpus.write(
        "pyproject.toml",
        '[tool.propeval]\n[tool.propeval.difficulty]\nbasis = "irt"\ncuts = "quantile"\nbootstrap = 20\n',
    )
    code, _ = run("difficulty")
    assert code == 0
    ledger = json.loads((hand_corpus.root / "ledger/difficulty.json").read_text(encoding="utf-8"))
    bands = {k: v["band"] for k, v in ledger["items"].items()}
    assert bands["i0001"] == "easy" and bands["i0003"] == "hard"
    assert ledger["settings"]["basis"] == "irt"


def test_matrix_never_overwrites_the_ledger_without_out(hand_corpus) -> None:
    assert run("difficulty")[0] == 0
    hand_corpus.write("scores.csv", "item_id,a,b,c\nx1,1,1,1\nx2,1,0,0\n")
    before = hand_corpus.snapshot()
    assert run("difficulty", "--matrix", "scores.csv") == (
        2,
        [
            "propeval: error: --matrix needs --out FILE: bands from a score matrix are not the corpus's graded "
            "runs, so they do not replace ledger/difficulty.json unless you name it (--out ledger/difficulty.json)"
        ],
    )
    assert hand_corpus.snapshot() == before
    code, lines = run("difficulty", "--matrix", "scores.csv", "--out", "out/scores-difficulty.json")
    assert code == 0
    assert lines[-1].startswith("wrote out/scores-difficulty.json: 2 item(s), 3 model(s) from matrix")
    flagged = [x for x in lines[:-1] if not x.startswith("note: ")]
    assert flagged and all(x.startswith("out/scores-difficulty.json ") for x in flagged)  # items not in the corpus
    after = hand_corpus.snapshot()
    assert after.pop("out/scores-difficulty.json")
    assert after == before  # the corpus ledger is untouched
    assert run("difficulty", "--report", "--out", "x.json")[0] == 2


def test_duplicated_rows_and_columns_are_errors_naming_both(corpus) -> None:
    corpus.write("wide.csv", "item_id,a,b,a\nx1,1,1,0\nx2,1,0,0\nx1,0,0,0\n")
    before = corpus.snapshot()
    code, lines = run("difficulty", "--matrix", "wide.csv", "--out", "w.json")
    assert code == 1
    assert lines == [
        "wide.csv:1:1 [difficulty-input] columns 2 and 4 are both named 'a'; a matrix has one column per model: "
        "rename or merge them",
        "wide.csv:4:1 [difficulty-input] x1/a is scored on line 2 and again on line 4; a matrix holds one score "
        "per item and model: keep one",
        "wide.csv:4:1 [difficulty-input] x1/b is scored on line 2 and again on line 4; a matrix holds one score "
        "per item and model: keep one",
        "note: w.json not written: fix the input problems above first",
    ]
    corpus.write(
        "long.jsonl",
        '{"item_id": "x1", "model": "a", "score": 3}\n{"item_id": "x2", "scores": {"a": 1}}\n'
        '{"item_id": "x1", "scores": {"a": 3, "b": 2}}\n',
    )
    code, lines = run("difficulty", "--matrix", "long.jsonl", "--out", "w.json")
    assert (code, lines) == (
        1,
        [
            "long.jsonl:3:1 [difficulty-input] x1/a is scored on line 1 and again on line 3; a matrix holds one "
            "score per item and model: keep one",
            "note: w.json not written: fix the input problems above first",
        ],
    )
    assert corpus.snapshot() == {**before, "long.jsonl": (corpus.root / "long.jsonl").read_bytes()}


def test_a_bad_value_is_reported_at_its_row(corpus) -> None:
    corpus.write("scores.csv", "item_id,a,b,c\nx1,1,1,1\nx2,1,0,0\nx3,0,0.5,1\nx4,1,zero,0\n")
    code, lines = run("difficulty", "--matrix", "scores.csv", "--scale", "binary", "--out", "s.json")
    assert (code, lines) == (
        1,
        [
            "scores.csv:4:1 [difficulty-input] x3/b: 0.5 is not 0 or 1 on a binary scale",
            "scores.csv:5:1 [difficulty-input] x4/b: 'zero' is not a number; write a score or leave it",
            "note: s.json not written: fix the input problems above first",
        ],
    )


def test_many_flags_print_counts_and_the_first_few(corpus) -> None:
    rows = [f"s{n:03d},5,5,5,4" for n in range(30)] + [f"z{n:03d},0,0,0,0" for n in range(7)]
    corpus.write("scores.csv", "item_id,a,b,c,d\n" + "\n".join(rows) + "\n")
    code, lines = run("difficulty", "--matrix", "scores.csv", "--out", "s.json")
    assert code == 0
    saturated = [x for x in lines if "[saturated]" in x]
    assert [x.split(" ")[1] for x in saturated] == ["[saturated]"] * 5
    assert [x.split(" ")[3] for x in saturated] == ["s000:", "s001:", "s002:", "s003:", "s004:"]
    assert len([x for x in lines if "[unanswered-by-all]" in x]) == 5
    assert (
        "note: 37 flag notice(s): saturated 30, unanswered-by-all 7; the first 5 of each are shown; "
        "--format json lists every one"
    ) in lines
    code, lines = run("difficulty", "--matrix", "scores.csv", "--out", "s.json", "--format", "json")
    rules = [p["rule"] for p in json.loads("\n".join(lines))["problems"]]
    assert (rules.count("saturated"), rules.count("unanswered-by-all")) == (30, 7)


def test_progress_goes_to_stderr_and_config_errors_name_their_key(hand_corpus) -> None:
    hand_corpus.write("pyproject.toml", '[tool.propeval]\n[tool.propeval.difficulty]\nbasis = "irt"\nbootstrap = 3\n')
    result = CliRunner().invoke(cli, ["difficulty", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays one JSON document
    assert result.stderr.splitlines()[:2] == [
        "difficulty: fitting the grm IRT model to 4 item(s) x 4 model(s)",
        result.stderr.splitlines()[1],
    ]
    assert result.stderr.splitlines()[1].startswith("difficulty: IRT fit done in ")
    assert result.stderr.splitlines()[-1].startswith(
        "difficulty: bootstrap over models: 3/3 draws (item-only refits), "
    )

    from propeval.config import load_config
    from propeval.errors import ConfigError

    hand_corpus.write("pyproject.toml", "[tool.propeval]\n[tool.propeval.difficulty]\nquantile_cuts = [0, 0.5]\n")
    with pytest.raises(ConfigError) as info:
        _ = load_config(hand_corpus.root).settings.difficulty
    assert info.value.key == "quantile_cuts"


@pytest.mark.slow
def test_irt_basis_on_a_large_matrix_is_fast(corpus) -> None:
    """1,500 x 12 with 200 bootstrap draws. The old per-draw joint L-BFGS refits took about 10 minutes
    on 3,000 x 12. The bound, 60 CPU-s at 3,000 items, shrinks with n squared: a cost quadratic in the
    items fails here as it failed there; a linear one has half the room it had."""
    import time

    import numpy as np

    rng = np.random.default_rng(1)
    n, m = 1500, 12
    b, theta = rng.normal(0, 1.5, n), rng.normal(0, 1, m)
    tau = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    star = 1 / (1 + np.exp(-(theta[None, :, None] - b[:, None, None] - tau)))
    score = (rng.random((n, m))[:, :, None] < star).sum(axis=2)
    rows = [f"q{j:05d}," + ",".join(str(s) for s in score[j]) for j in range(n)]
    corpus.write("big.csv", "item_id," + ",".join(f"m{i:02d}" for i in range(m)) + "\n" + "\n".join(rows) + "\n")
    corpus.write("pyproject.toml", '[tool.propeval]\n[tool.propeval.difficulty]\nbasis = "irt"\n')
    started = time.process_time()
    result = CliRunner().invoke(cli, ["difficulty", "--matrix", "big.csv", "--out", "big.json"], catch_exceptions=False)
    cpu = time.process_time() - started
    assert result.exit_code == 0, result.output
    assert cpu < 60 * (n / 3000) ** 2, cpu  # 15 CPU-s
    assert "difficulty: bootstrap over models: 200/200 draws" in result.stderr
    ledger = json.loads((corpus.root / "big.json").read_text(encoding="utf-8"))
    fitted = np.array([ledger["items"][f"q{j:05d}"]["irt_b"] for j in range(n)])
    assert np.corrcoef(fitted, b)[0, 1] > 0.9
    stability = [v["stability"] for v in ledger["items"].values() if v["stability"] is not None]
    assert 0.5 < float(np.median(stability)) <= 1.0
