"""What decides what runs or what is enforced is policy, and a pull request cannot change it.

A real git repository: main holds a corpus, its tooling files (workflow, hooks, scripts, Makefile,
.ci, CODEOWNERS, .gitattributes), the schema, the rubrics and an allowlist; each test checks out
``pr``, changes what a hostile contributor would, and runs ``propeval ci --base main``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure, maintainer_key, make_gate_corpus

from helpers import GIT_ENV, CorpusDir, git
from propeval.cli import cli

TOOLING = {
    ".github/workflows/pr.yml": "on: pull_request\njobs:\n  gates:\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - run: propeval ci --base main\n",
    ".github/CODEOWNERS": "* @maintainers\n",
    ".pre-commit-config.yaml": "repos: []\n",
    ".pre-commit-hooks.yaml": "[]\n",
    "scripts/in-venv": '#!/bin/sh\nexec "$@"\n',
    "Makefile": "test:\n\tpytest\n",
    ".ci/run": "#!/bin/sh\nmake test\n",
    "CODEOWNERS": "* @maintainers\n",
    ".gitattributes": "*.yaml text\n",
    "dedup-allowlist.yaml": "pairs: []\n",
}

# path -> (how the pull request changes it, what the message says it decides)
ATTACKS = {
    ".github/workflows/pr.yml": ("replace", "the workflows CI runs and the repository's settings files"),
    ".github/workflows/new.yml": ("add", "the workflows CI runs and the repository's settings files"),
    ".pre-commit-config.yaml": ("replace", "the hooks every git commit runs"),
    ".pre-commit-hooks.yaml": ("replace", "the hooks other repositories install from this one"),
    "scripts/in-venv": ("replace", "what the hooks and the Makefile run"),
    "Makefile": ("replace", "what make setup, run and test run"),
    "GNUmakefile": ("add", "what make setup, run and test run"),
    "setup.py": ("add", "code an install runs"),
    ".ci/run": ("delete", "what CI runs on a fresh clone"),
    "CODEOWNERS": ("delete", "who must review what"),
    "questions/.gitattributes": ("add", "how git checks out, diffs and merges files"),
    "schema.json": ("replace", "the schema every claim and item is checked against"),
    "rubrics/facts-v1/prompt.md": ("replace", "how answers are graded, and the gold sets judges are held to"),
    "rubrics/facts-v1/gold.jsonl": ("delete", "how answers are graded, and the gold sets judges are held to"),
    "pyproject.toml": ("build", "how propeval is built, installed and tested (everything outside [tool.propeval])"),
    "pytest.ini": ("add", "what the tests run (pytest's configuration: plugins, options)"),
    "tox.ini": ("add", "what the tests run (tox's and pytest's configuration)"),
    "questions/conftest.py": ("add", "what the tests run (pytest imports every conftest.py on its way)"),
    ".envrc": ("add", "what a shell runs on entering the folder (direnv)"),
    ".vscode/tasks.json": ("add", "what the editor runs (tasks, launch and settings files)"),
    "tools/sitecustomize.py": ("add", "code Python runs at every start when the folder is on its path"),
    "tools/usercustomize.py": ("add", "code Python runs at every start when the folder is on its path"),
    "tools/evil.pth": ("add", "code Python runs at every start (a .pth file's import lines)"),
    "run-me": ("link", "a link to scripts/in-venv: what the hooks and the Makefile run"),
}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def ci(*extra: str) -> Result:
    return run("ci", "--base", "main", "--step", "check", *extra)


@pytest.fixture(scope="module")
def policy_main(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("policy-main")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", str(base / "xdg-config"))
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        corpus = CorpusDir(base / "corpus")
        mp.chdir(corpus.root)
        make_gate_corpus(corpus)
        configure(corpus, mode="advisory")  # the records are not what these tests are about
        for rel, text in TOOLING.items():
            corpus.write(rel, text)
        git(corpus.root, "init", "-q", "-b", "main")
        git(corpus.root, "config", "commit.gpgsign", "false")
        git(corpus.root, "add", "-A")
        git(corpus.root, "commit", "-qm", "main")
        git(corpus.root, "checkout", "-qb", "pr")
    return base


@pytest.fixture
def repo(policy_main: Path, corpus: Any, in_git: Any, own_user_config: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    shutil.rmtree(corpus.root)
    shutil.copytree(policy_main / "corpus", corpus.root, symlinks=True)
    shutil.copytree(policy_main / "xdg-config", own_user_config, symlinks=True, dirs_exist_ok=True)
    monkeypatch.chdir(corpus.root)
    return corpus


def commit(in_git: Any, message: str = "pr") -> None:
    in_git("add", "-A")
    in_git("commit", "-qm", message)


def attack(repo: Any, path: str, how: str) -> None:
    target = repo.root / path
    if how == "delete":
        target.unlink()
    elif how == "build":
        target.write_text(target.read_text() + '\n[project]\nname = "x"\ndependencies = ["evil-package"]\n')
    elif how == "link":
        target.symlink_to("scripts/in-venv")
    elif path == "schema.json":
        schema = json.loads(target.read_text())
        schema["$defs"]["item"]["properties"]["prompt"]["maxLength"] = 400000
        target.write_text(json.dumps(schema, indent=2))
    else:
        repo.write(path, "# the pull request's own version\n")


@pytest.mark.parametrize("path", list(ATTACKS))
def test_a_change_to_a_policy_file_is_a_policy_change(repo: Any, in_git: Any, path: str) -> None:
    how, what = ATTACKS[path]
    attack(repo, path, how)
    commit(in_git)
    res = ci()
    assert res.exit_code == 1, res.output
    verb = {"replace": "changed", "build": "changed", "add": "added", "delete": "deleted", "link": "added"}[how]
    detail = ": project" if how == "build" else ""
    wanted = f"{path} [policy-change] policy change: needs a maintainer: {path} ({verb}; {what}{detail}"
    assert any(line.startswith(wanted) for line in res.output.splitlines()), res.output
    assert "policy  failed  1 error(s), 0 warning(s)" in res.output.splitlines()


def test_comments_and_layout_of_pyproject_are_not_a_change(repo: Any, in_git: Any) -> None:
    pyproject = repo.root / "pyproject.toml"
    pyproject.write_text("# a comment\n" + pyproject.read_text())
    commit(in_git)
    res = ci()
    assert res.exit_code == 0, res.output


@pytest.mark.slow  # five ci runs and two signed approvals
def test_an_approval_counts_for_those_exact_bytes_only(repo: Any, in_git: Any, tmp_path: Path) -> None:
    repo.write("Makefile", "test:\n\tpytest -q\n")
    repo.write(".github/workflows/pr.yml", TOOLING[".github/workflows/pr.yml"] + "      - run: make test\n")
    commit(in_git, "tooling")
    assert ci().exit_code == 1
    # A contributor's own approval, signed with their own key: approves nothing.
    attacker = tmp_path / "attacker.pem"
    from propeval.signing import new_key

    new_key(attacker, forbidden=[])
    mine = maintainer_key().path
    import os

    os.environ["PROPEVAL_SIGNING_KEY"] = str(attacker)
    try:
        forged = run("ledger", "approve", "--base", "main")
    finally:
        del os.environ["PROPEVAL_SIGNING_KEY"]
    assert forged.exit_code == 0, forged.output
    assert "signed by a key that is not on [tool.propeval.signers] (ci will not count it)" in forged.output
    commit(in_git, "self-approved")
    res = ci()
    assert res.exit_code == 1
    rel = next(line.split()[0] for line in res.output.splitlines() if line.startswith("ledger/approvals/"))
    assert f"{rel} [ledger-signer] approval signed by a key that is not on the base branch's" in res.output
    in_git("rm", "-q", rel)
    commit(in_git, "drop it")
    # The maintainer reviews and approves: ci passes.
    assert mine.is_file()
    approved = run("ledger", "approve", "--base", "main", "--note", "pytest -q")
    assert approved.exit_code == 0, approved.output
    lines = approved.output.splitlines()
    assert any(
        line.startswith("note: ledger/approvals/") and "approved 2 change(s), signed by maintainer" in line
        for line in lines
    )
    assert "note: approved Makefile (changed; what make setup, run and test run)" in lines
    commit(in_git, "approved")
    res = ci()
    assert res.exit_code == 0, res.output
    assert any(
        line.startswith("note: policy: Makefile: change approved by ledger/approvals/")
        for line in res.output.splitlines()
    )
    # One more byte in the Makefile: that approval no longer applies.
    repo.write("Makefile", "test:\n\tpytest -q -x\n")
    commit(in_git, "one more flag")
    res = ci()
    assert res.exit_code == 1
    assert "Makefile [policy-change] policy change: needs a maintainer: Makefile (changed;" in res.output
    # The approval binds its changes together: with one of them changed, it approves none of them.
    assert ".github/workflows/pr.yml [policy-change]" in res.output


@pytest.mark.slow  # three ci runs and a signed approval
def test_an_approval_binds_its_pull_request_not_a_copy_or_a_subset(repo: Any, in_git: Any) -> None:
    makefile, workflow = "test:\n\tpytest -q\n", TOOLING[".github/workflows/pr.yml"] + "      - run: make test\n"
    repo.write("Makefile", makefile)
    repo.write(".github/workflows/pr.yml", workflow)
    commit(in_git, "tooling")
    approved = run("ledger", "approve", "--base", "main", "--note", "pytest -q")
    assert approved.exit_code == 0, approved.output
    commit(in_git, "approved")
    assert ci().exit_code == 0
    (record,) = list(repo.root.rglob("approvals/*.json"))
    rel, signed = record.relative_to(repo.root), record.read_bytes()
    # A copy: another branch off main with the very same bytes, and the signed approval copied in.
    in_git("checkout", "-qb", "copy", "main")
    repo.write("Makefile", makefile)
    repo.write(".github/workflows/pr.yml", workflow)
    repo.write(str(rel), signed)
    commit(in_git, "the same bytes")
    res = ci()
    assert res.exit_code == 1, res.output
    assert "Makefile [policy-change] policy change: needs a maintainer" in res.output
    # A subset: the approved branch, with one of the two approved changes taken back.
    in_git("checkout", "-q", "pr")
    in_git("checkout", "-qb", "subset")
    repo.write(".github/workflows/pr.yml", TOOLING[".github/workflows/pr.yml"])
    commit(in_git, "the Makefile change only")
    res = ci()
    assert res.exit_code == 1, res.output
    assert "Makefile [policy-change] policy change: needs a maintainer" in res.output


def test_a_pr_cannot_loosen_the_schema_its_items_are_checked_against(repo: Any, in_git: Any) -> None:
    """Finding 4: a wider prompt.maxLength and a dropped framing enum, with schema_version bumped and
    a CHANGELOG heading: the schema is a policy change, and the items are checked with main's."""
    path = repo.root / "schema.json"
    schema = json.loads(path.read_text())
    item = schema["$defs"]["item"]["properties"]
    old_max = item["prompt"]["maxLength"]
    item["prompt"]["maxLength"] = 400000
    item["framing"].pop("enum")
    major, minor, patch = map(int, schema["schema_version"].split("."))
    schema["schema_version"] = f"{major}.{minor + 1}.{patch}"
    path.write_text(json.dumps(schema, indent=2))
    repo.write("CHANGELOG.md", f"# Changelog\n\n## {schema['schema_version']}\n\n- prompts may be longer\n")
    repo.item("i0004", framing="sarcastic", prompt="Why? " * (old_max // 5 + 10))
    commit(in_git, "looser schema, and an item that needs it")
    res = run("ci", "--base", "main", "--step", "check", "--step", "schema")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert any(
        line.startswith("schema.json [policy-change] policy change: needs a maintainer: schema.json (changed;")
        for line in lines
    )
    assert any(
        line.startswith("questions/c0001/i0004.yaml:") and "[schema] 'sarcastic' is not one of" in line
        for line in lines
    ), res.output
    assert any(
        line.startswith("questions/c0001/i0004.yaml:") and "[schema]" in line and "long" in line for line in lines
    ), res.output
    assert "note: policy: claims and items are checked against schema.json as at main, not the tree's" in lines
    # the schema gate still describes the change itself, and finds the version and CHANGELOG in order
    bump = f"{major}.{minor}.{patch} -> {schema['schema_version']}"
    assert f"note: schema: breaking: 0, additive: 2, docs: 0 -> needs a minor bump ({bump})" in lines
    assert lines[-7:] == [
        "------  --------  ------------------------",
        "policy  failed    1 error(s), 0 warning(s)",
        "check   failed    2 error(s), 0 warning(s)",
        "schema  advisory  0 error(s), 2 warning(s)",
        "advisory: warnings only (an advisory gate's problems are warnings): reported, and they do not fail the run",
        "failed: errors: they fail the run (exit 1)",
        "ci: exit 1",
    ], res.output


@pytest.mark.slow  # over 0.5 CPU-s: out of the fast lane, in make test
def test_an_approved_pyproject_is_the_policy_of_that_run(repo: Any, in_git: Any) -> None:
    """A [tool.propeval] change approved for its exact bytes: that run uses the tree's policy."""
    pyproject = repo.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('source_blocklist = ["globaltimes.cn", "rt.com"]', "source_blocklist = []")
    )
    repo.claim("c0002", source_url="https://www.globaltimes.cn/page/201906/1153000.shtml", title="Another claim")
    commit(in_git, "an empty blocklist, and a claim it lets through")
    res = ci()
    assert res.exit_code == 1
    assert "[tool.propeval] source_blocklist is [] here but ['globaltimes.cn', 'rt.com'] at main" in res.output
    assert "globaltimes.cn" in next(line for line in res.output.splitlines() if line.startswith("questions/c0002"))
    approved = run("ledger", "approve", "--base", "main", "pyproject.toml")
    assert approved.exit_code == 0, approved.output
    assert (
        "note: approved pyproject.toml (changed; the policy in [tool.propeval]: [tool.propeval] source_blocklist)"
        in approved.output.splitlines()
    )
    commit(in_git, "approved")
    res = ci()
    assert res.exit_code == 0, res.output
    assert any(
        line.startswith("note: policy: pyproject.toml: change approved by ledger/approvals/")
        for line in res.output.splitlines()
    )


@pytest.mark.slow  # over 0.5 CPU-s: out of the fast lane, in make test
def test_a_blocklisted_official_statement_needs_a_maintainers_approval(repo: Any, in_git: Any) -> None:
    """source_role: official_statement lets a claim cite a state outlet: a pull request
    does not approve its own exception; a maintainer's signed approval, or the base, does."""
    statement = "https://www.rt.com/russia/1-foreign-ministry-statement/"
    repo.claim("c0009", source_url=statement)
    commit(in_git, "cite rt.com")
    res = ci()
    assert res.exit_code == 1
    assert "questions/c0009/claim.yaml:9:13 [sources] source_url is on the source blocklist (rt.com)" in res.output
    repo.claim("c0009", source_url=statement, source_role="official_statement")
    commit(in_git, "cite rt.com for what it says the ministry said")
    res = ci()
    assert res.exit_code == 1
    assert "[sources]" not in res.output  # the check accepts the declared role ...
    assert (  # ... and the policy step holds it for a maintainer
        "questions/c0009/claim.yaml [policy-change] policy change: needs a maintainer: questions/c0009/claim.yaml "
        "(added; an exception to the source blocklist: it cites rt.com (https://www.rt.com/russia/1-foreign-ministry-"
        "statement) as the primary source of an official statement (source_role: official_statement)); a pull request "
        "changes it only with a maintainer's approval"
    ) in res.output
    approved = run("ledger", "approve", "--base", "main", "--note", "the ministry's statement, as RT carried it")
    assert approved.exit_code == 0, approved.output
    assert any(
        ln.startswith("note: approved questions/c0009/claim.yaml (added; an exception")
        for ln in approved.output.splitlines()
    )
    commit(in_git, "approved")
    assert ci().exit_code == 0
    # One more byte in the claim: the approval no longer applies.
    repo.claim("c0009", source_url=statement, source_role="official_statement", anchor="Second paragraph")
    commit(in_git, "anchor")
    assert ci().exit_code == 1
    # Once on the base (merged: reviewed), an edit that keeps the source and the role is no exception.
    in_git("checkout", "-q", "main")
    in_git("merge", "-q", "--no-ff", "-m", "merge pr", "pr")
    in_git("checkout", "-qb", "pr2")
    repo.claim("c0009", source_url=statement, source_role="official_statement", anchor="Third paragraph")
    commit(in_git, "anchor again")
    res = ci()
    assert res.exit_code == 0, res.output


def test_a_branch_behind_its_base_is_not_blamed_for_the_base_s_newer_changes(repo: Any, in_git: Any) -> None:
    """ci --base compares the branch with its merge base: what main changed since the branch forked
    (a [tool.propeval] key, a policy file) is main's, not the pull request's."""
    repo.write("questions/note.txt", "a data change\n")
    commit(in_git, "the pull request's own change")
    in_git("checkout", "-q", "main")
    pyproject = repo.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("max_attempts = 2", "max_attempts = 3"))
    repo.write("Makefile", "test:\n\tpytest -q\n")
    commit(in_git, "main moves on")
    in_git("checkout", "-q", "pr")
    res = ci()
    assert res.exit_code == 0, res.output
    assert "policy-change" not in res.output
