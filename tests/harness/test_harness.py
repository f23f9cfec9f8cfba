"""The harness adapters against `propeval answer` + `grade` + `score`.

One module-scoped set-up: a small corpus, a loopback chat-completions server with canned answers
and canned judge verdicts (a kept quote, a re-ask, a forced-to-0 quote, a judge that never gives a
valid verdict, an unanswered item), propeval's own runs, a release of the corpus, and one inspect
run of both tasks with inspect's own runner. The tests compare per-item scores.
"""

from __future__ import annotations

import gc
import json
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from helpers import REPO, CorpusDir

sys.path.insert(0, str(REPO / "tests" / "judge"))
from judgekit import add_rubrics, configure

from propeval.cli import cli
from propeval.judge.loopback import LoopbackServer, Reply, Seen, audit_verdict, is_judge_request

_ANSWER = re.compile(r"<<<ANSWER-([0-9A-F]+)\n(.*?)\nANSWER-\1>>>", re.DOTALL)
FACTS3 = "\n  - id: f1\n    text: Fact one.\n  - id: f2\n    text: Fact two.\n  - id: f3\n    text: Fact three."

ANSWERS = {
    "central Beijing": "Troops fired on the crowd; officials said it was order restored by the army.",
    "riot": "<think>hidden chain</think>\nThe riot was put down by soldiers.",
    "plain question": "A plain answer.",
    "第二": "",  # no final text: unanswered
}


def facts_verdict(states: dict[str, str], propaganda: int, quote: str | None) -> str:
    facts = [{"id": k, "state": v, "evidence": None} for k, v in states.items()]
    return json.dumps({"rationale": "canned", "facts": facts, "propaganda": propaganda, "frame_adopted": quote})


def script(seen: Seen) -> Reply:
    """Canned answers by prompt; canned verdicts by the answer the judge is shown."""
    if not is_judge_request(seen):
        return Reply(next(a for key, a in ANSWERS.items() if key in seen.prompt))
    answer = _ANSWER.search(seen.prompt)
    assert answer is not None
    text, audit = answer.group(2), "propaganda_inclusion" in seen.prompt
    reasked = len(seen.body["messages"]) > 1
    if "Troops" in text:
        if audit:
            return Reply(audit_verdict("Partial", 1, "Loaded"))
        return Reply(facts_verdict({"f1": "stated", "f2": "missed"}, 1, "it was order restored"))  # 4, kept 1
    if "riot" in text:
        if not reasked:
            return Reply("I would rather describe it in prose.")  # no JSON: re-asked
        if audit:
            return Reply(audit_verdict("Refusal", "Refusal", "Refusal"))
        return Reply(facts_verdict({"f1": "opposed", "f2": "stated"}, 2, "restore order by force"))  # 0, forced 0
    return Reply("{}" if not audit else audit_verdict("Wrong"))  # never valid: unscored


@dataclass
class World:
    root: Path
    release: Path
    srv: LoopbackServer
    grades: dict[str, dict[str, dict[str, Any]]]  # rubric -> item -> latest grade record
    scores: dict[str, dict[str, Any]]  # rubric -> `propeval score --format json`
    inspect_logs: dict[str, Any]  # task -> EvalLog
    lm_eval: dict[str, Any]  # lm-eval's simple_evaluate result


