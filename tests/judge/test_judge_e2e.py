# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""answer -> grade -> score through the CLI against a loopback chat-completions server."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import configure, judge_corpus, lines  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, fact_ids, facts_verdict, is_judge_request
from serverkit import loopback  # noqa: F401  (fixture)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def records(path: Any) -> list[dict[str, Any]]:
    return [json.loads(x) for x in lines(path)]


@pytest.mark.slow
def test_answer_grade_score_end_to_end(judge_corpus: Any, loopback: Any) -> None:
    srv = loopback()
    configure(judge_corpus, srv.base_url)
    r = invoke("answer", "--run-id", "r1", "--temperature", "0.3", "--max-tokens", "64")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "answered run r1: 3 item(s), 0 already done; 3 answered",
        "runs/r1/answers.jsonl",
    ]
    answers = records(judge_corpus.root / "runs/r1/answers.jsonl")
    assert sorted(a["item_id"] for a in answers) == ["i0001", "i0002", "i0003"]  # i0004 is retired
    a1 = next(a for a in answers if a["item_id"] == "i0001")
    assert a1["model"] == "answer-model"
    assert a1["settings"] == {
        "temperature": 0.3,
        "max_tokens": 64,
        "top_p": None,
        "seed": None,
        "reasoning_effort": None,
        "thinking": None,
        "system_prompt": None,
    }
    assert a1["finish_reason"] == "stop" and a1["truncated"] is False
    assert a1["usage"]["total_tokens"] == a1["usage"]["prompt_tokens"] + a1["usage"]["completion_tokens"]
    assert a1["item_hash"].startswith("sha256:") and a1["claim_hash"].startswith("sha256:")
    assert a1["status"] == "answered" and a1["answer"].startswith("An answer to: What happened")
    assert a1["item"] == {
        "language": "en",
        "framing": "neutral",
        "question_type": "named_fact",
        "categories": ["freedom_of_expression"],
        "source_date": "2024-05-01",
    }
    # a single user turn, no system prompt, the configured settings
    asked = [s.body for s in srv.seen]
    assert all(b["messages"] == [{"role": "user", "content": b["messages"][0]["content"]}] for b in asked)
    assert {b["temperature"] for b in asked} == {0.3} and {b["max_tokens"] for b in asked} == {64}
    assert all("response_format" not in b for b in asked)
    run = json.loads((judge_corpus.root / "runs/r1/run.json").read_text())
    assert run["model"] == "answer-model" and run["corpus"] == {"items": 3}

    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge-model", "judge-model")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "graded run r1: 3 item(s), 0 already done; 3 scored",
        "runs/r1/grades-facts-v1.jsonl",
    ]
    grades = {g["item_id"]: g for g in records(judge_corpus.root / "runs/r1/grades-facts-v1.jsonl")}
    g3 = grades["i0003"]
    assert g3["fact_states"] == {"f1": "stated", "f2": "stated", "f3": "stated"}
    assert (g3["fact_score"], g3["propaganda"], g3["status"], g3["attempts"]) == (5, 0, "scored", 1)
    assert g3["judge_model"] == "judge-model" and g3["model"] == "answer-model"
    assert g3["rubric"] == "facts-v1" and g3["rubric_version"] == "1.0.0"
    assert g3["rubric_hash"].startswith("sha256:") and g3["prompt_hash"].startswith("sha256:")
    judge_bodies = [s.body for s in srv.seen if is_judge_request(s)]
    schema = judge_bodies[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["facts"]["minItems"] == schema["properties"]["facts"]["maxItems"]

    r = invoke("score", "r1")
    assert r.exit_code == 0, r.output
    out = r.stdout.splitlines()
    assert out[:3] == [
        "rubric facts-v1",
        "run         model  judge  settings  items  unanswered  truncated  unscored  ungraded  fact mean"
        "        95% CI  propaganda        95% CI",
        "r1   answer-model     J1        S1      3           0          0         0         0       5.00"
        "  [5.00, 5.00]        0.0%  [0.0%, 0.0%]",
    ]
    assert "language  counted  fact mean        95% CI  propaganda        95% CI             note" in out
    assert "zh              1       5.00             -        0.0%             -  too small (<30)" in out

    # a rerun skips everything already finished and asks nothing
    before = len(srv.seen)
    r = invoke("grade", "r1", "--rubric", "facts-v1")
    assert r.stdout.splitlines()[0] == "graded run r1: 3 item(s), 3 already done; nothing new"
    r = invoke("answer", "--run-id", "r1", "--temperature", "0.3", "--max-tokens", "64")
    assert r.stdout.splitlines()[0] == "answered run r1: 3 item(s), 3 already done; nothing new"
    assert len(srv.seen) == before


def test_resuming_with_other_settings_is_refused(judge_corpus: Any, loopback: Any) -> None:
    srv = loopback()
    configure(judge_corpus, srv.base_url)
    assert invoke("answer", "--run-id", "r1", "--item", "i0001").exit_code == 0
    r = invoke("answer", "--run-id", "r1", "--temperature", "0.9")
    assert r.exit_code == 2
    assert "run 'r1' was answered with settings" in r.output


def test_unanswered_is_recorded_and_scored_zero(judge_corpus: Any, loopback: Any) -> None:
    def script(seen: Seen) -> Reply:
        if is_judge_request(seen):
            return Reply(facts_verdict(fact_ids(seen)))
        if "第二" in seen.prompt:  # only reasoning, no final text
            return Reply("", reasoning="thinking about it")
        if "riot" in seen.prompt:
            return Reply("<think>hidden chain</think>\n  Final words.")
        return Reply("Troops fired.", reasoning="secret reasoning")

    srv = loopback(script)
    configure(judge_corpus, srv.base_url)
    r = invoke("answer", "--run-id", "r1")
    answers = {a["item_id"]: a for a in records(judge_corpus.root / "runs/r1/answers.jsonl")}
    assert answers["i0001"]["answer"] == "Troops fired."
    assert answers["i0002"]["answer"] == "Final words."
    assert answers["i0003"]["status"] == "unanswered" and answers["i0003"]["answer"] is None
    assert r.stdout.splitlines()[0] == "answered run r1: 3 item(s), 0 already done; 2 answered, 1 unanswered"
    judged_before = sum(is_judge_request(s) for s in srv.seen)
    assert judged_before == 0
    invoke("grade", "r1", "--rubric", "facts-v1")
    grades = {g["item_id"]: g for g in records(judge_corpus.root / "runs/r1/grades-facts-v1.jsonl")}
    assert grades["i0003"]["status"] == "unanswered"
    assert (grades["i0003"]["fact_score"], grades["i0003"]["propaganda"]) == (0, 0)
    assert sum(is_judge_request(s) for s in srv.seen) == 2  # the unanswered item was never sent to the judge
    r = invoke("score", "r1", "--format", "json")
    report = json.loads(r.stdout)
    run = report["runs"][0]
    assert (run["items"], run["counted"], run["unanswered"]) == (3, 3, 1)
    assert run["fact_mean"] == (5 + 5 + 0) / 3


def test_audit_rubric_end_to_end(judge_corpus: Any, loopback: Any) -> None:
    srv = loopback(default_script)
    configure(judge_corpus, srv.base_url)
    invoke("answer", "--run-id", "r1")
    r = invoke("grade", "r1", "--rubric", "audit-v1")
    assert r.stdout.splitlines()[0] == "graded run r1: 3 item(s), 0 already done; 3 scored"
    g = records(judge_corpus.root / "runs/r1/grades-audit-v1.jsonl")[0]
    assert (g["accuracy"], g["propaganda_inclusion"], g["tone"]) == ("Correct", 0, "Neutral")
    r = invoke("score", "r1", "--rubric", "audit-v1")
    out = r.stdout.splitlines()
    assert "accuracy (share [95% CI])" in out
    i = out.index("accuracy (share [95% CI])")
    head = ["model", "language", "scored", "truncated", "Correct", "Partial", "Misleading", "Refusal", "note"]
    assert out[i + 1].split() == head
    assert out[i + 2].split() == [
        *("answer-model", "en", "2", "0", "100.0%", "[100.0%,", "100.0%]", "0.0%", "[0.0%,", "0.0%]"),
        *("0.0%", "[0.0%,", "0.0%]", "0.0%", "[0.0%,", "0.0%]", "too", "small", "(<30)"),
    ]


@pytest.mark.slow
def test_starter_corpus_end_to_end(corpus: Any, loopback: Any) -> None:
    """The real starter corpus (every active item) through answer -> grade -> score."""
    import shutil

    from judgekit import add_rubrics

    from helpers import REPO

    shutil.copytree(REPO / "questions", corpus.root / "questions", dirs_exist_ok=True)
    add_rubrics(corpus)
    srv = loopback()
    configure(corpus, srv.base_url, concurrency=8)
    active = sum(
        1 for p in (corpus.root / "questions").rglob("i*.yaml") if "status: active" in p.read_text(encoding="utf-8")
    )
    r = invoke("answer", "--run-id", "starter")
    assert r.stdout.splitlines()[0] == f"answered run starter: {active} item(s), 0 already done; {active} answered"
    r = invoke("grade", "starter", "--rubric", "facts-v1")
    assert r.stdout.splitlines()[0] == f"graded run starter: {active} item(s), 0 already done; {active} scored"
    grades = records(corpus.root / "runs/starter/grades-facts-v1.jsonl")
    assert len({g["item_id"] for g in grades}) == active
    assert {g["status"] for g in grades} == {"scored"}
    r = invoke("score", "starter")
    assert r.exit_code == 0, r.output
    row = r.stdout.splitlines()[2].split()
    assert row[:5] == ["starter", "answer-model", "J1", "S1", str(active)]
    for lang in ("en", "zh", "ru", "uk", "de"):
        assert any(line.startswith(lang + " ") for line in r.stdout.splitlines()), lang


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b'{"run_id": "r1", "model": ', "1:27 [json-syntax] Expecting value; the file is damaged"),
        (b'["r1"]\n', "1:1 [not-a-mapping] file holds a list, not a mapping of fields"),
        (b'{"model": "m"}\n\xff\n', "2:1 [encoding] not valid UTF-8 at byte offset 15; the file is damaged"),
    ],
)
def test_a_damaged_run_json_is_named_with_its_fix(judge_corpus: Any, loopback: Any, text: bytes, why: str) -> None:
    """run.json is read by runs.run_meta (the standard parser), and a damaged one stops `answer`."""
    configure(judge_corpus, loopback().base_url)
    path = judge_corpus.root / "runs/r1/run.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(text)
    r = invoke("answer", "--run-id", "r1")
    assert r.exit_code == 2
    assert r.output == f"propeval: error: runs/r1/run.json:{why}; remove {path} or pick a new --run-id\n"


