"""`propeval init` pins a revision the hooks repository has, `schema show`, the editor's schemas,
and `make release` (the corpus owner's first hour)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import GIT_ENV, REPO, git
from propeval import __version__
from propeval.builtin import SCHEMA
from propeval.cli import cli

TAG = f"v{__version__}"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def hooks_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository standing in for propeval's: one commit, no tag."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    repo = tmp_path / "propeval"
    repo.mkdir()
    (repo / ".pre-commit-hooks.yaml").write_text("[]\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hooks")
    return repo


def test_init_pins_the_release_tag_when_the_repository_has_it(hooks_repo: Path, tmp_path: Path) -> None:
    git(hooks_repo, "tag", TAG)
    code, _, err = run("init", str(tmp_path / "corpus"), "--hooks-repo", str(hooks_repo))
    assert code == 0, err
    assert f"note: pinned {TAG}, the tag of this propeval release" in err.splitlines()
    config = (tmp_path / "corpus/.pre-commit-config.yaml").read_text(encoding="utf-8")
    assert f"  - repo: {hooks_repo}\n    rev: {TAG}\n" in config
    # pip takes no bare path: the workflow installs from a git+file:// URL.
    workflow = (tmp_path / "corpus/.github/workflows/propeval.yml").read_text(encoding="utf-8")
    assert f'pip install "propeval @ git+file://localhost{hooks_repo}@{TAG}"' in workflow
    assert f'#   pip install "propeval[dedup-light] @ git+file://localhost{hooks_repo}@{TAG}"' in config


def test_init_pins_the_head_commit_when_there_is_no_tag_and_says_so(
    hooks_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = git(hooks_repo, "rev-parse", "HEAD").strip()
    monkeypatch.chdir(tmp_path)
    code, _, err = run("init", "corpus", "--hooks-repo", "propeval")  # a relative path: written absolute
    assert code == 0, err
    assert (
        f"note: {hooks_repo} has no tag {TAG} (it has no release tag yet): pinned its HEAD commit {head[:12]}; "
        "`pre-commit autoupdate` moves the pin to the newest tag once there is one"
    ) in err.splitlines()
    config = (tmp_path / "corpus/.pre-commit-config.yaml").read_text(encoding="utf-8")
    assert f"  - repo: {hooks_repo}\n    rev: {head}\n" in config
    workflow = (tmp_path / "corpus/.github/workflows/propeval.yml").read_text(encoding="utf-8")
    assert f'pip install "propeval @ git+file://localhost{hooks_repo}@{head}"' in workflow


def test_init_without_a_reachable_repository_writes_nothing(tmp_path: Path) -> None:
    code, out, err = run("init", str(tmp_path / "corpus"), "--hooks-repo", str(tmp_path / "nowhere"))
    assert code == 3 and not out
    assert err.startswith(f"propeval: error: cannot list the tags of {tmp_path / 'nowhere'} to pin a revision")
    assert err.rstrip().endswith(
        "check --hooks-repo, or give the revision with --rev (a tag or a commit of that repository)"
    )
    assert not (tmp_path / "corpus").exists()
    # --rev is pinned as given, and an scp-like address becomes an ssh:// URL for pip.
    code, _, err = run("init", str(tmp_path / "c2"), "--hooks-repo", "git@github.com:org/propeval.git", "--rev", "v9")
    assert code == 0, err
    workflow = (tmp_path / "c2/.github/workflows/propeval.yml").read_text(encoding="utf-8")
    assert 'pip install "propeval @ git+ssh://git@github.com/org/propeval.git@v9"' in workflow
    code, _, err = run("init", str(tmp_path / "c3"), "--hooks-repo", "ext::sh -c touch% /tmp/x", "--rev", "v9")
    assert code == 2 and "give the URL (or path) of propeval's git repository" in err


def test_init_gives_the_editor_the_schemas_and_check_says_when_they_are_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "corpus"
    (root / ".vscode").mkdir(parents=True)
    assert run("init", str(root), "--hooks-repo", "https://example.invalid/p", "--rev", "v1")[0] == 0
    settings = json.loads((root / ".vscode/settings.json").read_text(encoding="utf-8"))
    assert settings == {
        "yaml.schemas": {
            "./.propeval/claim.schema.json": ["questions/*/claim.yaml"],
            "./.propeval/item.schema.json": ["questions/*/i*.yaml"],
        }
    }
    for kind in ("claim", "item"):
        assert (root / f".propeval/{kind}.schema.json").read_text(encoding="utf-8") == run(
            "schema", "show", "--kind", kind
        )[1]
    # An existing settings file is the user's: left alone, with what to add.
    other = tmp_path / "other"
    (other / ".vscode").mkdir(parents=True)
    (other / ".vscode/settings.json").write_text('{"editor.tabSize": 2}\n', encoding="utf-8")
    code, _, err = run("init", str(other), "--hooks-repo", "https://example.invalid/p", "--rev", "v1")
    assert code == 0
    assert (other / ".vscode/settings.json").read_text(encoding="utf-8") == '{"editor.tabSize": 2}\n'
    assert (
        'note: .vscode/settings.json exists and was left as it is; to give the editor the schemas, add "yaml.schemas"'
        in err
    )

    monkeypatch.chdir(root)
    assert run("check")[1] == "ok: 0 file(s) checked, no problems\n"
    (root / ".propeval/item.schema.json").write_text("{}\n", encoding="utf-8")
    code, out, _ = run("check")
    assert code == 0
    fix = "propeval schema show --corpus --kind item -o .propeval/item.schema.json"
    assert (
        f"note: .propeval/item.schema.json (the editor's schema) differs from the schema check uses; refresh it: {fix}"
        in out
    )
    assert run(*fix.split()[1:])[0] == 0
    assert run("check")[1] == "ok: 0 file(s) checked, no problems\n"


def test_schema_show_prints_the_builtin_schema_and_writes_into_a_fifo_without_replacing_it(tmp_path: Path) -> None:
    code, out, _ = run("schema", "show")
    assert code == 0 and out == SCHEMA.read_text(encoding="utf-8")
    claim = json.loads(run("schema", "show", "--kind", "claim")[1])
    assert claim["allOf"] == [{"$ref": "#/$defs/claim"}] and "if" not in claim
    assert claim["$id"].endswith("-claim.json")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, _ = run("schema", "show", "-o", str(fifo))
    reader.join(timeout=30)
    assert code == 0 and got == [SCHEMA.read_bytes()]
    assert fifo.is_fifo()  # written to, not renamed over (as root, /dev/null would have become a file)


@pytest.mark.slow  # make and git in a scratch repository
def test_make_release_tags_the_version_after_its_changelog_heading(tmp_path: Path) -> None:
    repo = tmp_path / "propeval"
    for rel in ("Makefile", "pyproject.toml", "CHANGELOG.md", "tools/propeval/__init__.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, repo / rel)
    env = {**os.environ, **GIT_ENV}

    def sh(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True, check=False)

    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "release"]):
        assert sh("git", *args).returncode == 0
    done = sh("make", "--no-print-directory", "release")
    assert done.returncode == 0, done.stderr
    assert f"release: tagged {TAG}; publish it with: git push origin {TAG}" in done.stdout
    assert sh("git", "tag", "--list").stdout.split() == [TAG]
    again = sh("make", "--no-print-directory", "release")
    assert again.returncode != 0 and f"release: {TAG} is tagged already" in again.stderr
    # A new version without its CHANGELOG heading, or an uncommitted tree, is refused.
    text = (
        (repo / "pyproject.toml").read_text(encoding="utf-8").replace(f'version = "{__version__}"', 'version = "9.9.9"')
    )
    (repo / "pyproject.toml").write_text(text, encoding="utf-8")
    dirty = sh("make", "--no-print-directory", "release")
    assert dirty.returncode != 0 and "__version__ is not 9.9.9" in dirty.stderr
    init = (repo / "tools/propeval/__init__.py").read_text(encoding="utf-8").replace(__version__, "9.9.9")
    (repo / "tools/propeval/__init__.py").write_text(init, encoding="utf-8")
    dirty = sh("make", "--no-print-directory", "release")
    assert dirty.returncode != 0 and "release: commit your changes first" in dirty.stderr
    sh("git", "commit", "-qam", "9.9.9")
    missing = sh("make", "--no-print-directory", "release")
    assert missing.returncode != 0
    assert "CHANGELOG.md has no '## propeval v9.9.9 (package release)' heading" in missing.stderr
    assert sh("git", "tag", "--list").stdout.split() == [TAG]
