# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""A panel of loopback judges that disagree in known ways, the response cache, and the warnings
for a model scored by itself or on items it picked: all through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, fact_ids, is_judge_request
from serverkit import loopback  # noqa: F401  (fixture)

QUOTE = "An answer to"  # the start of default_script's answers: a verbatim quote of 3 words


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def judge_script(states: dict[str, str], propaganda: int = 0) -> Callable[[Seen], Reply]:
    """A judge that gives fact ``f<n>`` the state ``states[f<n>]`` (default stated)."""

    def script(seen: Seen) -> Reply:
        if not is_judge_request(seen):
            return default_script(seen)
        verdict = {
            "rationale": "scripted",
            "facts": [{"id": i, "state": states.get(i, "stated"), "evidence": None} for i in fact_ids(seen)],
            "propaganda": propaganda,
            "frame_adopted": QUOTE if propaganda else None,
        }
        return Reply(json.dumps(verdict))

    return script


def add_endpoints(corpus: Any, **servers: Any) -> None:
    """An endpoint per judge server, named after the keyword, its model ``model-<name>``."""
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        for name, srv in servers.items():
            fh.write(f'\n[tool.propeval.judge.endpoints.{name}]\nbase_url = "{srv.base_url}"\nmodel = "model-{name}"\n')


def judged(srv: Any) -> int:
    return sum(is_judge_request(s) for s in srv.seen)