def test_a_checkout_that_moved_its_endpoint_is_refused_unless_trusted(
    judge_corpus: Any, loopback: Any, in_git: Any
) -> None:
    """A pull request's checkout points the answer endpoint elsewhere: `answer` (and `grade`) would
    send the API key there. Refused, naming the key, until the user says they trust it."""
    theirs = loopback()
    configure(judge_corpus, "https://api.example.org/v1", key_env="PROPEVAL_TEST_API_KEY")
    in_git("add", "-A")
    in_git("commit", "-qm", "main")
    in_git("checkout", "-qb", "pr")
    configure(judge_corpus, theirs.base_url, key_env="PROPEVAL_TEST_API_KEY")
    in_git("commit", "-qam", "a faster endpoint")
    for args in (
        ("answer", "--run-id", "r1", "--base", "main"),
        ("grade", "r1", "--rubric", "facts-v1", "--base", "main"),
    ):
        r = invoke(*args)
        assert r.exit_code == 2, r.output
        assert "this checkout changes where requests and API keys go since it forked from main" in r.output
        assert "judge.endpoints" in r.output and "--trust-endpoints" in r.output
    assert theirs.seen == []
    os.environ["PROPEVAL_TEST_API_KEY"] = "sk-test"
    try:
        r = invoke("answer", "--run-id", "r1", "--base", "main", "--trust-endpoints")
    finally:
        del os.environ["PROPEVAL_TEST_API_KEY"]
    assert r.exit_code == 0, r.output
    assert theirs.seen
