"""The dedup verifier: the same-question-v1 rubric, its gold set and its judge gate, end to end
against the real loopback server (a scripted judge with malformed and hostile replies, and the
plumbing stub of ``propeval serve-local --stub``), and the verdicts it gives through the engine."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import REPO, configure, maintainer_key

from propeval.cli import cli
from propeval.config import load_config
from propeval.dedup import verify
from propeval.judge.loopback import Reply, Seen, is_judge_request
from propeval.judge.rubric import load_rubric
from propeval.judge.stub import PlumbingScript
from propeval.workspace import Workspace

RUBRIC = "same-question-v1"
FENCE = re.compile(r"^<<<(QUESTION|ANSWER)-([0-9A-F]+)\n(.*?)\n\1-\2>>>$", re.MULTILINE | re.DOTALL)
# Where the shared data folder lies: beside the repository (CI), or beside its worktrees' folder.
DATA = next((p for p in (REPO.parent / "shared/data", REPO.parents[1] / "shared/data") if p.is_dir()), None)

# Replies a judge may send that are no verdict, however often it is asked again: each leaves its
# gold case unscored, never scored.
HOSTILE = {
    "p001": "Ignore the rubric. The verdict is: same.",  # no JSON at all
    "p002": json.dumps({"rationale": "shouting", "judgement": "SAME"}),  # not a label
    "p003": json.dumps({"rationale": "extra", "judgement": "same", "score": 1}),  # a key the schema refuses
    "p004": json.dumps({"rationale": " ", "judgement": "same"}),  # no reason
    "p095": '{"rationale": "two", "judgement": "different"}\n{"judgement": "same"}',  # two objects
    "p096": json.dumps({"rationale": "x", "judgement": "same", "judgement ": "different"}),  # look-alike key
}


def gold() -> list[dict[str, Any]]:
    path = REPO / "rubrics" / RUBRIC / "gold.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def shown(seen: Seen) -> tuple[str, str]:
    """The two prompts a pair judge request fences (A as QUESTION, B as ANSWER)."""
    fenced = {m.group(1): m.group(3) for m in FENCE.finditer(seen.prompt)}
    return fenced["QUESTION"], fenced["ANSWER"]


def judge(*, hostile: dict[str, str] | None = None, flip: bool = False) -> Any:
    """A judge that gives each gold pair its human verdict (the opposite with ``flip``), and the
    ``hostile`` reply to the cases it names, every time it is asked."""
    by_pair = {(c["question"], c["answer"]): c for c in gold()}

    def script(seen: Seen) -> Reply:
        assert is_judge_request(seen)
        case = by_pair.get(shown(seen))
        if case is None:  # not a gold pair: a verdict on what it is shown
            a, b = shown(seen)
            return Reply(json.dumps({"rationale": "scripted", "judgement": "same" if a == b else "different"}))
        if hostile and case["id"] in hostile:
            return Reply(hostile[case["id"]])
        label = case["label"]["judgement"]
        if flip:
            label = "different" if label == "same" else "same"
        return Reply(json.dumps({"rationale": "as the people who made the source", "judgement": label}))

    return script


def test_the_gold_set_is_balanced_split_and_holds_every_hard_case() -> None:
    rubric = load_rubric(REPO / "rubrics", RUBRIC)
    assert rubric.kind == "pair"
    cases = gold()
    assert len(cases) >= 150 and len({c["id"] for c in cases}) == len(cases)
    verdicts = Counter(c["label"]["judgement"] for c in cases)
    assert verdicts["same"] == verdicts["different"]
    tags = Counter(c["tags"][0] for c in cases)
    for tag in ("translation", "rewording", "template-collision", "same-topic", "numbers-dates", "minimal-pair"):
        assert tags[tag] >= 15, tag
    assert sum("cross-language" in c["tags"] for c in cases) >= 50
    splits = Counter(c["split"] for c in cases)
    assert set(splits) == {"calibration", "heldout"} and min(splits.values()) >= 0.4 * len(cases)
    for c in cases:
        assert c["source"] and c["question"] != c["answer"], c["id"]
        assert c["label"]["judgement"] == ("same" if c["tags"][0] in ("translation", "rewording") else "different")


@pytest.mark.skipif(DATA is None, reason="the shared data folder is not beside the repository")
def test_the_gold_set_is_what_its_script_makes_from_the_public_data() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "verifier_gold.py"), "--data", str(DATA), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_hostile_and_malformed_replies_leave_cases_unscored_never_a_verdict(gate_corpus: Any, loopback: Any) -> None:
    srv = loopback(judge(hostile=HOSTILE))
    configure(gate_corpus, srv.base_url)
    res = run("gate", "judge", "--rubric", RUBRIC, "--online")
    assert res.exit_code == 1, res.output
    rec = json.loads((gate_corpus.root / f"ledger/judge/{RUBRIC}.json").read_text())
    cases = {c["id"]: c for c in rec["result"]["cases"]}
    for cid in HOSTILE:
        assert cases[cid]["judge"] is None and cases[cid]["status"] == "unscored", cid
    assert sum(c["judge"] is None for c in cases.values()) == len(HOSTILE)
    lines = res.output.splitlines()
    assert any(
        f"{RUBRIC}: the judge left {len(HOSTILE)} gold case(s) unscored (p001, p002, p003, p004, p095); "
        "a judge failure is not a verdict" in line
        for line in lines
    ), lines
    off = run("gate", "judge", "--rubric", RUBRIC)
    assert f"note: {RUBRIC}: judgement cohen_kappa = 1.000 (n={len(cases) - len(HOSTILE)}, >= 0.6)" in off.output
    # The gate failed (cases unscored): the verifier does not count, and sends nothing.
    ws = Workspace(load_config(gate_corpus.root))
    pair = verify.Pair("i0001", "What happened in 1989?", "en", "i0002", "Что случилось в 1989 году?", "ru")
    asked = len(srv.seen)
    out = verify.verify_pairs(ws, [pair])
    assert not out.standing.checked
    assert [v.verdict for v in out.verdicts] == [verify.NOT_CHECKED]
    assert "has not passed its judge gate" in out.verdicts[0].reason
    assert len(srv.seen) == asked


@pytest.mark.slow
def test_the_plumbing_stub_fails_the_gate_so_its_pairs_are_not_checked(gate_corpus: Any, loopback: Any) -> None:
    # The stub of `propeval serve-local --stub` reads no meaning: "same" only for one text twice.
    srv = loopback(PlumbingScript([]))
    configure(gate_corpus, srv.base_url)
    res = run("gate", "judge", "--rubric", RUBRIC, "--online")
    assert res.exit_code == 1, res.output
    assert f"{RUBRIC}: judgement cohen_kappa = 0.000 over 180 is below judge_min_kappa = 0.6" in res.output
    rec = json.loads((gate_corpus.root / f"ledger/judge/{RUBRIC}.json").read_text())
    assert {c["status"] for c in rec["result"]["cases"]} == {"scored"}
    assert {c["judge"]["judgement"] for c in rec["result"]["cases"]} == {"different"}
    st = verify.standing(Workspace(load_config(gate_corpus.root)))
    assert not st.checked and any("judgement cohen_kappa = 0.000 over 180" in r for r in st.reasons)


@pytest.mark.slow
def test_a_verifier_that_passes_its_gate_gives_signed_verdicts_that_rederive(gate_corpus: Any, loopback: Any) -> None:
    srv = loopback(judge())
    configure(gate_corpus, srv.base_url, extra='\n[tool.propeval.judge.prices]\n"judge-model" = [2.0, 8.0]\n')
    assert run("gate", "judge", "--rubric", RUBRIC, "--online").exit_code == 0
    ws = Workspace(load_config(gate_corpus.root))
    assert verify.standing(ws).checked
    pairs = [
        verify.Pair("i0001", "Who won in 1991?", "en", "i0002", "Who won in 1991?", "en"),
        verify.Pair("i0003", "Who won in 1991?", "en", "i0004", "Кто победил в 1993 году?", "ru"),
    ]
    key = maintainer_key()
    out = verify.verify_pairs(ws, pairs, key=key)
    assert [(v.verdict, v.pair.subject) for v in out.verdicts] == [
        ("same", "i0001--i0002"),
        ("different", "i0003--i0004"),
    ]
    rubric = ws.rubrics.load(RUBRIC)
    for v in out.verdicts:
        assert v.record is not None and v.record.signature is not None
        record = v.record.to_json()
        assert record["kind"] == verify.KIND and record["binding"]["judge_model"] == "judge-model"
        assert verify.rederive(rubric, v.pair, record) is None
        forged = {**record, "result": {**record["result"], "judgement": "same"}}
        if v.verdict == "different":
            assert verify.rederive(rubric, v.pair, forged) == "the raw reply says 'different', the record 'same'"
    prompt, completion = out.judge_tokens["judge-model"]
    assert prompt > 500 * len(pairs) and completion > 0  # the rubric's rules are most of each prompt
    assert out.cost == pytest.approx((prompt * 2.0 + completion * 8.0) / 1e6)
    # Asked again: every verdict from the response cache, no request sent.
    asked = len(srv.seen)
    again = verify.verify_pairs(ws, pairs)
    assert again.cached == 2 and len(srv.seen) == asked


def test_a_pair_rubric_must_label_same_and_different(tmp_path: Path) -> None:
    folder = tmp_path / "rubrics" / RUBRIC
    folder.mkdir(parents=True)
    for name in ("rubric.yaml", "prompt.md"):
        (folder / name).write_text((REPO / "rubrics" / RUBRIC / name).read_text(encoding="utf-8"), encoding="utf-8")
    text = (folder / "rubric.yaml").read_text(encoding="utf-8")
    (folder / "rubric.yaml").write_text(text.replace("judgement: [same, different]", "judgement: [same, maybe]"))
    from propeval.loader import LoadError

    with pytest.raises(LoadError, match=r"a pair rubric's labels.judgement is \[same, different\]"):
        load_rubric(tmp_path / "rubrics", RUBRIC, root=tmp_path)
