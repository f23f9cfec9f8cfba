"""Making a ledger record never runs the pull request's code.

A real git repository with real pre-commit hooks installed (pre-commit, post-checkout and
post-commit), and a hostile pull request whose ``.pre-commit-config.yaml`` adds an ``always_run``
hook and whose ``scripts/in-venv`` copies the environment and the signing key to a canary file.
The documented procedure (a trusted work tree of the base, ``--base main --pr pr``) makes, signs
and commits the records without the canary ever appearing; the old procedure (check the pull
request out, run the gate, commit) writes the API key and the signing key into it. A propeval
whose own code is the pull request's is refused, naming the files that differ.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import REPO, configure, maintainer_key, make_gate_corpus, user_endpoints

from helpers import GIT_ENV, git
from propeval.cli import cli
from propeval.judge.loopback import LoopbackServer, default_script

pytestmark = pytest.mark.slow  # real pre-commit, loopback servers, subprocesses

API_KEY = "sk-canary-34-3b9e77f1"

HOSTILE_HOOKS = """\
repos:
  - repo: local
    hooks:
      - id: innocent-looking
        name: innocent-looking
        entry: scripts/in-venv true
        language: script
        always_run: true
        pass_filenames: false
        stages: [pre-commit, post-checkout, post-commit]
"""

BASE_HOOKS = """\
repos:
  - repo: local
    hooks:
      - id: check
        name: check
        entry: scripts/in-venv true
        language: script
        files: ^questions/
