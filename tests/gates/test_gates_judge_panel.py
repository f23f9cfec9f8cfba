"""The judge gate grades with a panel of judges as one judge, and verifies the panel's labels."""

from __future__ import annotations

import json
from typing import Any

from gatekit import configure
from test_gates_judge import gold, perfect, run

from propeval.gates import verify
from propeval.judge.gold import load_gold
from propeval.judge.rubric import load_rubric
from propeval.policy import user_config_path


def test_judge_gate_grades_with_a_panel_as_one_judge(gate_corpus: Any, loopback: Any) -> None:
    a = loopback(perfect("facts-v1"))
    b = loopback(perfect("facts-v1", flip=100))  # every fact stated, no propaganda
    configure(gate_corpus, a.base_url)
    cases = gold("facts-v1")[:4]
    folder = gate_corpus.root / "rubrics/facts-v1"
    (folder / "gold.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    second = f'\n[{{}}endpoints.jdg2]\nbase_url = "{b.base_url}"\nmodel = "judge-b"\nresponse_format = "json_schema"\n'
    pyproject = gate_corpus.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8").replace(
        "[tool.propeval.gates]\n", '[tool.propeval.gates]\njudge_panel = ["jdg", "jdg2"]\n'
    )
    pyproject.write_text(text + second.format("tool.propeval.judge."), encoding="utf-8")
    with user_config_path().open("a", encoding="utf-8") as fh:
        fh.write(second.format(""))

    res = run("gate", "judge", "--rubric", "facts-v1", "--online")
    assert "note: graded the gold set of facts-v1" in res.output
    record = json.loads((gate_corpus.root / "ledger/judge/facts-v1.json").read_text())
    assert record["binding"]["judge_model"] == "panel(judge-model, judge-b)"
    assert record["binding"]["settings"]["panel"] == [
        {"endpoint": "jdg", "model": "judge-model"},
        {"endpoint": "jdg2", "model": "judge-b"},
    ]
    rubric = load_rubric(gate_corpus.root / "rubrics", "facts-v1")
    for case, row in zip(cases, record["result"]["cases"], strict=True):
        assert len(row["raws"]) == 2 and all(isinstance(r, str) for r in row["raws"])
        # a fact the humans (judge a) did not mark stated splits the panel: a tie, scored missed
        human = {f["id"]: f["state"] for f in case["label"]["facts"]}
        assert row["judge"]["fact_states"] == {k: "stated" if v == "stated" else "missed" for k, v in human.items()}
        assert row["judge"]["propaganda"] == 0  # [human, 0]: the lower middle value
    assert len(a.seen) == len(b.seen) == 4

    # offline, the panel's labels are re-derived from both raw replies: nothing is wrong
    off = run("gate", "judge", "--rubric", "facts-v1")
    assert "[ledger-derived]" not in off.output and "graded the gold set" not in off.output
    # a record whose panel labels do not follow from the two replies is caught
    row = record["result"]["cases"][1]  # g002: the humans (and judge a) mark both facts missed
    row["raws"] = [row["raws"][1], row["raws"][1]]  # as if judge a had said what b said
    findings = verify.judge(rubric, load_gold(rubric, gate_corpus.root), record)
    assert [f.message for f in findings if not f.warning] == [
        f"the judge labels do not follow from the raw reply: 1 case(s) ({cases[1]['id']})"
    ]
