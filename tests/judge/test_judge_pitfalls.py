# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""The eval's known pitfalls as checks: mixed judges refused, sampling settings
recorded and compared, truncated answers counted, bootstrap intervals, knowledge cutoffs,
tokens and cost; through the real CLI against one loopback server playing two models and two
judges."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import CLAIM2_FACTS, configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.config import load_config
from propeval.judge.bootstrap import mean_ci
from propeval.judge.client import read_finish, read_usage
from propeval.judge.compare import RunInfo, compare
from propeval.judge.loopback import Reply, Seen, fact_ids, facts_verdict, is_judge_request
from propeval.release import load_inputs
from propeval.report import summarise_runs
from propeval.workspace import Workspace
from serverkit import loopback  # noqa: F401  (fixture)

HOSTILE_USAGE = {"prompt_tokens": True, "completion_tokens": -5, "total_tokens": "lots"}

MORE_TOML = """
[tool.propeval.judge.prices]
model-a = [1.0, 2.0]
model-b = [3.0, 6.0]
judge-x = [0.5, 1.0]
judge-y = [0.5, 1.0]

[tool.propeval.judge.endpoints.b]
base_url = "{base_url}"
model = "model-b"
max_tokens = 512
knowledge_cutoff = "2024-01"
"""


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def two_models_two_judges(seen: Seen) -> Reply:
    """model-a answers in full; model-b runs out of tokens on the riot question and sends hostile
    usage on the Chinese one. judge-x finds every fact stated, judge-y every fact missed."""
    model = seen.body.get("model")
    if not is_judge_request(seen):
        if model == "model-b" and "riot" in seen.last:
            return Reply("The riot was", finish_reason="length")
        if model == "model-b" and "第二" in seen.last:
            return Reply("一个回答", usage=HOSTILE_USAGE)
        return Reply("Troops fired on civilians; no death toll was published.")
    return Reply(facts_verdict(fact_ids(seen), "stated" if model == "judge-x" else "missed"))


