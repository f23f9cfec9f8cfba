"""--changed-since on real git repositories: what changed, stable ids, shallow clones, missing refs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner

from propeval.cli import cli


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


def commit_base(corpus, git) -> None:  # type: ignore[no-untyped-def]
    corpus.claim()
    corpus.item()
    corpus.item("i0002", language="ru", prompt="Что произошло в Пекине 4 июня 1989 года?", translation_of="i0001")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "feature")


def test_only_changed_files_are_reported(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    corpus.write(
        "questions/c0001/i0001.yaml",
        "id: i0001\nclaim_id: c0001\nlanguage: en\nframing: bad\n"
        "question_type: named_fact\nprompt: x\nstatus: active\n",
    )
    in_git("add", "-A")
    in_git("commit", "-qm", "base with a bad item")
    in_git("checkout", "-qb", "feature")
    corpus.claim()
    corpus.item("i0002", language="ru", prompt="Что произошло?", translation_of="i0001")
    code, lines = run("check", "--changed-since", "main")
    assert code == 0, lines
    assert lines == ["ok: 2 file(s) checked, no problems"]
    code, lines = run("check")
    assert code == 1
    assert lines[0].startswith("questions/c0001/i0001.yaml:4:10 [schema] 'bad' is not one of")


def test_deleted_id_is_an_error_and_retiring_is_the_way_out(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    commit_base(corpus, in_git)
    in_git("rm", "-q", "questions/c0001/i0002.yaml")
    in_git("commit", "-qm", "drop a translation")
    code, lines = run("check", "--changed-since", "main")
    assert code == 1
    assert lines[0] == (
        "questions/c0001/i0002.yaml [stable-ids] item id 'i0002' existed at main and is gone now; ids are never "
        "deleted or renamed: restore the file and set status: retired with a retired_reason"
    )
    in_git("checkout", "-q", "main", "--", "questions/c0001/i0002.yaml")
    text = (corpus.root / "questions/c0001/i0002.yaml").read_text(encoding="utf-8")
    corpus.write(
        "questions/c0001/i0002.yaml", text.replace("status: active", "status: retired\nretired_reason: Superseded.")
    )
    code, lines = run("check", "--changed-since", "main")
    assert (code, lines) == (0, ["ok: 1 file(s) checked, no problems"])


def test_renamed_id_is_an_error_but_a_moved_file_is_fine(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    commit_base(corpus, in_git)
    in_git("mv", "questions/c0001/i0002.yaml", "questions/c0001/i0003.yaml")
    text = (corpus.root / "questions/c0001/i0003.yaml").read_text(encoding="utf-8")
    corpus.write("questions/c0001/i0003.yaml", text.replace("id: i0002", "id: i0003"))
    code, lines = run("check", "--changed-since", "main")
    assert code == 1
    assert lines[0].startswith("questions/c0001/i0002.yaml [stable-ids] item id 'i0002' existed at main")

    # Moving a claim with its items to another folder name is a rename of the claim: an error.
    # Moving an item file without changing its id keeps the id: fine (ids come from file names).
    in_git("checkout", "-qf", "feature")
    in_git("clean", "-qfd")
    corpus.claim("c0002")
    in_git("mv", "questions/c0001/i0002.yaml", "questions/c0002/i0002.yaml")
    text = (corpus.root / "questions/c0002/i0002.yaml").read_text(encoding="utf-8")
    corpus.write(
        "questions/c0002/i0002.yaml",
        text.replace("claim_id: c0001", "claim_id: c0002").replace("translation_of: i0001\n", ""),
    )
    code, lines = run("check", "--changed-since", "main")
    assert (code, lines) == (0, ["ok: 2 file(s) checked, no problems"])


def test_missing_ref_is_a_clear_error(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    commit_base(corpus, in_git)
    result = CliRunner().invoke(cli, ["check", "--changed-since", "origin/nope"], catch_exceptions=False)
    assert result.exit_code == 3
    assert result.output.strip() == (
        "propeval: error: git ref 'origin/nope' does not exist here; fetch it first (git fetch origin origin/nope) "
        "or name an existing branch, tag or commit"
    )


def test_shallow_clone_is_a_clear_error(corpus, in_git, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    commit_base(corpus, in_git)
    in_git("checkout", "-q", "main")
    corpus.item("i0003", language="de", prompt="Was geschah am 4. Juni 1989 in Peking?", translation_of="i0001")
    in_git("add", "-A")
    in_git("commit", "-qm", "second")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{corpus.root}", str(clone)], check=True)
    monkeypatch.chdir(clone)
    result = CliRunner().invoke(cli, ["check", "--changed-since", "HEAD"], catch_exceptions=False)
    assert result.exit_code == 3
    assert "this clone is shallow" in result.output
    assert "fetch-depth: 0" in result.output


def test_schema_change_rechecks_everything(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    commit_base(corpus, in_git)
    schema = (corpus.root / "schema.json").read_text(encoding="utf-8")
    corpus.write("schema.json", schema.replace('"enum": ["neutral", "loaded"]', '"enum": ["loaded"]'))
    code, lines = run("check", "--changed-since", "main")
    assert code == 1
    assert lines[0] == (
        "questions/c0001/i0001.yaml:4:10 [schema] 'neutral' is not one of ['loaded']; use one of those values"
    )
    assert len([line for line in lines if "[schema]" in line]) == 2  # both unchanged items are re-checked
    assert "note: schema.json changed since main: checking the whole corpus" in lines


def test_changed_since_head_before_the_first_commit_checks_everything(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    # A pre-commit hook with --changed-since HEAD runs before the repository has any commit.
    corpus.claim()
    corpus.item(framing="balanced")
    code, lines = run("check", "--changed-since", "HEAD")
    assert code == 1
    assert lines[0].startswith("questions/c0001/i0001.yaml:4:10 [schema] 'balanced' is not one of")
    assert lines[-1] == "1 error(s), 0 warning(s) in 2 file(s) checked"


def test_the_empty_tree_is_hashed_from_stdin_not_from_dev_null(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    # A /dev/null replaced by a non-empty regular file (as an atomic write by root once did on a CI
    # machine) must not break --changed-since HEAD before the first commit.
    from propeval import gitutil

    assert gitutil._empty_tree(corpus.root) == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def test_an_atomic_write_to_a_fifo_writes_into_it_and_leaves_it_a_fifo(tmp_path: Path) -> None:
    import os
    import stat
    import threading

    from propeval.fsutil import atomic_write

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, "through the pipe\n")
    reader.join(timeout=10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