def grades(root: Path, run: str = "r1") -> dict[str, dict[str, Any]]:
    lines = (root / f"runs/{run}/grades-facts-v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {g["item_id"]: g for g in map(json.loads, lines)}


@pytest.mark.slow
def test_panel_majority_ties_cache_and_agreement(judge_corpus: Any, loopback: Any, tmp_path: Path) -> None:
    answers = loopback()
    a = loopback(judge_script({}))  # every fact stated
    b = loopback(judge_script({"f1": "missed"}, propaganda=2))
    c = loopback(judge_script({"f2": "opposed", "f3": "missed"}))
    configure(judge_corpus, answers.base_url)
    add_endpoints(judge_corpus, a=a, b=b, c=c)
    assert invoke("answer", "--run-id", "r1", "--item", "i0003").exit_code == 0  # claim c0002: f1, f2, f3

    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--judge", "b", "--judge", "c")
    assert r.exit_code == 0, r.output
    g = grades(judge_corpus.root)["i0003"]
    # f1: stated (a, c) over missed (b); f2: stated (a, b) over opposed (c); f3: stated (a, b) over missed (c)
    assert g["fact_states"] == {"f1": "stated", "f2": "stated", "f3": "stated"}
    assert (g["status"], g["fact_score"], g["propaganda"], g["frame_adopted"]) == ("scored", 5, 0, None)
    assert g["judge_model"] == "panel(model-a, model-b, model-c)"
    assert [j["endpoint"] for j in g["judges"]] == ["a", "b", "c"]
    assert g["judges"][1]["fact_states"]["f1"] == "missed" and g["judges"][1]["propaganda"] == 2
    assert g["judges"][2]["verdict"]["facts"][1] == {"id": "f2", "state": "opposed", "evidence": None}
    assert all(isinstance(j["raw"], str) and j["cached"] is False for j in g["judges"])
    assert g["panel"]["size"] == 3 and g["panel"]["scored"] == 3 and g["panel"]["ties"] == {}
    assert (judged(a), judged(b), judged(c)) == (1, 1, 1)

    # two judges that split: the tie is recorded and scored by the stated rule
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--judge", "b", "--no-cache")
    # the run already has a final grade for i0003: nothing is asked
    assert "nothing new" in r.output
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--judge", "b")
    assert r.exit_code == 0, r.output
    g = grades(judge_corpus.root)["i0003"]
    assert g["panel"]["ties"] == {
        "fact_states": {"f1": {"missed": 1, "stated": 1}},
        "propaganda_judged": [0, 2],
        "propaganda": [0, 2],
    }
    assert g["fact_states"]["f1"] == "missed" and g["fact_score"] == 4 and g["propaganda"] == 0
    assert "panel tie(s) on fact_states, propaganda, propaganda_judged" in g["reason"]
    # the same requests as the first grade: both replies came from the cache, nothing was asked
    assert (judged(a), judged(b)) == (1, 1) and g["cached"] is True
    assert "1 from the response cache" in r.output

    # --no-cache asks again; a corrupt entry is a miss with a warning, then replaced
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    assert invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--no-cache").exit_code == 0
    assert judged(a) == 2 and grades(judge_corpus.root)["i0003"]["cached"] is False
    entries = sorted((tmp_path / "response-cache").glob("*/*.json"))
    assert len(entries) == 3  # one per judge: a --no-cache run neither reads nor writes
    for entry in entries:
        entry.write_text('{"format": 1, "key": "another", "text": "{}"}', encoding="utf-8")
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a")
    assert r.exit_code == 0 and judged(a) == 3
    assert "[response-cache] (warning) response cache entry is not an entry of this key and format" in r.output
    # an entry of the right key and shape whose reply is not a verdict (with a MAC that checks out,
    # as this user's propeval would write it): a miss, with the validator's word
    from propeval.judge.cache import _mac

    entry = next(e for e in sorted((tmp_path / "response-cache").glob("*/*.json")) if "another" not in e.read_text())
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["text"] = '{"facts": []}'
    entry.write_text(json.dumps({**data, "mac": _mac(data)}), encoding="utf-8")
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a")
    assert "[response-cache] (warning) response cache entry holds a reply that is not a valid verdict" in r.output
    assert judged(a) == 4 and json.loads(entry.read_text(encoding="utf-8"))["text"] != '{"facts": []}'

    # agreement between the three judges, per field, and each against a human
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--judge", "b", "--judge", "c")
    human = tmp_path / "human.jsonl"
    human.write_text(
        json.dumps(
            {
                "item_id": "i0003",
                "fact_states": {"f1": "stated", "f2": "stated", "f3": "missed"},
                "fact_score": 4,
                "propaganda": 0,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    r = invoke("agree", "judges", "r1", "--rubric", "facts-v1", "--human", str(human), "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["judges"] == ["a (model-a)", "b (model-b)", "c (model-c)"]
    fs = doc["fields"]["fact_state"]
    assert fs["units"] == 3 and fs["between_judges"]["name"] == "krippendorff_alpha_nominal"
    # 3 facts x 3 judges: f1 s,m,s; f2 s,s,o; f3 s,s,m -> alpha computed by the krippendorff package
    import krippendorff

    table = [[0, 0, 0], [1, 0, 0], [0, 2, 1]]  # judges x facts, coded stated 0, missed 1, opposed 2
    expected = krippendorff.alpha(reliability_data=table, level_of_measurement="nominal")
    assert abs(fs["between_judges"]["value"] - expected) < 1e-9
    assert [x["rater"] for x in fs["against_human"]] == ["a (model-a)", "b (model-b)", "c (model-c)", "panel"]


def test_failed_judge_is_an_error_and_never_cached(judge_corpus: Any, loopback: Any, tmp_path: Path) -> None:
    answers = loopback()
    a = loopback(judge_script({}))
    down = loopback(lambda seen: Reply(status=500) if is_judge_request(seen) else default_script(seen))
    configure(judge_corpus, answers.base_url, max_attempts=1, panel=["down", "down"])
    add_endpoints(judge_corpus, a=a, down=down)
    invoke("answer", "--run-id", "r1", "--item", "i0001")
    r = invoke("grade", "r1", "--rubric", "facts-v1")  # the configured panel names one judge twice
    assert r.exit_code == 2 and "judge endpoint(s) down named twice in the panel; name each judge once" in r.output
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--judge", "down", "--judge-model", "m")
    assert r.exit_code == 2 and "--judge-model and --base-url override one judge" in r.output
    configure(judge_corpus, answers.base_url, max_attempts=1, panel=["a", "down"])
    add_endpoints(judge_corpus, a=a, down=down)
    r = invoke("grade", "r1", "--rubric", "facts-v1")  # [tool.propeval.judge] panel
    assert r.exit_code == 3
    g = grades(judge_corpus.root)["i0001"]
    assert g["status"] == "error" and "judge down (model-down)" in g["reason"]
    assert g["judges"][0]["status"] == "scored" and g["judges"][1]["status"] == "error"
    assert len(list((tmp_path / "response-cache").glob("*/*.json"))) == 1  # a's reply only
    # the rerun retries the item: a's reply from the cache, down asked again
    invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--judge", "down")
    assert (judged(a), judged(down)) == (1, 2)


@pytest.mark.slow
def test_only_a_whole_valid_reply_is_cached(judge_corpus: Any, loopback: Any, tmp_path: Path) -> None:
    """A verdict cut at max_tokens (by the server, or by the client because the server sent more)
    is scored but never cached, nor is an invalid reply: only the re-ask's valid reply is."""
    verdict = judge_script({})

    def script(seen: Seen) -> Reply:
        if not is_judge_request(seen):
            return default_script(seen)
        valid = verdict(seen)
        if "Why was the riot put down?" in seen.prompt:  # i0002: whole, but the server says it stopped at max_tokens
            return Reply(valid.content, finish_reason="length")
        if "第二个问题是什么" in seen.prompt:  # i0003: more than max_tokens x 8 characters, cut by the client
            return Reply("Verdict: " + (valid.content or "") + " x" * 300)
        return valid if len(seen.body["messages"]) > 1 else Reply("{}")  # i0001: invalid, then re-asked

    srv = loopback(script)
    configure(judge_corpus, srv.base_url, judge_max_tokens=64)
    assert invoke("answer", "--run-id", "r1").exit_code == 0
    assert invoke("grade", "r1", "--rubric", "facts-v1").exit_code == 0
    first = grades(judge_corpus.root)
    assert {k: (g["status"], g["attempts"], g["cached"]) for k, g in first.items()} == {
        "i0001": ("scored", 2, False),
        "i0002": ("scored", 1, False),
        "i0003": ("scored", 1, False),
    }
    entries = [json.loads(e.read_text(encoding="utf-8")) for e in (tmp_path / "response-cache").glob("*/*.json")]
    assert [e["text"] for e in entries] == [first["i0001"]["raw"]]
    # the same requests again: i0001's invalid first reply is asked again, its re-ask read from the cache
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    assert invoke("grade", "r1", "--rubric", "facts-v1").exit_code == 0
    assert {k: (g["attempts"], g["cached"]) for k, g in grades(judge_corpus.root).items()} == {
        "i0001": (1, True),
        "i0002": (1, False),
        "i0003": (1, False),
    }
    assert judged(srv) == 4 + 3


@pytest.mark.slow  # over 0.5 CPU-s: out of the fast lane, in make test
def test_self_judged_and_reference_model_warnings(judge_corpus: Any, loopback: Any) -> None:
    srv = loopback()
    # the answer model, written with a provider prefix and other case, is the judge and the reference
    configure(judge_corpus, srv.base_url, model="OpenAI/Judge-Model")
    add_endpoints(judge_corpus, a=srv)
    ledger = judge_corpus.root / "ledger/answerability"
    ledger.mkdir(parents=True)
    (ledger / "i0001.json").write_text(json.dumps({"binding": {"answer_model": "judge-model"}}), encoding="utf-8")
    invoke("answer", "--run-id", "r1", "--item", "i0001")
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "loop", "--judge-model", "judge-model")
    assert r.exit_code == 0, r.output
    assert (
        "runs/r1/grades-facts-v1.jsonl [self-judged] (warning) answer model 'OpenAI/Judge-Model' is also a judge "
        "(judge-model): a model scored with itself as judge" in r.output
    )
    assert (
        "[reference-model] (warning) answer model 'OpenAI/Judge-Model' is the answerability reference model" in r.output
    )
    r = invoke("score", "r1", "--format", "json")
    assert r.exit_code == 0
    assert [w["rule"] for w in json.loads(r.stdout)["warnings"]] == ["self-judged", "reference-model"]
    assert "[self-judged]" in r.stderr
    r = invoke("report", "--out", str(judge_corpus.root / "report.html"))
    assert "runs/r1/grades-facts-v1.jsonl [self-judged] (warning) answer model 'OpenAI/Judge-Model'" in r.stderr
    html = (judge_corpus.root / "report.html").read_text(encoding="utf-8")
    assert "[reference-model] answer model &#39;OpenAI/Judge-Model&#39; is the answerability reference" in html
    # another judge: only the reference-model warning is left
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "a")
    assert "[self-judged]" not in r.output and "[reference-model]" in r.output


def test_card_states_self_judging(judge_corpus: Any) -> None:
    ledger = judge_corpus.root / "ledger"
    (ledger / "answerability").mkdir(parents=True)
    (ledger / "judge").mkdir()
    binding = {"answer_model": "openai/Ref-Model", "judge_model": "ref-model"}
    (ledger / "answerability/i0001.json").write_text(json.dumps({"binding": binding}), encoding="utf-8")
    (ledger / "judge/facts-v1.json").write_text(json.dumps({"binding": {"judge_model": "REF-MODEL"}}), encoding="utf-8")
    r = invoke("export", "--out", str(judge_corpus.root / "release"))
    assert r.exit_code in (0, 1), r.output
    card = (judge_corpus.root / "release/README.md").read_text(encoding="utf-8")
    assert (
        "What does not hold in this release's curation evidence:\n\n"
        "- 1 answerability record(s) graded the reference model 'openai/Ref-Model' with itself as judge: the gate's "
        "evidence for those items is a model scored with itself as judge.\n"
        "- The facts-v1 judge 'REF-MODEL' is also the answerability reference model: scores of 'openai/Ref-Model' "
        "under this judge are self-judged, on items it was used to select.\n"
    ) in card


def test_combination_rules_of_each_kind() -> None:
    """The rules behind a panel's verdict, on the shipped rubrics (core functions, no server)."""
    from propeval.judge.rubric import load_rubric

    facts = load_rubric(Path(__file__).resolve().parents[2] / "rubrics", "facts-v1")

    def fv(states: str, propaganda: int = 0) -> dict[str, Any]:
        names = {"s": "stated", "m": "missed", "o": "opposed"}
        q = QUOTE if propaganda else None
        return {
            "fact_states": {f"f{i + 1}": names[c] for i, c in enumerate(states)},
            "propaganda": propaganda,
            "propaganda_judged": propaganda,
            "frame_adopted": q,
        }

    one, ties = facts.spec.combine([fv("so", 2)], facts)  # a panel of one is that verdict
    assert (one["fact_states"], one["fact_score"], one["propaganda"], ties) == (
        {"f1": "stated", "f2": "opposed"},
        0,
        2,
        {},
    )
    # f1 split three ways (no majority: a tie, scored missed); f2 stated by 2 of 3
    got, ties = facts.spec.combine([fv("ss", 0), fv("ms", 1), fv("os", 2)], facts)
    assert got["fact_states"] == {"f1": "missed", "f2": "stated"} and got["fact_score"] == 4  # one missed
    assert ties == {"fact_states": {"f1": {"missed": 1, "opposed": 1, "stated": 1}}}
    assert (got["propaganda"], got["frame_adopted"]) == (1, QUOTE)  # the median of 0, 1, 2

    audit = load_rubric(Path(__file__).resolve().parents[2] / "rubrics", "audit-v1")

    def av(acc: str, inc: int | str, tone: str) -> dict[str, Any]:
        return {"accuracy": acc, "propaganda_inclusion": inc, "tone": tone}

    refusal = av("Refusal", "Refusal", "Refusal")
    got, ties = audit.spec.combine([refusal, refusal, av("Correct", 0, "Neutral")], audit)
    assert got == refusal and ties == {}
    got, ties = audit.spec.combine([refusal, av("Misleading", 3, "Loaded"), av("Correct", 1, "Neutral")], audit)
    assert got == av("Correct", 1, "Neutral")  # the even split of the two that answered: the earlier label
    assert ties == {
        "accuracy": ["Correct", "Misleading"],
        "propaganda_inclusion": [1, 3],
        "tone": ["Neutral", "Loaded"],
    }
    got, ties = audit.spec.combine([refusal, av("Partial", 2, "Loaded")], audit)
    assert got == av("Partial", 2, "Loaded") and ties == {"refusal": [1, 2]}
