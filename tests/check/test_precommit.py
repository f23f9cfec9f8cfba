"""Real pre-commit in a temporary git repository: a bad item blocks the commit, a good one passes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GIT_ENV, REPO


def commit(root: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    return subprocess.run(["git", "commit", "-m", message], cwd=root, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_pre_commit_blocks_a_bad_item_and_passes_a_good_one(corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Nothing activated and nothing on PATH: scripts/in-venv finds the tools in the venv that
    # PROPEVAL_VENV names (.venv in a clone after make setup).
    env = {
        **os.environ,
        **GIT_ENV,
        "PATH": "/usr/bin:/bin",
        "PROPEVAL_VENV": sys.prefix,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "HF_HUB_OFFLINE": "1",
    }
    root = corpus.root
    shutil.copy(REPO / ".pre-commit-config.yaml", root / ".pre-commit-config.yaml")
    (root / "scripts").mkdir()
    shutil.copy2(REPO / "scripts/in-venv", root / "scripts/in-venv")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, env=env, check=True, capture_output=True)
    corpus.claim()
    corpus.item()
    ok = commit(root, env, "a good claim and item")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # One hook, one process: check, groups and dedup (propeval hook); git sends its output to stderr.
    assert re.search(r"propeval hook \(check, groups, dedup on what is staged\)\.+Passed", ok.stderr), ok.stderr

    corpus.item("i0002", framing="balanced")
    bad = commit(root, env, "a bad item")
    assert bad.returncode == 1
    assert "== propeval check (changed files" in bad.stderr and "== propeval dedup (changed texts" in bad.stderr
    assert (
        "questions/c0001/i0002.yaml:4:10 [schema] 'balanced' is not one of ['neutral', 'loaded']; "
        "use one of those values"
    ) in bad.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=root, env=env, capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1
