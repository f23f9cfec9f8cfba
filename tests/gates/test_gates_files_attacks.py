"""A symlinked item and a duplicate id from two branches, as a pull request would make them: real
git, the real `propeval ci`.

1. A symlinked item used to skip every check: changed-path detection resolved the link away, the
   loader read through it, `ci` passed, and `export` shipped it.
5. Two branches made side by side both added i0172 and merged cleanly into a duplicate id; two
   parallel `propeval new`s picked the same id (that one is in tests/check/test_id_safety.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure

from helpers import GIT_ENV, REPO, item_yaml
from propeval.cli import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def main_with_records(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    """main: items with fresh answerability records (made online against a loopback judge); branch `pr`."""
    srv = loopback()
    configure(gate_corpus, srv.base_url)
    assert run("gate", "answerability", "--online", "--all").exit_code == 0
    configure(gate_corpus)
    gate_corpus.write(".gitignore", "runs/\n")
    gate_corpus.write("docs/example.yaml", item_yaml("i0163", prompt="What did the government say about it?"))
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus with answerability records")
    in_git("checkout", "-qb", "pr")


SYMLINK = (
    "questions/c0001/i0163.yaml [file-symlink] a symbolic link (to '../../docs/example.yaml'), not a regular "
    "file: a link would be checked under one name and read from another; replace the link with the file itself: "
    "git rm --cached questions/c0001/i0163.yaml, then put the real content at that path"
)


@pytest.mark.slow
def test_attack_1_a_symlinked_item_fails_ci_check_dedup_and_export(
    gate_corpus: Any, in_git: Any, loopback: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    main_with_records(gate_corpus, in_git, loopback)
    # The honest path first: the same branch without the link passes every step.
    res = run("ci", "--base", "main")
    assert res.exit_code == 0, res.output

    os.symlink("../../docs/example.yaml", gate_corpus.root / "questions/c0001/i0163.yaml")
    in_git("add", "-A")
    in_git("commit", "-qm", "add i0163")
    res = run("ci", "--base", "main")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert lines.count(SYMLINK) == 3  # check, groups and dedup each name it
    rows = lines[lines.index(next(x for x in lines if x.startswith("-----"))) + 1 : -1]
    # the table's rows, then what its words mean ("failed: errors: ...")
    table = {line.split()[0]: line.split()[1] for line in rows if not line.split()[0].endswith(":")}
    assert table == {
        "policy": "ok",
        "check": "failed",
        "ledger": "skipped",
        "groups": "failed",
        "dedup": "failed",
        "answerability": "ok",
        "judge": "skipped",
        "schema": "ok",
    }
    assert lines[-1] == "ci: exit 1"

    # The hook on that file checks it (it used to say "ok: 0 file(s) checked").
    res = run("check", "questions/c0001/i0163.yaml")
    assert (res.exit_code, res.output.splitlines()) == (1, [SYMLINK, "1 error(s), 0 warning(s) in 1 file(s) checked"])

    # Export refuses, and writes nothing.
    out = tmp_path / "release"
    res = run("export", "--out", str(out))
    assert res.exit_code == 1
    assert SYMLINK in res.output.splitlines()
    assert not out.exists()


def test_attack_1_without_dedup_a_link_anywhere_under_the_ledger_or_rubrics_fails_ci(
    gate_corpus: Any, in_git: Any, loopback: Any, tmp_path: Path
) -> None:
    main_with_records(gate_corpus, in_git, loopback)
    record = gate_corpus.root / "ledger/answerability/i0001.json"
    forged = gate_corpus.root / "docs/i0001.json"
    forged.write_bytes(record.read_bytes())
    record.unlink()
    os.symlink("../../docs/i0001.json", record)
    in_git("add", "-A")
    in_git("commit", "-qm", "move a record")
    res = run("ci", "--base", "main", "--skip", "dedup")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert any(line.startswith("ledger/answerability/i0001.json [file-symlink] a symbolic link") for line in lines)
    # The gate reading the record refuses it too: the record is not trusted through a link.
    assert any(
        line.startswith("ledger/answerability/i0001.json [file-symlink] i0001: a symbolic link") for line in lines
    ), res.output


def test_a_deleted_ledger_record_is_named_by_ci(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    main_with_records(gate_corpus, in_git, loopback)
    in_git("rm", "-q", "ledger/answerability/i0002.json")
    in_git("commit", "-qm", "drop a record")
    res = run("ci", "--base", "main", "--step", "answerability")
    assert res.exit_code == 1, res.output
    assert (
        "questions/c0001/i0002.yaml [answerability] i0002: no answerability record "
        "(ledger/answerability/i0002.json); a maintainer records this (propeval gate answerability --online i0002, "
        "from a trusted install: SECURITY.md); nothing for a contributor to run"
    ) in res.output.splitlines()


def test_a_deleted_item_fails_stable_ids_in_ci(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    main_with_records(gate_corpus, in_git, loopback)
    in_git("rm", "-q", "questions/c0001/i0002.yaml")
    in_git("commit", "-qm", "drop an item")
    res = run("ci", "--base", "main", "--step", "check")
    assert res.exit_code == 1, res.output
    assert next(x for x in res.output.splitlines() if not x.startswith("note: ")).startswith(
        "questions/c0001/i0002.yaml [stable-ids] item id 'i0002' existed at main and is gone now"
    )


@pytest.mark.slow
def test_attack_5_two_branches_both_adding_i0172_fail_ci_then_renumber_passes(
    gate_corpus: Any, in_git: Any, loopback: Any
) -> None:
    srv = loopback()
    main_with_records(gate_corpus, in_git, loopback)
    in_git("checkout", "-q", "main")
    in_git("checkout", "-qb", "theirs")
    gate_corpus.item("i0172", prompt="How many people died in Beijing in June 1989?")
    configure(gate_corpus, srv.base_url)
    res = run("gate", "answerability", "--online", "i0172")
    assert res.exit_code == 0, res.output
    configure(gate_corpus)
    in_git("add", "-A")
    in_git("commit", "-qm", "their i0172")
    in_git("checkout", "-q", "pr")
    gate_corpus.claim("c0002", title="Who gave the order")
    gate_corpus.item("i0172", "c0002", prompt="Who gave the order to clear Tiananmen Square?")
    configure(gate_corpus, srv.base_url)
    res = run("gate", "answerability", "--online", "i0172")
    assert res.exit_code == 0, res.output
    configure(gate_corpus)
    in_git("add", "-A")
    in_git("commit", "-qm", "my i0172")
    # Theirs lands first.
    in_git("checkout", "-q", "main")
    in_git("merge", "-q", "--ff-only", "theirs")
    in_git("checkout", "-q", "pr")

    res = run("ci", "--base", "main", "--skip", "dedup")
    assert res.exit_code == 1, res.output
    assert (
        "questions/c0002/i0172.yaml:1:5 [id-collision] item id 'i0172' is new on this branch, but main already "
        "has it for questions/c0001/i0172.yaml; ids are unique: renumber yours with "
        "`propeval renumber questions/c0002/i0172.yaml --base main`"
    ) in res.output.splitlines()

    res = run("renumber", "questions/c0002/i0172.yaml", "--base", "main")
    assert res.exit_code == 0, res.output
    assert "renumbered item i0172 -> i0173" in res.output
    # renumber re-binds the moved record, so its signature no longer matches: ci says so, and a
    # maintainer (not the contributor) signs it again.
    res = run("ci", "--base", "main", "--skip", "dedup")
    assert res.exit_code == 1, res.output
    assert "ledger/answerability/i0173.json [ledger-signature] i0173: the signature by maintainer does not match" in (
        res.output
    )
    res = run("ledger", "resign", "ledger/answerability/i0173.json")
    assert res.exit_code == 0, res.output
    in_git("add", "-A")
    in_git("commit", "-qm", "renumber i0172 -> i0173")
    res = run("ci", "--base", "main", "--skip", "dedup")
    assert res.exit_code == 0, res.output
    in_git("checkout", "-q", "main")
    in_git("merge", "-q", "--no-edit", "pr")
    assert run("check").exit_code == 0


@pytest.mark.slow
def test_the_pre_commit_hook_checks_a_symlinked_item(corpus: Any, tmp_path: Path) -> None:
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        **GIT_ENV,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "HF_HUB_OFFLINE": "1",
    }
    root = corpus.root
    shutil.copy(REPO / ".pre-commit-config.yaml", root / ".pre-commit-config.yaml")
    (root / "scripts").mkdir()
    shutil.copy2(REPO / "scripts/in-venv", root / "scripts/in-venv")  # the hooks' entry point
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, env=env, check=True, capture_output=True)
    corpus.claim()
    corpus.item()
    corpus.write("docs/example.yaml", item_yaml("i0163"))
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    # The first commit skips the hooks: tests/check/test_precommit.py shows a good commit passing them.
    ok = subprocess.run(
        ["git", "commit", "--no-verify", "-qm", "claim"], cwd=root, env=env, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    os.symlink("../../docs/example.yaml", root / "questions/c0001/i0163.yaml")
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    bad = subprocess.run(["git", "commit", "-m", "a linked item"], cwd=root, env=env, capture_output=True, text=True)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert re.search(r"propeval hook \(check, groups, dedup on what is staged\)\.+Failed", bad.stderr), bad.stderr
    assert SYMLINK in bad.stderr
    assert "ok: 0 file(s) checked" not in bad.stderr


def test_a_record_for_no_active_item_or_rubric_is_named_by_ci(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    """A record the gates would never read (an unknown item, a retired one, no such rubric) is not waved through."""
    main_with_records(gate_corpus, in_git, loopback)
    record = (gate_corpus.root / "ledger/answerability/i0001.json").read_bytes()
    gate_corpus.write("ledger/answerability/i9999.json", record.decode("utf-8"))
    gate_corpus.write("ledger/judge/no-such-rubric.json", "{}\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "records for nothing")
    res = run("ci", "--base", "main", "--step", "ledger")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert (
        "ledger/answerability/i9999.json [ledger-orphan] the answerability record ledger/answerability/i9999.json "
        "was added or changed since main, but there is no active item 'i9999': a record for a retired or unknown "
        "active item is evidence of nothing; remove it from the pull request"
    ) in lines
    assert any(x.startswith("ledger/judge/no-such-rubric.json [ledger-orphan]") for x in lines), res.output
