# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""kill -9 in the middle of `propeval grade`, then rerun: the file stays valid and ends complete."""

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
from judgekit import REPO, configure, lines

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, is_judge_request
from serverkit import loopback  # noqa: F401  (fixture)

N = 40


@pytest.mark.slow
def test_kill_9_mid_grade_then_resume(corpus: Any, loopback: Any) -> None:
    for c in range(1, 5):
        cid = f"c{c:04d}"
        corpus.claim(cid)
        for i in range(10):
            n = (c - 1) * 10 + i + 1
            corpus.item(f"i{n:04d}", cid, prompt=f"Question number {n}?")
    import shutil

    shutil.copytree(REPO / "rubrics", corpus.root / "rubrics")
    # Grading stops half-way: after 8 verdicts the server holds every request until the kill, so
    # the kill lands mid-run on any machine, and neither run waits on a delay.
    release = threading.Event()

    def eight_verdicts_then_hold(seen: Seen) -> Reply:
        if is_judge_request(seen) and seen.n >= N + 8:
            release.wait(60)
        return default_script(seen)

    srv = loopback(eight_verdicts_then_hold)
    configure(corpus, srv.base_url, concurrency=4)
    assert CliRunner().invoke(cli, ["answer", "--run-id", "r1"], catch_exceptions=False).exit_code == 0
    assert len(srv.seen) == N  # one request an answer: the 9th judge request is request N + 8

    grades = corpus.root / "runs/r1/grades-facts-v1.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    cmd = [sys.executable, "-m", "propeval", "--root", str(corpus.root), "grade", "r1", "--rubric", "facts-v1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if grades.is_file() and len(lines(grades)) >= 8:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    release.set()
    assert proc.returncode == -signal.SIGKILL
    done = len(lines(grades))
    assert 8 <= done < N
    # a write torn by the kill: half a record, no newline
    with grades.open("a", encoding="utf-8") as fh:
        fh.write('{"item_id": "i0040", "status": "sco')

    # The rerun in this process: the kill needed a process of its own, the resume does not (a second
    # interpreter would only import propeval and openai again, about 1.3 CPU-s).
    rerun = CliRunner().invoke(cli, cmd[3:], catch_exceptions=False)
    assert rerun.exit_code == 0, rerun.output
    assert rerun.stdout.splitlines()[0].startswith(f"graded run r1: {N} item(s), ")
    records = [json.loads(x) for x in lines(grades)]  # every line is whole JSON
    ids = [r["item_id"] for r in records]
    assert len(ids) == len(set(ids)) == N  # complete, no duplicates
    assert {r["status"] for r in records} == {"scored"}
    # only the unfinished items were asked again (plus at most the few in flight at the kill)
    judged = sum("<<<ANSWER-" in s.prompt for s in srv.seen)
    assert N <= judged <= N + 4
