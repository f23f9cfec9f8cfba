# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""A rewritten response cache cannot change a score,
`score` and the report count grades from the cache, and a panel needs a majority of its judges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, is_judge_request
from serverkit import loopback  # noqa: F401  (fixture)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def grades(root: Path, run: str = "r1") -> dict[str, dict[str, Any]]:
    lines = (root / f"runs/{run}/grades-facts-v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {g["item_id"]: g for g in map(json.loads, lines)}


def judged(srv: Any) -> int:
    return sum(is_judge_request(s) for s in srv.seen)


@pytest.mark.slow
def test_a_rewritten_response_cache_cannot_change_a_score(judge_corpus: Any, loopback: Any, tmp_path: Path) -> None:
    srv = loopback()  # answers everything; the judge says every fact was stated
    configure(judge_corpus, srv.base_url)
    assert invoke("answer", "--run-id", "r1").exit_code == 0
    assert invoke("grade", "r1", "--rubric", "facts-v1").exit_code == 0
    honest = grades(judge_corpus.root)
    assert {g["fact_score"] for g in honest.values()} == {5}
    asked = judged(srv)
    # The attacker rewrites every cached verdict: every fact opposed. They have no cache key.
    entries = sorted((tmp_path / "response-cache").glob("*/*.json"))
    assert len(entries) == len(honest)
    for entry in entries:
        data = json.loads(entry.read_text(encoding="utf-8"))
        verdict = json.loads(data["text"])
        for fact in verdict["facts"]:
            fact["state"] = "opposed"
        data["text"] = json.dumps(verdict)
        entry.write_text(json.dumps(data), encoding="utf-8")
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1")
    assert r.exit_code == 0, r.output
    again = grades(judge_corpus.root)
    # Every entry failed authentication: a warning each, and the judge was asked again.
    assert {g["fact_score"] for g in again.values()} == {5}
    assert not any(g["cached"] for g in again.values())
    assert judged(srv) == 2 * asked
    assert r.output.count("[response-cache] (warning) response cache entry failed authentication") == len(entries)
    # score says how many grades came from the cache: none here; all of them on a plain re-grade.
    out = invoke("score", "r1").output
    assert "grades from the response cache (a verdict read back, MAC-checked, not asked again):" in out
    assert f"  r1: 0 of {len(again)} (0%)" in out
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1")
    assert f"{len(again)} from the response cache" in r.output and judged(srv) == 2 * asked
    out = invoke("score", "r1").output
    assert f"  r1: {len(again)} of {len(again)} (100%)" in out
    doc = json.loads(invoke("score", "r1", "--format", "json").stdout)
    assert doc["provenance"][0]["grades"] == {"judged": len(again), "from_cache": len(again)}
    report = judge_corpus.root / "report.html"
    assert invoke("report", "--out", str(report)).exit_code in (0, 1)
    assert (
        f"runs/r1/grades-facts-v1.jsonl: {len(again)} of {len(again)} grade(s) took their verdict from the response "
        "cache (read back and MAC-checked, not asked again)"
    ) in report.read_text(encoding="utf-8")


def add_endpoints(corpus: Any, **servers: Any) -> None:
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        for name, srv in servers.items():
            fh.write(f'\n[tool.propeval.judge.endpoints.{name}]\nbase_url = "{srv.base_url}"\nmodel = "model-{name}"\n')


def never_valid(seen: Seen) -> Reply:
    """A judge that never gives a valid verdict."""
    return Reply("I would rather not say.") if is_judge_request(seen) else default_script(seen)


def test_a_panel_item_scored_by_a_minority_of_its_judges_is_unscored(judge_corpus: Any, loopback: Any) -> None:
    answers = loopback()
    good = loopback()
    mute = loopback(never_valid)
    configure(judge_corpus, answers.base_url, max_reasks=1)
    add_endpoints(judge_corpus, good=good, mute=mute)
    assert invoke("answer", "--run-id", "r1", "--item", "i0001").exit_code == 0
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "good", "--judge", "mute")
    assert r.exit_code == 0, r.output
    g = grades(judge_corpus.root)["i0001"]
    assert g["status"] == "unscored" and g["fact_score"] is None
    assert g["reason"].startswith(
        "only 1 of the panel's 2 judges gave a valid verdict, and a panel verdict needs a majority (2): "
        "judge mute (model-mute): no valid verdict after 2 attempt(s)"
    )
    assert g["reason"].endswith(
        "grade again with --retry-unscored, or score on the judges that answered with --allow-partial-panel"
    )
    # scoring says so: the item counts as unscored, never as a pass or a fail
    assert "unscored" in invoke("score", "r1").output
    # --allow-partial-panel scores it on the judge that answered, and says who was left out
    (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").unlink()
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--judge", "good", "--judge", "mute", "--allow-partial-panel")
    assert r.exit_code == 0, r.output
    g = grades(judge_corpus.root)["i0001"]
    assert g["status"] == "scored" and g["fact_score"] == 5
    assert g["reason"].startswith("left out of the panel: judge mute (model-mute): no valid verdict")