def setup_runs(corpus: Any, loopback: Any) -> Any:
    """Runs a-jx, b-jx (judge-x) and a-jy, b-jy (the same answers, judge-y): two models, two
    judges, two sampling settings."""
    corpus.claim("c0002", facts=CLAIM2_FACTS, categories="[state_ideology]", source_date='"2023-03-01"')
    srv = loopback(two_models_two_judges)
    configure(corpus, srv.base_url, model="model-a", bootstrap_draws=200)
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(MORE_TOML.format(base_url=srv.base_url))
    # "b" declares its own answer cap (512) and knowledge cutoff; its run sets every other setting
    assert invoke("answer", "--run-id", "a-jx").exit_code == 0
    r = invoke(
        "answer",
        *("--endpoint", "b", "--run-id", "b-jx", "--temperature", "0.7", "--top-p", "0.9", "--seed", "7"),
        *("--reasoning-effort", "high", "--thinking", "off", "--system-prompt", "Answer briefly."),
    )
    assert r.exit_code == 0, r.output
    runs = corpus.root / "runs"
    for model in ("a", "b"):
        shutil.copytree(runs / f"{model}-jx", runs / f"{model}-jy", ignore=shutil.ignore_patterns(".*"))
        for run, judge in ((f"{model}-jx", "judge-x"), (f"{model}-jy", "judge-y")):
            assert invoke("grade", run, "--rubric", "facts-v1", "--judge-model", judge).exit_code == 0
    return srv


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_pitfalls_through_the_cli(judge_corpus: Any, loopback: Any) -> None:
    srv = setup_runs(judge_corpus, loopback)
    runs = judge_corpus.root / "runs"

    # Every sampling setting is sent and recorded; none is sent when unset.
    asked_b = [s.body for s in srv.seen if s.body.get("model") == "model-b"]
    assert {(b["max_tokens"], b["top_p"], b["seed"], b["reasoning_effort"]) for b in asked_b} == {(512, 0.9, 7, "high")}
    assert all(b["chat_template_kwargs"] == {"enable_thinking": False} for b in asked_b)
    assert all(b["messages"][0] == {"role": "system", "content": "Answer briefly."} for b in asked_b)
    asked_a = [s.body for s in srv.seen if s.body.get("model") == "model-a"]
    assert all(b["max_tokens"] == 32768 and "top_p" not in b and "seed" not in b for b in asked_a)
    meta = json.loads((runs / "b-jx/run.json").read_text())
    assert meta["knowledge_cutoff"] == "2024-01"
    assert meta["settings"] == {
        "temperature": 0.7,
        "max_tokens": 512,
        "top_p": 0.9,
        "seed": 7,
        "reasoning_effort": "high",
        "thinking": "off",
        "system_prompt": "Answer briefly.",
    }
    # finish_reason length is recorded as truncated; hostile usage is refused, named, never summed
    answers = {a["item_id"]: a for a in records(runs / "b-jx/answers.jsonl")}
    assert answers["i0002"]["finish_reason"] == "length" and answers["i0002"]["truncated"] is True
    assert answers["i0003"]["usage"] is None
    assert answers["i0003"]["anomalies"] == [
        "usage.prompt_tokens is 'True', not an integer 0-10000000; tokens not counted"
    ]
    grade = records(runs / "a-jx/grades-facts-v1.jsonl")[0]  # graded first: no response-cache hit
    assert grade["judge_settings"] == {"temperature": 0.0, "max_tokens": 1024}
    assert len(grade["usage"]) == 1 and grade["usage"][0]["total_tokens"] > 0

    # Different judges: refused, each difference named, no table; exit 1
    r = invoke("score", "a-jx", "b-jx", "a-jy")
    assert r.exit_code == 1 and r.stdout == ""
    assert "score: refused: judge model differs between runs (a-jx, b-jx: judge-x; a-jy: judge-y)" in r.stderr
    assert "--allow-mixed" in r.stderr

    # --allow-mixed: side by side, labelled by judge group, never pooled; every pitfall flagged
    r = invoke("score", "a-jx", "b-jx", "a-jy", "b-jy", "--allow-mixed")
    assert r.exit_code == 0, r.output
    out = r.stdout.splitlines()
    assert out[1].split()[:12] == [
        *("run", "model", "judge", "settings", "items", "unanswered", "truncated"),
        *("unscored", "ungraded", "fact", "mean", "95%"),
    ]
    assert out[2].split()[:10] == ["a-jx", "model-a", "J1", "S1", "3", "0", "0", "0", "0", "5.00"]
    assert out[3].split()[:10] == ["b-jx", "model-b", "J1", "S2", "3", "0", "1", "0", "0", "5.00"]
    assert out[4].split()[:10] == ["a-jy", "model-a", "J2", "S1", "3", "0", "0", "0", "0", "0.00"]
    text = r.stdout
    assert "judge group J1: question type" in text and "judge group J2: question type" in text
    assert "  J1: judge judge-x; judge settings temperature 0.0, max_tokens 1024; rubric 1.0.0 (" in text
    assert "  ! MIXED (--allow-mixed): judge model differs between runs" in text
    assert (
        "  ! sampling settings differ between runs (temperature: S1 0.0, S2 0.7; top_p: S1 -, S2 0.9; max_tokens"
        in text
    )
    assert "  ! run b-jx: 1 of 3 answers (33.3%) stopped at the token cap (max_tokens 512" in text
    assert "  ! run b-jx: the server's replies had 1 usage or finish_reason anomaly" in text
    # b declares a cutoff of 2024-01: its 2023 source is scored apart from the 2024 ones
    cut = [line.split() for line in out if line.startswith("b-jx ") and "2024-01" in line]
    assert [c[2:6] for c in cut] == [["before", "cutoff", "1", "5.00"], ["after", "cutoff", "2", "5.00"]]
    report = json.loads(invoke("score", "a-jx", "b-jx", "a-jy", "b-jy", "--allow-mixed", "--format", "json").stdout)
    a_jx = report["provenance"][0]
    t = a_jx["tokens"]
    assert t["answer_calls"] == 3 and t["answer_prompt_tokens"] > 0 and t["judge_calls"] == 3
    expected = (t["answer_prompt_tokens"] * 1 + t["answer_completion_tokens"] * 2) / 1e6
    expected += (t["judge_prompt_tokens"] * 0.5 + t["judge_completion_tokens"] * 1) / 1e6
    assert a_jx["cost"] == pytest.approx(expected)
    ci = report["runs"][0]["ci"]
    assert ci == {"fact_mean": [5.0, 5.0], "propaganda_share": [0.0, 0.0]}
    assert report["confidence"]["draws"] == 200 and report["runs"][0]["too_small"] is True

    # `report` refuses the same mix: the rubric is left out, each difference named, exit 1
    r = invoke("report", "--out", str(judge_corpus.root / "report.html"))
    assert r.exit_code == 1
    assert "[mixed-comparison] judge model differs between runs (a-jx, b-jx: judge-x; a-jy, b-jy: judge-y)" in r.stderr
    assert "(rubric facts-v1 left out of the report)" in r.stderr
    assert "Refused: judge model differs" in (judge_corpus.root / "report.html").read_text(encoding="utf-8")
    # --allow-mixed: each model labelled by its judge group; truncated answers counted apart
    mixed = summarise_runs(load_inputs(Workspace(load_config(judge_corpus.root))), allow_mixed=True)
    cells = {(c["model"], c["language"]): c for p in mixed.panels() for c in p.cells}
    assert set(cells) == {(f"model-{m} [J{j}]", lang) for m in "ab" for j in (1, 2) for lang in ("en", "zh")}
    assert cells[("model-b [J1]", "en")]["truncated"] == 1 and cells[("model-a [J1]", "en")]["truncated"] == 0
    assert any(w.rule == "run-pitfall" and "stopped at the token cap" in w.message for w in mixed.warnings)


