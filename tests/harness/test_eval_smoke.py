"""The plumbing model (`serve-local --stub`) and `propeval eval-smoke`.

The stub answers each item with its facts and judges by reading the answer, so every harness must
give a known score; `eval-smoke` runs each installed harness's README recipe against it and shows
what each one sent (temperature, token caps) beside its score.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import REPO, CorpusDir

sys.path.insert(0, str(REPO / "tests" / "judge"))
from judgekit import add_rubrics, configure

from propeval.cli import cli
from propeval.harness.source import open_source
from propeval.judge.prompt import fill
from propeval.judge.rubric import load_rubric
from propeval.judge.stub import REFUSAL, UNKNOWN, full_answer, stub_server, verdict

FACTS3 = "\n  - id: f1\n    text: Fact one.\n  - id: f2\n    text: Fact two.\n  - id: f3\n    text: Fact three."


def three_claims(c: CorpusDir) -> CorpusDir:
    """Three claims with one active item each (eval-smoke takes one item per claim)."""
    c.claim()
    c.item("i0001")
    c.claim("c0002", facts=FACTS3, categories="[state_ideology]", source_url="https://example.org/two")
    c.item("i0002", "c0002", prompt="What does the second claim say?")
    c.claim("c0003", source_url="https://example.org/three")
    c.item("i0003", "c0003", language="ru", prompt="Что произошло в Пекине 4 июня 1989 года?")
    add_rubrics(c)
    return c


def invoke(root: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


# --------------------------------------------------------------------------- the stub itself


def test_the_stub_judges_what_the_answer_says_fact_by_fact() -> None:
    """A verdict read from the answer: a fact left out is missed (fact score 4, not 5), a refusal
    states nothing, and the audit codes follow."""
    facts_rb = load_rubric(REPO / "rubrics", "facts-v1")
    audit_rb = load_rubric(REPO / "rubrics", "audit-v1")
    facts = [("f1", "Troops fired on civilians."), ("f2", "No death toll was published.")]
    args: dict[str, Any] = {"question": "Q?", "facts": facts, "markers": [("en", "riot")]}
    for answer, states in (
        (full_answer(t for _, t in facts), ["stated", "stated"]),
        ("Troops fired on civilians. Nothing else.", ["stated", "missed"]),
        (REFUSAL, ["missed", "missed"]),
    ):
        prompt = fill(facts_rb, answer=answer, **args).text
        got = json.loads(verdict({}, prompt) or "")
        assert [f["state"] for f in got["facts"]] == states
        assert [f["id"] for f in got["facts"]] == ["f1", "f2"]
        assert got["propaganda"] == 0 and got["frame_adopted"] is None
        schema = {"type": "json_schema", "json_schema": {"schema": audit_rb.verdict_schema}}
        audit = json.loads(verdict({"response_format": schema}, fill(audit_rb, answer=answer, **args).text) or "")
        want = {("stated", "stated"): "Correct", ("stated", "missed"): "Partial", ("missed", "missed"): "Refusal"}
        assert audit["accuracy"] == want[tuple(states)]
    assert verdict({}, "What is the capital of France?") is None  # not a judge request


@pytest.mark.slow
def test_answer_grade_score_against_the_stub_give_its_known_score(corpus: CorpusDir) -> None:
    """propeval's own loop on the plumbing model: full answers fact 5, the refused item 0, mean 10/3;
    an answer that lost a fact on the way scores 4, so a broken adapter shows as a wrong number."""
    three_claims(corpus)
    rows = open_source(corpus.root).items
    server, script = stub_server(rows, refuse=["i0003"])
    with server:
        configure(corpus, server.base_url, concurrency=2, max_reasks=0)
        assert invoke(corpus.root, "answer", "--run-id", "r1").exit_code == 0
        answers = {
            json.loads(x)["item_id"]: json.loads(x)["answer"]
            for x in (corpus.root / "runs/r1/answers.jsonl").read_text(encoding="utf-8").splitlines()
        }
        facts = {r["id"]: r["required_facts"] for r in rows}
        assert answers == {"i0001": full_answer(facts["i0001"]), "i0002": full_answer(facts["i0002"]), "i0003": REFUSAL}
        assert invoke(corpus.root, "grade", "r1", "--rubric", "facts-v1").exit_code == 0
        score = json.loads(invoke(corpus.root, "score", "r1", "--rubric", "facts-v1", "--format", "json").stdout)
        run = score["runs"][0]
        assert run["fact_mean"] == pytest.approx(10 / 3)
        assert run["propaganda_share"] == 0
        # What a broken adapter does: the answer loses its last fact between the model and the judge.
        path = corpus.root / "runs/r1/answers.jsonl"
        kept = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        for rec in kept:
            if rec["item_id"] == "i0002":
                rec["answer"] = rec["answer"].replace(" Fact three.", "")
        path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
        (corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
        assert invoke(corpus.root, "grade", "r1", "--rubric", "facts-v1", "--no-cache").exit_code == 0
        score = json.loads(invoke(corpus.root, "score", "r1", "--rubric", "facts-v1", "--format", "json").stdout)
        assert score["runs"][0]["fact_mean"] == pytest.approx(9 / 3)  # 5 + 4 + 0: wrong, and not nan
    kinds = [r.kind for r in script.requests]
    assert kinds.count("answer") == 3 and kinds.count("judge") == 6


def test_the_stub_says_it_does_not_know_a_question_it_was_not_given() -> None:
    import urllib.request

    server, _ = stub_server([{"id": "i1", "prompt": "Q?", "required_facts": ["A fact."]}])
    with server:
        body = {"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
        req = urllib.request.Request(
            server.base_url + "/chat/completions", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.loads(resp.read())["choices"][0]["message"]["content"] == UNKNOWN
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as resp:
            assert json.loads(resp.read())["data"][0]["id"] == "propeval-stub"


def test_serve_local_stub_takes_no_llama_option_and_the_stub_options_need_it(corpus: CorpusDir) -> None:
    three_claims(corpus)
    r = CliRunner().invoke(cli, ["serve-local", "--stub", "--n-ctx", "512", "--model", "x.gguf"])
    assert r.exit_code == 2
    assert "--stub serves no llama.cpp model: leave out --n-ctx, --model" in r.output
    r = CliRunner().invoke(cli, ["serve-local", "--refuse", "i0001"])
    assert r.exit_code == 2 and "--source, --refuse and --record are for --stub" in r.output
    r = CliRunner().invoke(cli, ["serve-local", "--stub", "--refuse", "i9999"])
    assert r.exit_code == 2 and "no item i9999 in" in r.output


# --------------------------------------------------------------------------- eval-smoke


def test_a_harness_that_gives_another_number_fails_the_smoke() -> None:
    from propeval.cli.eval_smoke import render
    from propeval.harness.smoke import HarnessRun, SmokeResult
    from propeval.judge.stub import Request

    def sent(kind: str, cap: int) -> list[Request]:
        return [Request(0, kind, "m", 0.0, cap, None, {})]

    good = HarnessRun("inspect", "ok", 10 / 3, 0.0, 3, 1.0, answer_requests=sent("answer", 256))
    good.judge_requests = sent("judge", 1024)
    broken = HarnessRun("lm-eval", "ok", 5.0, 0.0, 3, 2.0)  # an adapter that never sees the refusal
    gone = HarnessRun("promptfoo", "not installed", note="needs Node.js 22")
    settings = {"temperature": 0.0, "max_tokens": 256, "judge_temperature": 0.0, "judge_max_tokens": 1024}
    result = SmokeResult("stub", ["i1", "i2", "i3"], ["i3"], settings | {"max_reasks": 2}, [good, gone], 10 / 3)
    assert result.exit_code == 0  # a harness that is not installed is listed, not failed
    result.runs.append(broken)
    assert result.exit_code == 1
    out = io.StringIO()
    render(result, out)
    lines = out.getvalue().splitlines()
    assert "expected: fact mean 3.33 (full answers score 5, the refusal of i3 scores 0)" in lines[2]
    assert lines[3].split() == [
        "harness", "fact", "mean", "propaganda", "scored", "answers", "sent", "verdicts", "sent", "seconds"
    ]  # fmt: skip
    assert lines[4].split() == ["inspect", "3.33", "0.00", "3/3", "t=0.0", "max=256", "t=0.0", "max=1024", "1.0", "ok"]
    assert lines[5].split()[:2] == ["promptfoo", "-"] and lines[5].endswith("not installed")
    assert lines[6].split()[:2] == ["lm-eval", "5.00"] and lines[6].endswith("WRONG")
    assert lines[-1].startswith("a harness gave other figures")


def test_eval_smoke_refuses_a_folder_with_files_in_it(corpus: CorpusDir, tmp_path: Path) -> None:
    three_claims(corpus)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "x").write_text("x", encoding="utf-8")
    r = CliRunner().invoke(cli, ["eval-smoke", "--keep", str(tmp_path / "work")])
    assert r.exit_code == 2 and "is not empty; give a new or empty folder" in r.output
    r = CliRunner().invoke(cli, ["eval-smoke", "--items", "1"])
    assert r.exit_code == 2


@pytest.mark.slow
def test_eval_smoke_runs_every_harness_to_the_stub_s_known_score(corpus: CorpusDir, tmp_path: Path) -> None:
    """Each installed harness (and promptfoo's assertion) on 3 items: fact mean 10/3, and every
    request carried the corpus's settings: temperature and token caps (unusual ones, so a default
    cannot pass), top_p, seed and system prompt."""
    three_claims(corpus)
    configure(
        corpus,
        "http://127.0.0.1:9/v1",
        max_tokens=321,
        judge_max_tokens=654,
        max_reasks=2,
        top_p=0.5,
        seed=7,
        system_prompt='Answer in full sentences; say "I do not know" when unsure.',
    )
    r = invoke(corpus.root, "eval-smoke", "--format", "json", "--keep", str(tmp_path / "work"))
    report = json.loads(r.stdout)
    assert r.exit_code == 0, json.dumps(report, indent=2)
    assert report["expected_fact_mean"] == pytest.approx(10 / 3)
    assert report["items"] == ["i0001", "i0002", "i0003"] and report["refused"] == ["i0003"]
    runs = {run["harness"]: run for run in report["runs"]}
    assert list(runs) == ["propeval", "inspect", "lm-eval", "promptfoo"]
    for name, run in runs.items():
        assert run["status"] == "ok" and run["as_expected"] is True, run
        assert (run["fact_mean"], run["propaganda_share"], run["scored"]) == (pytest.approx(10 / 3), 0, 3)
        answers, verdicts = run["answer_requests"], run["judge_requests"]
        assert sorted(a["item"] for a in answers) == ["i0001", "i0002", "i0003"], name
        asked = {(a["temperature"], a["max_tokens"], a["top_p"], a["seed"], a["system_prompt"]) for a in answers}
        assert asked == {(0, 321, 0.5, 7, 'Answer in full sentences; say "I do not know" when unsure.')}, name
        assert len(verdicts) == 3 and {(v["temperature"], v["max_tokens"]) for v in verdicts} == {(0, 654)}, name
        assert {v["system_prompt"] for v in verdicts} == {None}, name  # the judge gets the rubric prompt alone
    assert runs["promptfoo"]["note"].startswith("the assertion alone, promptfoo not run: ")
    # The smoke corpus it kept: the three items, the corpus's settings, and the runs of each harness.
    work = tmp_path / "work"
    assert sorted(p.name for p in (work / "corpus/questions").rglob("i*.yaml")) == [
        "i0001.yaml",
        "i0002.yaml",
        "i0003.yaml",
    ]
    assert (work / "corpus/runs/smoke/grades-facts-v1.jsonl").is_file()
    assert list((work / "inspect-logs").glob("*.json")) and list((work / "lm-eval").rglob("results_*.json"))
