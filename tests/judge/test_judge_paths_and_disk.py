# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""Run ids and rubric names never leave the repository; a full disk mid-run loses nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import REPO, add_rubrics, configure, judge_corpus, lines  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import default_script
from serverkit import loopback  # noqa: F401  (fixture)


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("run_id", ["../..", "../escaped", "/tmp/x", ".hidden", "a/b", "r" * 129])
def test_a_run_id_that_is_not_one_folder_name_is_refused(judge_corpus: Any, loopback: Any, run_id: str) -> None:
    srv = loopback(default_script)
    configure(judge_corpus, srv.base_url)
    outside = judge_corpus.root.parent
    before = tree(outside)
    result = CliRunner().invoke(cli, ["answer", "--run-id", run_id], catch_exceptions=False)
    assert result.exit_code == 2
    shown = repr(run_id if len(run_id) <= 80 else run_id[:80] + "…")
    assert result.output == (
        f"propeval: error: --run-id {shown} cannot be used as a folder name; use letters, digits, '.', '_' "
        "and '-', starting with a letter or digit, at most 128 characters\n"
    )
    assert tree(outside) == before
    assert srv.seen == []  # refused before any request


def test_a_rubric_name_that_is_not_one_folder_name_is_refused(judge_corpus: Any, loopback: Any) -> None:
    srv = loopback(default_script)
    configure(judge_corpus, srv.base_url)
    assert CliRunner().invoke(cli, ["answer", "--run-id", "r1"], catch_exceptions=False).exit_code == 0
    # a rubric folder placed outside rubrics/, as a hostile path would reach it
    add_rubrics(judge_corpus)
    before = tree(judge_corpus.root.parent)
    result = CliRunner().invoke(cli, ["grade", "r1", "--rubric", "../rubrics/facts-v1"], catch_exceptions=False)
    assert (result.exit_code, result.output) == (
        2,
        "propeval: error: --rubric '../rubrics/facts-v1' cannot be used as a folder name; use letters, digits, "
        "'.', '_' and '-', starting with a letter or digit, at most 128 characters\n",
    )
    assert tree(judge_corpus.root.parent) == before


# The answer run in a child whose file size limit (RLIMIT_FSIZE) answers.jsonl outgrows half-way:
# the kernel refuses the write with EFBIG, as a full disk refuses with ENOSPC.
LIMITED = textwrap.dedent(
    """
    import resource, runpy, sys
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
    sys.argv = ["propeval", *sys.argv[2:]]
    runpy.run_module("propeval", run_name="__main__")
    """
)


@pytest.mark.slow
def test_a_full_disk_mid_answer_exits_3_and_a_rerun_finishes(corpus: Any, loopback: Any) -> None:
    corpus.claim()
    for n in range(1, 13):
        corpus.item(f"i{n:04d}", prompt=f"Question number {n} about central Beijing in June 1989?")
    srv = loopback(default_script)
    configure(corpus, srv.base_url, concurrency=1)
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    cmd = [sys.executable, "-c", LIMITED, "3000", "--root", str(corpus.root), "answer", "--run-id", "r1"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    answers = corpus.root / "runs" / "r1" / "answers.jsonl"
    assert out.returncode == 3, out.stderr
    assert out.stderr.splitlines()[-1] == (
        f"propeval: error: cannot write {answers}: File too large; the line was not appended"
    )
    assert "Traceback" not in out.stderr
    kept = lines(answers)
    assert 0 < len(kept) < 12
    assert answers.read_bytes().endswith(b"\n")
    assert all(json.loads(x)["status"] == "answered" for x in kept)  # whole records only

    # The rerun in this process: the file size limit needed a child of its own, the rerun does not (a
    # second interpreter would only import propeval and openai again, about 1.3 CPU-s).
    rerun = CliRunner().invoke(cli, cmd[4:], catch_exceptions=False)
    assert rerun.exit_code == 0, rerun.output
    ids = [json.loads(x)["item_id"] for x in lines(answers)]
    assert sorted(ids) == [f"i{n:04d}" for n in range(1, 13)]  # none lost, none twice