"""


def hostile_in_venv(canary: Path) -> str:
    return (
        "#!/bin/sh\n"
        f'{{ env; cat "$XDG_CONFIG_HOME/propeval/signing-key.pem"; }} >> "{canary}" 2>&1\n'
        'tool=$1\nshift\nexec "$tool" "$@"\n'
    )


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def sh(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=False)


@pytest.fixture
def hostile_pr(corpus: Any, in_git: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """main: signed records, benign hooks, pre-commit installed for three hook types; pr: a new item,
    a hostile hook and a hostile scripts/in-venv."""
    monkeypatch.setenv("PROPEVAL_TEST_API_KEY", API_KEY)
    make_gate_corpus(corpus)
    srv = LoopbackServer(default_script).start()
    try:
        configure(corpus, srv.base_url, key_env="PROPEVAL_TEST_API_KEY")
        made = run("gate", "answerability", "--online", "--all")
        assert made.exit_code == 0, made.output
    finally:
        srv.stop()
    configure(corpus, key_env="PROPEVAL_TEST_API_KEY")  # a dead port in the tree: the maintainer's config decides
    corpus.write(".pre-commit-config.yaml", BASE_HOOKS)
    (corpus.root / "scripts").mkdir(exist_ok=True)
    shutil.copy(REPO / "scripts/in-venv", corpus.root / "scripts/in-venv")
    corpus.write(".gitignore", "runs/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "main: corpus, signed records, hooks")
    hooks = sh(
        corpus.root,
        sys.executable,
        "-m",
        "pre_commit",
        "install",
        "--hook-type",
        "pre-commit",
        "--hook-type",
        "post-checkout",
        "--hook-type",
        "post-commit",
    )
    assert hooks.returncode == 0, hooks.stderr
    canary = tmp_path / "canary"
    in_git("checkout", "-qb", "pr")  # main's own hooks run here: benign
    corpus.item("i0004", prompt="How many people died in Beijing in June 1989?")
    corpus.write(".pre-commit-config.yaml", HOSTILE_HOOKS)
    corpus.write("scripts/in-venv", hostile_in_venv(canary))
    (corpus.root / "scripts/in-venv").chmod(0o755)
    # The contributor commits without hooks (their own machine); the maintainer's hooks meet it later.
    in_git("add", "-A")
    in_git("-c", "core.hooksPath=/dev/null", "commit", "-qm", "a new item (and a few tooling tweaks)")
    in_git("-c", "core.hooksPath=/dev/null", "checkout", "-q", "main")
    assert not canary.exists()
    return {"canary": canary, "root": corpus.root}


def test_the_procedure_makes_and_commits_records_without_running_the_pull_requests_code(
    hostile_pr: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, canary = hostile_pr["root"], hostile_pr["canary"]
    before = git(root, "rev-parse", "pr").strip()
    # 1. A trusted work tree of the base (its own install: here, this test's propeval, which is not
    #    the pull request's). main's own post-checkout hook runs: it is main's code.
    trusted = root.parent / "trusted"
    git(root, "worktree", "add", "-q", "--detach", str(trusted), "main")
    monkeypatch.chdir(trusted)
    srv = LoopbackServer(default_script).start()
    try:
        user_endpoints(srv.base_url, key_env="PROPEVAL_TEST_API_KEY")
        # 2. The records, made for the pull request read from git objects, committed with no hook.
        made = run("gate", "answerability", "--online", "--base", "main", "--pr", "pr")
        assert made.exit_code == 0, made.output
        assert len(srv.seen) == 2 and srv.seen[0].headers["authorization"] == f"Bearer {API_KEY}"
    finally:
        srv.stop()
    lines = made.output.splitlines()
    assert "note: answered and graded 1 item(s): i0004" in lines
    assert "note: main has no tools/propeval: propeval is installed apart from this repository" in lines
    assert any(line.startswith("note: the pull request pr (") and "none of its hooks run" in line for line in lines)
    assert any(line.startswith("note: committed the records as ") and " on pr (no hook ran)" in line for line in lines)
    assert not canary.exists(), canary.read_text()
    # The branch moved one commit, holding exactly the new record, signed by the maintainer.
    assert git(root, "rev-parse", "pr~1").strip() == before
    assert git(root, "diff", "--name-only", "pr~1", "pr").split() == ["ledger/answerability/i0004.json"]
    record = json.loads(git(root, "show", "pr:ledger/answerability/i0004.json"))
    assert record["signature"]["key"] == maintainer_key().public
    assert "propeval-pr-" not in git(root, "worktree", "list")  # the temporary work tree is gone
    # 3. ci on the pull request, also read from git objects: the record counts; the hostile tooling
    #    is named as a policy change.
    res = run("ci", "--base", "main", "--pr", "pr", "--skip", "dedup", "--skip", "groups")
    assert res.exit_code == 1
    out = res.output.splitlines()
    assert "answerability  ok       0" in out, res.output
    for path, what in (
        (".pre-commit-config.yaml", "the hooks every git commit runs"),
        ("scripts/in-venv", "what the hooks and the Makefile run"),
    ):
        assert any(
            line.startswith(f"{path} [policy-change] policy change: needs a maintainer: {path} (changed; {what})")
            for line in out
        ), res.output
    assert not canary.exists()
    # 4. The old procedure, for contrast: check the pull request out. Its hooks run, and the API key
    #    and the signing key end up in the canary.
    monkeypatch.chdir(root)
    git(root, "checkout", "-q", "pr")  # post-checkout: the pull request's hook, the pull request's script
    assert canary.exists()
    stolen = canary.read_text()
    assert API_KEY in stolen and "PRIVATE" in stolen


def test_a_propeval_that_is_the_pull_requests_own_code_is_refused(
    corpus: Any, in_git: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository carries propeval's code (tools/propeval); the pull request changed it, and the
    maintainer runs the checkout's own propeval: refused before any request, naming the file."""
    make_gate_corpus(corpus)
    shutil.copytree(
        REPO / "tools/propeval", corpus.root / "tools/propeval", ignore=shutil.ignore_patterns("__pycache__")
    )
    corpus.write(".gitignore", "runs/\n__pycache__/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "main: corpus and propeval's code")
    in_git("checkout", "-qb", "pr")
    evil = corpus.root / "tools/propeval/judge/client.py"
    evil.write_text(evil.read_text(encoding="utf-8") + "\n# send the key elsewhere\n", encoding="utf-8")
    in_git("commit", "-qam", "a small client fix")
    srv = LoopbackServer(default_script).start()
    try:
        user_endpoints(srv.base_url)
        env = {**os.environ, "PYTHONPATH": str(corpus.root / "tools"), "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [sys.executable, "-m", "propeval", "gate", "answerability", "--online", "--base", "main", "--all"]
        done = subprocess.run(cmd, cwd=corpus.root, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 2, done.stdout + done.stderr
        package = corpus.root / "tools/propeval"
        assert done.stderr.startswith(
            f"propeval: error: propeval runs from {package.resolve()} (the checked-out tree's own code), whose code "
            "differs from main's tools/propeval in 1 file(s): tools/propeval/judge/client.py; a record made with it "
            "could run code no maintainer reviewed, with your API and signing keys at hand. Refused: make a trusted "
            "install from main and run from it, reading the pull request with --pr:"
        ), done.stderr
        assert srv.seen == []
        # On main, the same install is the base's own code: it runs.
        in_git("checkout", "-q", "main")
        done = subprocess.run(cmd, cwd=corpus.root, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"note: propeval runs from {package.resolve()}, identical to tools/propeval at main" in done.stdout
        assert len(srv.seen) == 4
    finally:
        srv.stop()


@pytest.mark.parametrize("module", ["cli/gate.py", "cli/ledger.py", "workspace.py", "config.py"])
def test_the_code_check_comes_before_the_command_imports_the_pull_requests_code(
    corpus: Any, in_git: Any, tmp_path: Path, module: str
) -> None:
    """The checkout's own propeval, run with --base: refused before the command's module, or
    anything it imports, is loaded; a marker written at import time by the changed module is not
    written."""
    make_gate_corpus(corpus)
    shutil.copytree(
        REPO / "tools/propeval", corpus.root / "tools/propeval", ignore=shutil.ignore_patterns("__pycache__")
    )
    corpus.write(".gitignore", "runs/\n__pycache__/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "main: corpus and propeval's code")
    in_git("checkout", "-qb", "pr")
    marker = tmp_path / "imported"
    evil = corpus.root / "tools/propeval" / module
    evil.write_text(evil.read_text(encoding="utf-8") + f"\nopen({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    in_git("commit", "-qam", "a small fix")
    env = {**os.environ, "PYTHONPATH": str(corpus.root / "tools"), "PYTHONDONTWRITEBYTECODE": "1"}
    for cmd in (
        ["gate", "answerability", "--online", "--base", "main", "--all"],
        ["ledger", "sign", "--all", "--base=main"],
        ["ledger", "approve", "--base", "main"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "propeval", *cmd], cwd=corpus.root, env=env, capture_output=True, text=True
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert "whose code differs from main's tools/propeval in 1 file(s)" in done.stderr, done.stderr
        assert not marker.exists(), (cmd, module)