def test_judge_settings_and_rubric_versions_are_refused_and_settings_flagged() -> None:
    def info(run: str, **over: Any) -> RunInfo:
        base: dict[str, Any] = {
            "judge": ["judge-x"],
            "judge_settings": ["temperature 0.0, max_tokens 1024"],
            "rubric": ["1.0.0 (aaaa)"],
            "sampling": {"temperature": 0.0, "max_tokens": 32768},
        }
        base.update(over)
        return RunInfo(run, "m", **base)

    c = compare(
        [
            info("r1"),
            info("r2", judge_settings=["temperature 0.7, max_tokens 1024"], sampling={"temperature": 1.0}),
            info("r3", rubric=["1.1.0 (bbbb)", "1.0.0 (aaaa)"]),
        ],
        truncated_warn_share=0.05,
    )
    assert c.refusals[0].startswith("run r3 mixes rubric versions within itself (1.1.0 (bbbb) | 1.0.0 (aaaa))")
    assert any(r.startswith("judge settings differs between runs (r1, r3: temperature 0.0") for r in c.refusals)
    assert any(r.startswith("rubric version differs between runs") for r in c.refusals)
    assert c.groups == {"r1": "J1", "r2": "J2", "r3": "J3"}
    assert c.settings_groups == {"r1": "S1", "r2": "S2", "r3": "S1"}
    assert c.flags[0].startswith("sampling settings differ between runs (temperature: S1 0.0, S2 1.0; max_tokens")


@pytest.mark.parametrize(
    ("usage", "recorded", "anomaly"),
    [
        (
            {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
            {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
            None,
        ),
        (None, None, "the reply has no usage"),
        ([1, 2], None, "usage is list, not an object"),
        ({"prompt_tokens": 1.5, "completion_tokens": 1}, None, "usage.prompt_tokens is '1.5'"),
        ({"prompt_tokens": 1, "completion_tokens": 10**12}, None, "usage.completion_tokens is '1000000000000'"),
        ({"prompt_tokens": 1, "completion_tokens": "2"}, None, "usage.completion_tokens is '2'"),
        (
            {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 99},
            {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
            "usage.total_tokens '99' is not prompt + completion",
        ),
        (
            {"prompt_tokens": 1, "completion_tokens": 900},
            {"prompt_tokens": 1, "completion_tokens": 900, "total_tokens": 901},
            "usage.completion_tokens 900 is over max_tokens 512",
        ),
        (
            {"prompt_tokens": 1, "completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 7}},
            {"prompt_tokens": 1, "completion_tokens": 9, "total_tokens": 10, "reasoning_tokens": 7},
            None,
        ),
    ],
)
def test_usage_is_checked(usage: Any, recorded: Any, anomaly: str | None) -> None:
    got, notes = read_usage(usage, 512)
    assert got == recorded
    assert notes[0].startswith(anomaly) if anomaly else notes == [], notes


def test_finish_reason_outside_the_protocol_is_kept_as_other() -> None:
    assert read_finish("length") == ("length", [])
    assert read_finish("eos_token") == (
        "other",
        [
            "finish_reason 'eos_token' is not one of stop, length, content_filter, tool_calls, function_call; kept as 'other'"
        ],
    )


def test_bootstrap_interval() -> None:
    # one run, items 0/1 half each: the interval straddles 0.5 and is reproducible by its seed
    one = {"r": {f"i{k}": float(k % 2) for k in range(40)}}
    lo, hi = mean_ci(one, draws=500, seed=1) or (0, 0)
    assert 0.3 < lo < 0.5 < hi < 0.7 and mean_ci(one, draws=500, seed=1) == (lo, hi)
    # two runs that disagree completely: resampling runs widens the interval to both ends
    two = {"r1": dict.fromkeys(one["r"], 0.0), "r2": dict.fromkeys(one["r"], 1.0)}
    assert mean_ci(two, draws=500, seed=1) == (0.0, 1.0)
    assert mean_ci({"r": {"i": 1.0}}, draws=500, seed=1) is None


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[tool.propeval.judge.endpoints.x]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
            'knowledge_cutoff = "2024-13"\n',
            "[tool.propeval.judge.endpoints.x] knowledge_cutoff = '2024-13' must be a date YYYY-MM or YYYY-MM-DD",
        ),
        (
            "[tool.propeval.judge]\nprices = { m = [1] }\n",
            "[tool.propeval.judge] prices ['m'] must be [input, output] prices per 1M tokens",
        ),
    ],
)
def test_bad_pitfall_settings_are_config_errors(corpus: Any, toml: str, message: str) -> None:
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n" + toml)
    r = invoke("score", "nope")
    assert r.exit_code == 2
    assert message in r.output
