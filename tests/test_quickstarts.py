"""README's quickstarts run as they stand, one per role, in a fresh clone of this repository.

Each quickstart is the ``sh`` block of a README section "Quickstart: <role>". Its install lines
(``git clone``, ``make setup``/``setup-light``, a venv and ``pip install``) are what other tests
run for real: tests/test_first_hour.py (the contributor's ``make setup-light`` from a fresh clone)
and tests/check/test_published_hooks.py (the owner's pinned hooks, built by pre-commit). Here the
clone is real and propeval is the suite's own install (this checkout's ``tools/`` first on
PYTHONPATH), and every other line runs in bash, in order, with ``set -e``: the contributor's new
claim, item, check and commit; the owner's ``init`` (the README's URL replaced by the clone's path,
as the README says a clone's path may be), ``git init``, ``pre-commit install`` and ``check``; the
evaluator's export. ``make eval-smoke`` is ``propeval eval-smoke``, which
tests/harness/test_eval_smoke.py runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GIT_ENV, REPO

pytestmark = pytest.mark.slow

URL = "https://github.com/ORG/propeval"
INSTALL = re.compile(r"^(git clone |python3 -m venv |pip install )")


def quickstart(role: str) -> tuple[list[str], list[str]]:
    """(install lines, the other lines) of README's quickstart for ``role``, continuations joined."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"\n## Quickstart: {role}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, f"README's quickstart for {role} has no sh block"
    lines = [line.strip() for line in block.group(1).replace("\\\n", " ").splitlines() if line.strip()]
    assert len(block.group(1).splitlines()) <= 10, f"README's quickstart for {role} is over ten lines"
    install = [line for line in lines if INSTALL.match(line)]
    return install, [line for line in lines if line not in install]


def run_block(lines: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = "set -euo pipefail\n" + "\n".join(lines) + "\n"
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def clone_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh clone of this repository, and an environment whose propeval and pre-commit are the
    suite's (the venv's bin first on PATH, this checkout's tools/ first on PYTHONPATH)."""
    clone = tmp_path / "propeval"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAKEFLAGS", "MAKELEVEL")}
    env.update(GIT_ENV)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env["PYTHONPATH"] = str(REPO / "tools")
    return clone, env


def test_the_contributors_quickstart_adds_a_claim_and_an_item_and_commits(
    clone_env: tuple[Path, dict[str, str]],
) -> None:
    clone, env = clone_env
    install, rest = quickstart("a contributor")
    assert install == [f"git clone {URL} && cd propeval && make setup-light && . .venv/bin/activate"]
    before = {p.name for p in (clone / "questions").iterdir()}
    done = run_block(rest, clone, env)
    assert done.returncode == 0, done.stdout + done.stderr
    [claim] = {p.name for p in (clone / "questions").iterdir()} - before
    assert sorted(p.name for p in (clone / "questions" / claim).iterdir())[0] == "claim.yaml"
    assert len(list((clone / "questions" / claim).glob("i*.yaml"))) == 1
    log = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=clone, capture_output=True, text=True).stdout
    assert log.strip() == f"Add claim {claim}"


def test_the_owners_quickstart_makes_a_corpus_with_pinned_hooks(
    clone_env: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    clone, env = clone_env
    install, rest = quickstart("a corpus owner")
    assert install == [
        "python3 -m venv .venv && . .venv/bin/activate",
        f'pip install pre-commit "propeval @ git+{URL}@v0.2.0"',
    ]
    work = tmp_path / "owner"
    work.mkdir()
    done = run_block([line.replace(URL, str(clone)) for line in rest], work, env)
    assert done.returncode == 0, done.stdout + done.stderr
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    config = (work / "my-corpus/.pre-commit-config.yaml").read_text(encoding="utf-8")
    # The clone has no tag v0.2.0: its HEAD commit is pinned, and init says so (README says it).
    assert f"repo: {clone}" in config and f"rev: {head}" in config
    assert "has no tag v0.2.0" in done.stderr
    assert (work / "my-corpus/.git/hooks/pre-commit").is_file()
    assert "ok: 0 file(s) checked, no problems" in done.stdout


def test_the_evaluators_quickstart_exports_a_release(clone_env: tuple[Path, dict[str, str]]) -> None:
    clone, env = clone_env
    install, rest = quickstart("an evaluator")
    assert install == [f"git clone {URL} && cd propeval && make setup"]
    assert rest[0].split("#")[0].strip() == "make eval-smoke"  # tests/harness/test_eval_smoke.py runs it
    done = run_block(rest[1:], clone, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (clone / "dist/release/items.jsonl").is_file() and (clone / "dist/release/SHA256SUMS").is_file()
