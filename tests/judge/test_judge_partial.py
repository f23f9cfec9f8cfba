# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""`grade` on a run that `answer` is still writing, or that it left incomplete.

`answer` runs as a real process here; the loopback server holds one request until the test lets
it go, so the run is caught mid-way on any machine without waiting on a delay.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import REPO, configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script
from serverkit import loopback  # noqa: F401  (fixture)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow  # answer runs as a real process, twice
def test_grade_refuses_a_run_still_being_answered_unless_partial_and_score_labels_it(
    judge_corpus: Any, loopback: Any
) -> None:
    release = threading.Event()

    def hold_the_last_item(seen: Seen) -> Reply:
        if "第二个问题" in seen.prompt:  # i0003, asked last
            release.wait(60)
        return default_script(seen)

    srv = loopback(hold_the_last_item)
    configure(judge_corpus, srv.base_url, concurrency=1)
    answers = judge_corpus.root / "runs/r1/answers.jsonl"
    cmd = [sys.executable, "-m", "propeval", "--root", str(judge_corpus.root), "answer", "--run-id", "r1"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: answers.is_file() and len(answers.read_text().splitlines()) == 2, "two answers")
        # grade once graded the partial run, exited 0 and said nothing.
        r = invoke("grade", "r1", "--rubric", "facts-v1", "--no-cache")
        assert r.exit_code == 2 and not (judge_corpus.root / "runs/r1/grades-facts-v1.jsonl").exists()
        assert r.stderr.startswith(
            "propeval: error: run r1 is not complete: `propeval answer` is still writing it (it holds "
        )
        assert "or pass --partial to grade the answers there now" in r.stderr
        r = invoke("grade", "r1", "--rubric", "facts-v1", "--no-cache", "--partial", "--format", "json")
        assert r.exit_code == 0
        doc = json.loads(r.stdout)
        assert doc["counts"] == {"scored": 2} and "partial-run" in [w["rule"] for w in doc["warnings"]]
        r = invoke("score", "r1")
        assert r.exit_code == 0
        assert r.stdout.splitlines()[1].startswith("PARTIAL RUN r1: `propeval answer` is still writing it")
        assert "[partial-run] (warning) run r1 is PARTIAL" in r.stderr
        scored = json.loads(invoke("score", "r1", "--format", "json").stdout)
        assert list(scored["partial_runs"]) == ["r1"]
    finally:
        release.set()
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    # Finished: graded in full without --partial, and no longer labelled.
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--no-cache")
    assert r.exit_code == 0, r.output
    r = invoke("score", "r1", "--format", "json")
    assert json.loads(r.stdout)["partial_runs"] == {} and "PARTIAL" not in r.stderr


@pytest.mark.slow
def test_a_killed_or_deadline_cut_answer_run_is_refused_and_the_report_labels_it(
    judge_corpus: Any, loopback: Any
) -> None:
    hold = threading.Event()

    def hold_the_last_item(seen: Seen) -> Reply:
        if "第二个问题" in seen.prompt and not hold.is_set():
            hold.wait(60)
        return default_script(seen)

    srv = loopback(hold_the_last_item)
    configure(judge_corpus, srv.base_url, concurrency=1)
    answers = judge_corpus.root / "runs/r1/answers.jsonl"
    cmd = [sys.executable, "-m", "propeval", "--root", str(judge_corpus.root), "answer", "--run-id", "r1"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: answers.is_file() and len(answers.read_text().splitlines()) == 2, "two answers")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    hold.set()
    r = invoke("grade", "r1", "--rubric", "facts-v1", "--no-cache")
    assert r.exit_code == 2
    assert "`propeval answer` was stopped (killed or crashed) before it finished the run" in r.stderr
    assert invoke("grade", "r1", "--rubric", "facts-v1", "--no-cache", "--partial").exit_code == 0
    r = invoke("report", "--out", str(judge_corpus.root / "report.html"))
    html = (judge_corpus.root / "report.html").read_text(encoding="utf-8")
    assert "[partial-run] run r1 is PARTIAL: `propeval answer` was stopped (killed or crashed)" in html
    # A run deadline that leaves items unasked: the marker keeps the tally.
    slow = loopback(lambda seen: Reply("late", delay=1.0) if "第二个问题" in seen.prompt else default_script(seen))
    configure(judge_corpus, slow.base_url, concurrency=1, run_deadline=0.5)
    assert invoke("answer", "--run-id", "r2").exit_code == 3
    r = invoke("grade", "r2", "--rubric", "facts-v1", "--no-cache")
    assert r.exit_code == 2
    assert (
        "`propeval answer` stopped before every item had an answer (2 of 3 item(s) answered; 1 left by the run "
        "deadline)" in r.stderr
    )
    # Finishing the run clears it.
    configure(judge_corpus, srv.base_url)
    assert invoke("answer", "--run-id", "r2").exit_code == 0
    assert invoke("grade", "r2", "--rubric", "facts-v1", "--no-cache").exit_code == 0