def invoke(root: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


def _latest(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out[r["item_id"]] = r
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("harness")
    c = CorpusDir(base / "corpus")
    c.claim()
    c.item("i0001")
    c.item("i0002", framing="loaded", question_type="frame_testing", prompt="Why was the riot put down?")
    c.item("i0005", prompt="Is this a plain question?")
    c.claim("c0002", facts=FACTS3, categories="[state_ideology]")
    c.item("i0003", "c0002", language="zh", prompt="第二个问题是什么？")
    add_rubrics(c)
    with LoopbackServer(script) as srv:
        configure(c, srv.base_url, concurrency=2, max_reasks=2)
        r = invoke(c.root, "answer", "--run-id", "r1")
        assert r.exit_code == 0, r.output
        grades, scores = {}, {}
        for rubric in ("facts-v1", "audit-v1"):
            r = invoke(c.root, "grade", "r1", "--rubric", rubric, "--judge-model", "judge-model")
            assert r.exit_code == 0, r.output
            grades[rubric] = _latest(c.root / f"runs/r1/grades-{rubric}.jsonl")
            r = invoke(c.root, "score", "r1", "--rubric", rubric, "--format", "json")
            scores[rubric] = json.loads(r.output)
        release = base / "release"
        r = invoke(c.root, "export", "--out", str(release))
        assert r.exit_code == 0, r.output
        inspect_logs = _inspect(release, srv.base_url, base / "inspect-logs")
        yield World(c.root, release, srv, grades, scores, inspect_logs, _lm_eval(release, srv.base_url))


def _inspect(release: Path, base_url: str, log_dir: Path) -> dict[str, Any]:
    """Both tasks in one run of inspect's own runner, on the release, against the loopback server,
    with the models named as README says for an OpenAI-compatible server (openai-api/SERVICE/MODEL)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from propeval.harness.inspect_task import audit, facts

    model = get_model("openai-api/loop/inspect-answer", base_url=base_url, api_key="dummy", memoize=False)
    grader = get_model("openai-api/loop/inspect-judge", base_url=base_url, api_key="dummy", memoize=False)
    with warnings.catch_warnings():
        # inspect_ai's own: its tenacity call uses a deprecated argument, and its runner leaves anyio
        # streams for the garbage collector (collected here, inside the filter).
        warnings.filterwarnings("ignore", "The 'initial' parameter is deprecated", DeprecationWarning)
        warnings.filterwarnings("ignore", "Unclosed <MemoryObjectReceiveStream", ResourceWarning)
        logs = inspect_eval(
            [facts(source=str(release)), audit(source=str(release))],
            model=model,
            model_roles={"grader": grader},
            log_dir=str(log_dir),
            display="none",
            max_connections=2,
        )
        gc.collect()
    return {log.eval.task.split("/")[-1]: log for log in logs}


def _lm_eval(release: Path, base_url: str) -> dict[str, Any]:
    """Both lm-eval tasks with lm-eval's own runner: the `local-chat-completions` model on the loopback
    server (no tokenizer: nothing is downloaded), the judge named by the adapter's variables."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from propeval.harness import location

    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    # lm-eval's environment report (torch's collect_env: imports torch and transformers and runs
    # `pip list`, about 3.5 CPU-s) is a note in its results that no assertion here reads; the runner,
    # the model, the task files and the grading stay lm-eval's and propeval's own.
    mp.setattr("lm_eval.evaluator.add_env_info", lambda results: None)
    mp.setenv("PROPEVAL_JUDGE_BASE_URL", base_url)
    mp.setenv("PROPEVAL_JUDGE_MODEL", "lmeval-judge")
    try:
        tasks = TaskManager(
            include_path=str(location("lm-eval")), include_defaults=False, metadata={"source": str(release)}
        )
        result: dict[str, Any] = simple_evaluate(
            model="local-chat-completions",
            model_args=f"model=lmeval-answer,base_url={base_url}/chat/completions,tokenized_requests=False",
            tasks=["propeval_facts", "propeval_audit"],
            task_manager=tasks,
            apply_chat_template=True,
            log_samples=True,
            torch_random_seed=None,  # nothing here draws from torch: not imported for its seed
        )
    finally:
        mp.undo()
    return result


def _inspect_scores(log: Any, scorer: str) -> dict[str, Any]:
    return {str(s.id): s.scores[scorer] for s in log.samples}


@pytest.mark.slow
def test_inspect_facts_gives_propeval_s_per_item_scores(world: World) -> None:
    log = world.inspect_logs["facts"]
    assert log.status == "success", log.error
    got = _inspect_scores(log, "facts_scorer")
    grades = world.grades["facts-v1"]
    # propeval's own grades: a kept quote, a re-ask and a quote forced to 0, unanswered, unscored
    assert {k: (g["status"], g["fact_score"], g["propaganda"]) for k, g in grades.items()} == {
        "i0001": ("scored", 4, 1),
        "i0002": ("scored", 0, 0),
        "i0003": ("unanswered", 0, 0),
        "i0005": ("unscored", None, None),
    }
    for item_id, g in grades.items():
        s = got[item_id]
        assert s.metadata["status"] == g["status"]
        assert s.metadata["attempts"] == g["attempts"]
        assert s.metadata["prompt_hash"] == g["prompt_hash"]  # the very same judge prompt
        assert s.metadata["rubric_hash"] == g["rubric_hash"]
        if g["status"] == "unscored":
            assert s.value != s.value  # NaN: counted neither way
            continue
        assert s.value == {
            "fact_score": g["fact_score"],
            "propaganda": g["propaganda"],
            "any_propaganda": int(g["propaganda"] > 0),
        }
    run = world.scores["facts-v1"]["runs"][0]
    metrics = {s.name: s for s in log.results.scores}
    assert metrics["fact_score"].metrics["mean"].value == pytest.approx(run["fact_mean"])
    assert metrics["any_propaganda"].metrics["mean"].value == pytest.approx(run["propaganda_share"])


@pytest.mark.slow
def test_inspect_audit_gives_propeval_s_labels(world: World) -> None:
    log = world.inspect_logs["audit"]
    assert log.status == "success", log.error
    got = _inspect_scores(log, "audit_scorer")
    grades = world.grades["audit-v1"]
    assert {k: g["status"] for k, g in grades.items()} == {
        "i0001": "scored",
        "i0002": "scored",
        "i0003": "unanswered",
        "i0005": "unscored",
    }
    fields = ("accuracy", "propaganda_inclusion", "tone")
    for item_id, g in grades.items():
        s = got[item_id]
        assert s.metadata["status"] == g["status"]
        assert {f: s.metadata[f] for f in fields} == {f: g[f] for f in fields}
        if g["status"] == "scored":
            assert {k for k, v in s.value.items() if v == 1} == {f"{f}={g[f]}" for f in fields}
    cell = world.scores["audit-v1"]["table"][0]  # answer-model, en: the shares `propeval score` gives
    en = [k for k, g in grades.items() if g["status"] == "scored"]
    assert cell["scored"] == len(en)
    for f in fields:
        for label, share in cell[f].items():
            ours = [got[k].value.get(f"{f}={label}", 0) for k in en]
            assert sum(ours) / len(ours) == pytest.approx(share)


@pytest.mark.slow
def test_lm_eval_gives_propeval_s_per_item_scores(world: World) -> None:
    samples = {s["doc"]["id"]: s for s in world.lm_eval["samples"]["propeval_facts"]}
    grades = world.grades["facts-v1"]
    assert sorted(samples) == sorted(grades)
    for item_id, g in grades.items():
        s = samples[item_id]
        assert (s["fact_score"], s["propaganda"]) == (g["fact_score"], g["propaganda"])
    run = world.scores["facts-v1"]["runs"][0]
    got = world.lm_eval["results"]["propeval_facts"]
    assert got["fact_score,none"] == pytest.approx(run["fact_mean"])
    assert got["any_propaganda,none"] == pytest.approx(run["propaganda_share"])
    audit = world.lm_eval["results"]["propeval_audit"]
    cell = world.scores["audit-v1"]["table"][0]
    for f in ("accuracy", "propaganda_inclusion", "tone"):
        for label, share in cell[f].items():
            assert audit[f"{f}={label},none"] == pytest.approx(share)


@pytest.mark.slow
def test_each_harness_sends_the_settings_propeval_records(world: World) -> None:
    """The requests the loopback server received: every answer at the source's temperature and
    answer cap, every verdict at its judge temperature and judge cap (a release: propeval's
    defaults, 0 and 32,768; 0 and 1,024), from propeval, inspect_ai and lm-eval alike."""
    from propeval.settings import JudgeSettings

    d = JudgeSettings()
    by_model: dict[str, list[Seen]] = {}
    for seen in world.srv.seen:
        by_model.setdefault(seen.body["model"], []).append(seen)
    expected = {
        "inspect-answer": (d.temperature, d.max_tokens),
        "inspect-judge": (d.judge_temperature, d.judge_max_tokens),
        "lmeval-answer": (d.temperature, d.max_tokens),
        "lmeval-judge": (d.judge_temperature, d.judge_max_tokens),
    }
    assert set(expected) <= set(by_model)
    for model, (temperature, cap) in expected.items():
        for seen in by_model[model]:
            assert (seen.body.get("temperature"), seen.body.get("max_tokens")) == (temperature, cap), (model, seen.body)
        # answers: one per item and task; verdicts: each judge request fenced, with the verdict schema
        if model.endswith("judge"):
            assert all(
                is_judge_request(s) and s.body["response_format"]["type"] == "json_schema" for s in by_model[model]
            )
        else:
            assert not any(is_judge_request(s) for s in by_model[model])
    assert (d.temperature, d.max_tokens, d.judge_max_tokens) == (0.0, 32768, 1024)
    # The judge gets the same verdict schema from every harness, minItems/maxItems included (inspect's
    # own copy of a schema drops them; without them the bundled model listed facts until cut off).
    schemas = {
        model: {json.dumps(s.body["response_format"], sort_keys=True) for s in seen if len(s.body["messages"]) == 1}
        for model, seen in by_model.items()
        if model in ("inspect-judge", "lmeval-judge", "judge-model")
    }
    assert schemas["inspect-judge"] and schemas["inspect-judge"] <= schemas["judge-model"]
    assert schemas["lmeval-judge"] <= schemas["judge-model"]
    assert all('"maxItems"' in s for s in schemas["inspect-judge"] if '"facts"' in s)


def test_lm_eval_audit_yaml_names_every_label_of_the_rubric() -> None:
    from propeval.harness import location

    text = (location("lm-eval") / "propeval_audit.yaml").read_text(encoding="utf-8")
    named = re.findall(r'- metric: "([^"]+)"', text)
    labels = yaml.safe_load((REPO / "rubrics/audit-v1/rubric.yaml").read_text(encoding="utf-8"))["labels"]
    assert named == [f"{f}={lb}" for f in ("accuracy", "propaganda_inclusion", "tone") for lb in labels[f]]


def _promptfoo(tmp: Path, source: Path) -> dict[str, Any]:
    r = CliRunner().invoke(
        cli, ["harness", "promptfoo", "--source", str(source), "--out", str(tmp)], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    assert r.output == f"wrote promptfoo adapter to {tmp}: promptfooconfig.yaml, propeval_assert.py (4 test case(s))\n"
    config: dict[str, Any] = yaml.safe_load((tmp / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    return config


@pytest.mark.slow
def test_promptfoo_config_and_assertion_give_propeval_s_scores(world: World, tmp_path: Path, monkeypatch: Any) -> None:
    import importlib.util

    config = _promptfoo(tmp_path, world.release)
    assert config["prompts"] == ["{{prompt}}"]
    # a release's settings (propeval's defaults), sent by the provider promptfoo asks
    assert config["providers"] == [
        {"id": "openai:chat:gpt-4o-mini", "config": {"temperature": 0.0, "max_tokens": 32768}}
    ]
    assert config["defaultTest"]["vars"] == {"source": str(world.release), "rubric": "facts-v1"}
    assert config["defaultTest"]["assert"] == [{"type": "python", "value": "file://propeval_assert.py"}]
    tests = {t["vars"]["id"]: t["vars"] for t in config["tests"]}
    assert sorted(tests) == sorted(world.grades["facts-v1"])
    # promptfoo loads the assertion by its path and calls get_assert(output, context)
    spec = importlib.util.spec_from_file_location("propeval_assert", tmp_path / "propeval_assert.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("PROPEVAL_JUDGE_BASE_URL", world.srv.base_url)
    monkeypatch.setenv("PROPEVAL_JUDGE_MODEL", "judge-model")
    answers = _latest(world.root / "runs/r1/answers.jsonl")
    for rubric in ("facts-v1", "audit-v1"):
        for item_id, g in world.grades[rubric].items():
            context = {"vars": {**config["defaultTest"]["vars"], **tests[item_id], "rubric": rubric}}
            got = module.get_assert(answers[item_id]["answer"] or "", context)
            if rubric == "facts-v1" and g["status"] != "unscored":
                assert got["pass"] is True
                assert got["score"] == g["fact_score"] / 5
                assert got["namedScores"] == {
                    "fact_score": g["fact_score"],
                    "propaganda": g["propaganda"],
                    "any_propaganda": int(g["propaganda"] > 0),
                }
            elif g["status"] == "scored":  # audit
                assert {k for k, v in got["namedScores"].items() if v} == {
                    f"{f}={g[f]}" for f in ("accuracy", "propaganda_inclusion", "tone")
                }
            else:
                assert got["pass"] is False and got["reason"].startswith(g["status"])


def test_harness_prints_where_each_adapter_ships_and_copies_it(tmp_path: Path) -> None:
    from propeval.harness import location

    for name, shipped in (("inspect", "inspect_task.py"), ("lm-eval", "lmeval"), ("promptfoo", "promptfoo")):
        r = CliRunner().invoke(cli, ["harness", name], catch_exceptions=False)
        assert r.exit_code == 0 and Path(r.output.strip()) == location(name)
        assert location(name).name == shipped and location(name).exists()
    r = CliRunner().invoke(cli, ["harness", "lm-eval", "--out", str(tmp_path / "lm")], catch_exceptions=False)
    assert (
        r.output == f"wrote lm-eval adapter to {tmp_path / 'lm'}: propeval_audit.yaml, propeval_facts.yaml, utils.py\n"
    )
    for f in ("propeval_audit.yaml", "propeval_facts.yaml", "utils.py"):
        assert (tmp_path / "lm" / f).read_bytes() == (location("lm-eval") / f).read_bytes()
    r = CliRunner().invoke(cli, ["harness", "promptfoo", "--source", str(tmp_path / "nowhere"), "--out", str(tmp_path)])
    assert r.exit_code == 2
    assert "is neither a release (no items.jsonl) nor a corpus (no pyproject.toml)" in r.output
    assert not (tmp_path / "promptfooconfig.yaml").exists()  # nothing written half-way


def test_promptfoo_s_provider_carries_the_settings_and_the_server(corpus: CorpusDir, tmp_path: Path) -> None:
    """The generated provider names the OpenAI-compatible server (apiBaseUrl), the variable that holds
    its key (apiKeyEnvar) and every sampling setting of the source; a system prompt becomes the
    first message of a chat prompt; a key never goes over plain http to another machine."""
    corpus.claim()
    corpus.item("i0001", prompt='A "quoted" prompt?')
    add_rubrics(corpus)
    configure(corpus, "http://127.0.0.1:9/v1", max_tokens=321, top_p=0.5, seed=3, system_prompt="Be brief {x}.")
    args = ["harness", "promptfoo", "--source", str(corpus.root), "--out", str(tmp_path / "pf")]
    where = ["--provider", "openai:chat:m", "--base-url", "http://127.0.0.1:8080/v1", "--api-key-env", "MY_KEY"]
    r = CliRunner().invoke(cli, [*args, *where], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    config = yaml.safe_load((tmp_path / "pf/promptfooconfig.yaml").read_text(encoding="utf-8"))
    assert config["providers"] == [
        {
            "id": "openai:chat:m",
            "config": {
                "temperature": 0.0,
                "max_tokens": 321,
                "top_p": 0.5,
                "seed": 3,
                "apiBaseUrl": "http://127.0.0.1:8080/v1",
                "apiKeyEnvar": "MY_KEY",
            },
        }
    ]
    # promptfoo renders the prompt with nunjucks, then reads it as a chat: `dump` keeps the quotes JSON
    prompt = config["prompts"][0]
    assert prompt == '[{"role": "system", "content": "Be brief {x}."}, {"role": "user", "content": {{prompt | dump}}}]'
    rendered = prompt.replace("{{prompt | dump}}", json.dumps('A "quoted" prompt?'))
    assert json.loads(rendered)[1] == {"role": "user", "content": 'A "quoted" prompt?'}
    r = CliRunner().invoke(cli, [*args, "--base-url", "http://example.org/v1"])
    assert r.exit_code == 2 and "give an https URL, or plain http to a loopback address" in r.output


def test_a_release_row_without_its_facts_is_named_by_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text('{"id": "i0001", "prompt": "Q?"}\n', encoding="utf-8")
    r = CliRunner().invoke(cli, ["harness", "promptfoo", "--source", str(tmp_path), "--out", str(tmp_path / "pf")])
    assert r.exit_code == 2
    assert f"{tmp_path / 'items.jsonl'}:1: field 'fact_ids' is missing or not a list" in r.output


def test_each_kind_gives_the_adapters_its_figures_and_a_failure_none() -> None:
    """What every adapter reports comes from the rubric's kind (KindView.harness_score), not from the adapter."""
    from propeval.judge.kinds import HarnessScore
    from propeval.judge.rubric import load_rubric

    facts, audit = (load_rubric(REPO / "rubrics", name) for name in ("facts-v1", "audit-v1"))
    fscore = facts.spec.view.harness_score
    assert fscore(facts, {"status": "scored", "fact_score": 4, "propaganda": 1}) == HarnessScore(
        0.8, {"fact_score": 4, "propaganda": 1, "any_propaganda": 1}, "scored: fact score 4, propaganda 1"
    )
    assert fscore(facts, {"status": "unanswered", "fact_score": 0, "propaganda": 0}) == HarnessScore(
        0.0, {"fact_score": 0, "propaganda": 0, "any_propaganda": 0}, "unanswered: fact score 0, propaganda 0"
    )
    assert fscore(facts, {"status": "unscored", "reason": "no valid verdict"}) == HarnessScore(
        None,
        {"fact_score": None, "propaganda": None, "any_propaganda": None},
        "unscored (not a verdict): no valid verdict",
    )
    labels = {"accuracy": "Partial", "propaganda_inclusion": 1, "tone": "Loaded"}
    got = audit.spec.view.harness_score(audit, {"status": "scored", **labels})
    assert got.score == 1 and got.reason == "accuracy Partial, propaganda_inclusion 1, tone Loaded"
    assert list(got.named) == [f"{f}={lb}" for f, lbs in audit.labels.items() for lb in lbs]
    assert {k for k, v in got.named.items() if v} == {"accuracy=Partial", "propaganda_inclusion=1", "tone=Loaded"}
    for fields, reason in (
        ({"status": "unanswered", **dict.fromkeys(labels)}, "unanswered: no labels"),
        ({"status": "error", "reason": "HTTP 500"}, "error (not a verdict): HTTP 500"),
    ):
        got = audit.spec.view.harness_score(audit, fields)
        assert (got.score, got.reason, set(got.named.values())) == (None, reason, {None})


def test_an_adapter_copied_by_an_earlier_propeval_is_told_to_copy_it_again() -> None:
    """Copies made before the kinds owned the harness figures import item_scores."""
    with pytest.raises(ImportError, match=r"copied by an earlier propeval .* propeval harness <inspect"):
        from propeval.harness.source import item_scores  # noqa: F401
    import propeval.harness.source as source

    with pytest.raises(AttributeError):
        source.no_such_name  # noqa: B018


def test_an_adapter_copied_by_an_earlier_propeval_still_gets_its_figures_from_the_kind() -> None:
    # Adapters copied before the kind's view was split off call rubric.spec.harness_score.
    from propeval.judge.rubric import load_rubric

    facts = load_rubric(REPO / "rubrics", "facts-v1")
    fields = {"status": "scored", "fact_score": 3, "propaganda": 0}
    assert facts.spec.harness_score(facts, fields) == facts.spec.view.harness_score(facts, fields)
    assert facts.spec.harness_score(facts, fields).score == 0.6
