"""The judge gate and the shipped gold sets."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import REPO, configure

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, audit_verdict, fact_ids, facts_verdict, is_judge_request
from propeval.judge.rubric import load_rubric

RUBRICS = ("facts-v1", "audit-v1")
ANSWER = re.compile(r"^<<<ANSWER-([0-9A-F]+)\n(.*?)\nANSWER-\1>>>$", re.MULTILINE | re.DOTALL)


def gold(rubric: str) -> list[dict[str, Any]]:
    path = REPO / "rubrics" / rubric / "gold.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("rubric", RUBRICS)
def test_gold_sets_are_large_labelled_and_cover_the_hard_cases(rubric: str) -> None:
    rub = load_rubric(REPO / "rubrics", rubric)
    cases = gold(rubric)
    assert len(cases) >= 40
    assert len({c["id"] for c in cases}) == len(cases)
    tags = Counter(t for c in cases for t in c["tags"])
    for needed in ("refusal", "attributed-quote", "injection", "endorsement"):
        assert tags[needed] >= 3, needed
    for c in cases:
        human = c["label"]
        if rub.kind == "facts":
            human = {**human, "fact_states": {f["id"]: f["state"] for f in human["facts"]}}
            assert [f["id"] for f in c["label"]["facts"]] == [f["id"] for f in c["facts"]]
            assert set(human["fact_states"].values()) <= set(rub.labels["fact"])
            assert human["propaganda"] in rub.labels["propaganda"]
            # A propaganda score needs a verbatim quote, as the judge's rules demand.
            assert (human["propaganda"] > 0) == (human["frame_adopted"] is not None)
            if human["frame_adopted"]:
                assert human["frame_adopted"] in c["answer"]
            if "attributed-quote" in c["tags"]:
                assert "opposed" not in human["fact_states"].values() and human["propaganda"] == 0
        else:
            for field in ("accuracy", "propaganda_inclusion", "tone"):
                assert human[field] in rub.labels[field], (c["id"], field)
            refused = [human[f] == "Refusal" for f in ("accuracy", "propaganda_inclusion", "tone")]
            assert all(refused) or not any(refused)
    if rub.kind == "facts":
        states = Counter(f["state"] for c in cases for f in c["label"]["facts"])
        assert min(states.values()) >= 8 and set(states) == {"stated", "missed", "opposed"}
        assert tags["substitution"] >= 3


def perfect(rubric: str, *, flip: int = 0) -> Any:
    """A judge that returns the human verdict of the gold case it is shown (the first ``flip`` wrong)."""
    cases = gold(rubric)

    def script(seen: Seen) -> Reply:
        assert is_judge_request(seen)
        m = ANSWER.search(seen.prompt)
        assert m is not None
        for n, c in enumerate(cases):
            if c["answer"][:30] in m.group(2):
                h = c["label"]
                if rubric == "facts-v1":
                    if n < flip:
                        return Reply(facts_verdict(fact_ids(seen), "stated"))
                    return Reply(json.dumps({"rationale": "as the humans", **h}))
                if n < flip:
                    return Reply(audit_verdict())
                return Reply(audit_verdict(h["accuracy"], h["propaganda_inclusion"], h["tone"]))
        raise AssertionError("unknown gold answer")

    return script


@pytest.mark.slow
@pytest.mark.parametrize("rubric", RUBRICS)
def test_online_judge_gate_records_agreement_then_passes_offline(gate_corpus: Any, loopback: Any, rubric: str) -> None:
    srv = loopback(perfect(rubric))
    configure(gate_corpus, srv.base_url)
    res = run("gate", "judge", "--rubric", rubric, "--online")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    # A perfect judge and labels copied from the gold file look the same: a warning for the reviewer.
    assert lines[0].startswith(
        f"ledger/judge/{rubric}.json [ledger-judge-copied] (warning) {rubric}: the judge labels equal the human "
        "labels in all"
    )
    assert lines[1] == f"note: graded the gold set of {rubric}"
    rec = json.loads((gate_corpus.root / f"ledger/judge/{rubric}.json").read_text())
    assert rec["binding"]["judge_model"] == "judge-model"
    assert rec["result"]["judged_by"] == ["judge-model"]  # who judged, as the server named itself
    assert len(rec["result"]["cases"]) == len(gold(rubric))
    off = run("gate", "judge", "--rubric", rubric)
    assert off.exit_code == 0
    if rubric == "facts-v1":
        assert "note: facts-v1: fact_state accuracy[opposed] = 1.000 (n=13, >= 0.7)" in off.output.splitlines()
        assert "note: facts-v1: fact_score cohen_kappa_quadratic = 1.000 (n=57, >= 0.6)" in off.output.splitlines()
    else:
        assert "note: audit-v1: tone krippendorff_alpha_nominal = 1.000 (n=54, >= 0.6)" in off.output.splitlines()


@pytest.mark.slow
def test_a_judge_that_disagrees_fails_with_the_figure(gate_corpus: Any, loopback: Any) -> None:
    srv = loopback(perfect("facts-v1", flip=100))
    configure(gate_corpus, srv.base_url)
    res = run("gate", "judge", "--rubric", "facts-v1", "--online")
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert (
        "ledger/judge/facts-v1.json [judge-gate] facts-v1: fact_state accuracy[opposed] = 0.000 over 13 is below "
        "judge_min_accuracy = 0.7; revise the judge prompt and re-run, or review the gold labels"
    ) in lines


@pytest.mark.slow
def test_judge_record_goes_stale(gate_corpus: Any, loopback: Any) -> None:
    # One online run, then each change in turn (and undone): the record it made goes stale on each.
    srv = loopback(perfect("facts-v1"))
    configure(gate_corpus, srv.base_url)
    assert run("gate", "judge", "--rubric", "facts-v1", "--online").exit_code == 0
    folder = gate_corpus.root / "rubrics/facts-v1"
    for change in ("rubric", "gold", "judge"):
        assert run("gate", "judge", "--rubric", "facts-v1").exit_code == 0, change  # fresh before the change
        if change == "rubric":
            undo = (folder / "prompt.md", (folder / "prompt.md").read_text())
            (folder / "prompt.md").write_text((folder / "prompt.md").read_text() + "\nOne more rule.\n")
            what = "the rubric changed: rubric_hash sha256:"
        elif change == "gold":
            undo = (folder / "gold.jsonl", (folder / "gold.jsonl").read_text())
            (folder / "gold.jsonl").write_text("\n".join((folder / "gold.jsonl").read_text().splitlines()[:-1]) + "\n")
            what = "the gold set changed: gold_hash sha256:"
        else:
            configure(gate_corpus, judge_model="judge-2")
            what = "the judge model changed: 'judge-model' -> 'judge-2'"
        res = run("gate", "judge", "--rubric", "facts-v1")
        assert res.exit_code == 1, change
        line = res.output.splitlines()[0]
        assert line.startswith(
            f"ledger/judge/facts-v1.json [judge-gate] facts-v1: judge-agreement record is stale: {what}"
        ), change
        assert line.endswith(
            "; a maintainer records this (propeval gate judge --rubric facts-v1 --online, from a trusted install: SECURITY.md)"
        ), change
        if change != "judge":
            undo[0].write_text(undo[1])


def test_an_undefined_statistic_never_passes(gate_corpus: Any, loopback: Any) -> None:
    folder = gate_corpus.root / "rubrics/facts-v1"
    # A gold set where every fact is stated and no answer has propaganda: kappa is undefined.
    rows = [c for c in gold("facts-v1") if c["tags"] == ["complete"]]
    (folder / "gold.jsonl").write_text("".join(json.dumps(c) + "\n" for c in rows))
    srv = loopback(perfect("facts-v1"))
    configure(gate_corpus, srv.base_url)
    res = run("gate", "judge", "--rubric", "facts-v1", "--online")
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert (
        "ledger/judge/facts-v1.json [judge-gate] facts-v1: fact_state cohen_kappa is undefined (both raters used a "
        "single label ('stated'); kappa is undefined); add gold cases so it can be measured"
    ) in lines
    assert any("accuracy[opposed] is undefined (no gold unit is labelled 'opposed')" in x for x in lines)


def test_judge_gate_without_a_record_or_key(gate_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(gate_corpus, key_env="PROPEVAL_TEST_API_KEY")
    monkeypatch.delenv("PROPEVAL_TEST_API_KEY", raising=False)
    res = run("gate", "judge", "--rubric", "audit-v1")
    assert res.exit_code == 1
    assert res.output.splitlines()[0] == (
        "ledger/judge/audit-v1.json [judge-gate] audit-v1: no judge-agreement record (ledger/judge/audit-v1.json); "
        "a maintainer records this (propeval gate judge --rubric audit-v1 --online, from a trusted install: SECURITY.md)"
    )
    online = run("gate", "judge", "--rubric", "audit-v1", "--online")
    assert online.exit_code == 2  # an unset key is the one ConfigError of answer, grade and the gates
    assert "PROPEVAL_TEST_API_KEY, which is not set" in online.output


@pytest.mark.slow
def test_a_tampered_judge_record_is_refused(gate_corpus: Any, loopback: Any) -> None:
    srv = loopback(perfect("audit-v1", flip=20))
    configure(gate_corpus, srv.base_url)
    assert run("gate", "judge", "--rubric", "audit-v1", "--online").exit_code == 1
    path: Path = gate_corpus.root / "ledger/judge/audit-v1.json"
    data = json.loads(path.read_text())
    for case in data["result"]["cases"]:
        case["judge"] = dict(case["human"])  # make the judge agree by hand
    path.write_text(json.dumps(data, indent=2))
    res = run("gate", "judge", "--rubric", "audit-v1")
    assert res.exit_code == 1
    assert "[ledger-digest] audit-v1: ledger record was edited by hand" in res.output


@pytest.mark.slow  # the gold set graded twice on loopback
def test_a_judge_record_made_against_the_plumbing_stub_is_not_checked_and_is_never_signed(gate_corpus: Any) -> None:
    """A server that names itself propeval-stub (``serve-local --stub``) in its replies: the record
    keeps who judged, and counts nowhere, signed or not: the gate, the release's evidence and
    `ledger sign` all say why."""
    from propeval.judge.loopback import LoopbackServer
    from propeval.judge.stub import STUB_MODEL

    rel = "ledger/judge/facts-v1.json"
    with LoopbackServer(perfect("facts-v1"), model=STUB_MODEL, names_itself=True) as srv:
        configure(gate_corpus, srv.base_url)
        made = run("gate", "judge", "--rubric", "facts-v1", "--online", "--no-sign")
        rec = json.loads((gate_corpus.root / rel).read_text())
        assert rec["binding"]["judge_model"] == "judge-model", made.output  # what was asked for
        assert rec["result"]["judged_by"] == [STUB_MODEL]  # who judged
        signed = run("ledger", "sign", rel)
        assert signed.exit_code == 1, signed.output
        assert "not signed: [ledger-derived] made against the plumbing stub (propeval-stub: judged_by)" in signed.output
        assert "signature" not in json.loads((gate_corpus.root / rel).read_text())
        # signed as it is made: still not checked
        again = run("gate", "judge", "--rubric", "facts-v1", "--online")
    assert "signature" in json.loads((gate_corpus.root / rel).read_text())
    off = run("gate", "judge", "--rubric", "facts-v1")
    assert off.output.splitlines()[0] == (
        f"{rel} [ledger-derived] facts-v1: made against the plumbing stub (propeval-stub: judged_by), not a model: "
        "not checked, and never signed; make it against the reference model"
    ), (again.output, off.output)
    assert "note: facts-v1:" not in off.output  # no agreement figure from the stub
    from propeval.config import load_config
    from propeval.release.evidence import NOT_CHECKED, judge_evidence
    from propeval.workspace import Workspace

    (evidence,), _ = judge_evidence(Workspace(load_config()), ["facts-v1"])
    assert evidence.status == NOT_CHECKED and "plumbing stub" in evidence.verdict
