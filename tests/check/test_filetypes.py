"""No file evades the checks: links, hard links and special files are refused by check and the loader."""

from __future__ import annotations

import os
import shutil
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import REPO, item_yaml
from propeval.cli import cli
from propeval.judge.rubric import load_rubric
from propeval.loader import LoadError, load_file


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


SYMLINK_FIX = "git rm --cached {p}, then put the real content at that path"


def test_a_symlinked_item_is_refused_by_name_and_never_read(good_corpus) -> None:  # type: ignore[no-untyped-def]
    good_corpus.write("docs/example.yaml", item_yaml("i0163"))
    os.symlink("../../docs/example.yaml", good_corpus.root / "questions/c0001/i0163.yaml")
    expected = (
        "questions/c0001/i0163.yaml [file-symlink] a symbolic link (to '../../docs/example.yaml'), not a regular "
        "file: a link would be checked under one name and read from another; replace the link with the file "
        "itself: " + SYMLINK_FIX.format(p="questions/c0001/i0163.yaml")
    )
    code, lines = run("check")
    assert (code, lines) == (1, [expected, "1 error(s), 0 warning(s) in 3 file(s) checked"])
    # The hook passes the link's own name: it is checked (1 file), not resolved away (0 files).
    code, lines = run("check", "questions/c0001/i0163.yaml")
    assert (code, lines) == (1, [expected, "1 error(s), 0 warning(s) in 1 file(s) checked"])


def test_a_symlinked_claim_folder_is_refused(good_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "elsewhere"
    (outside / "c0002").mkdir(parents=True)
    os.symlink(outside / "c0002", good_corpus.root / "questions/c0002")
    code, lines = run("check", "questions/c0001/i0001.yaml")
    assert code == 1
    assert lines[0].startswith(f"questions/c0002 [file-symlink] a symbolic link (to '{outside / 'c0002'}')")


def test_a_hard_link_is_refused(good_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside.yaml"
    outside.write_text(item_yaml("i0002"), encoding="utf-8")
    os.link(outside, good_corpus.root / "questions/c0001/i0002.yaml")
    code, lines = run("check")
    assert code == 1
    assert lines[0] == (
        "questions/c0001/i0002.yaml [file-hardlink] a regular file with 2 hard links: its bytes are shared with "
        "another file, perhaps outside the repository, which can change them unseen; give it its own copy: "
        "cp questions/c0001/i0002.yaml questions/c0001/i0002.yaml.copy && "
        "mv questions/c0001/i0002.yaml.copy questions/c0001/i0002.yaml"
    )
    # The fix in the message works.
    path = good_corpus.root / "questions/c0001/i0002.yaml"
    copy = path.with_name("i0002.yaml.copy")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)
    assert run("check") == (0, ["ok: 3 file(s) checked, no problems"])


def test_a_fifo_is_refused_without_being_opened(good_corpus) -> None:  # type: ignore[no-untyped-def]
    fifo = good_corpus.root / "questions/c0001/i0002.yaml"
    os.mkfifo(fifo)
    # Opening a FIFO for reading blocks until a writer comes; a watchdog writer unblocks a
    # regression so that the test fails instead of hanging.
    opened = threading.Event()

    def watchdog() -> None:
        if not opened.wait(5):
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # raises if no reader: then nothing hung
            os.close(fd)

    threading.Thread(target=watchdog, daemon=True).start()
    code, lines = run("check")
    opened.set()
    assert code == 1
    assert lines[0] == (
        "questions/c0001/i0002.yaml [file-special] a FIFO (named pipe), not a regular file: propeval never opens "
        "it; remove it: rm questions/c0001/i0002.yaml"
    )


def test_a_socket_under_the_ledger_is_refused(good_corpus) -> None:  # type: ignore[no-untyped-def]
    folder = good_corpus.root / "ledger/answerability"
    folder.mkdir(parents=True)
    sock = socket.socket(socket.AF_UNIX)
    cwd = os.getcwd()
    try:
        os.chdir(folder)  # AF_UNIX paths are short; bind relative to the folder
        sock.bind("i0001.json")
    finally:
        os.chdir(cwd)
    try:
        code, lines = run("check", "questions/c0001/i0001.yaml")
    finally:
        sock.close()
    assert code == 1
    assert lines[0] == (
        "ledger/answerability/i0001.json [file-special] a socket, not a regular file: propeval never opens it; "
        "remove it: rm ledger/answerability/i0001.json"
    )


def test_a_symlinked_ledger_record_and_rubric_file_are_refused(good_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    forged = tmp_path / "forged.json"
    forged.write_text("{}", encoding="utf-8")
    (good_corpus.root / "ledger/answerability").mkdir(parents=True)
    os.symlink(forged, good_corpus.root / "ledger/answerability/i0001.json")
    (good_corpus.root / "rubrics/facts-v1").mkdir(parents=True)
    os.symlink("/etc/hostname", good_corpus.root / "rubrics/facts-v1/prompt.md")
    code, lines = run("check")
    assert code == 1
    assert [line.split(" a symbolic")[0] for line in lines[:-1]] == [
        "ledger/answerability/i0001.json [file-symlink]",
        "rubrics/facts-v1/prompt.md [file-symlink]",
    ]


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo"])
def test_the_loader_refuses_what_is_not_a_plain_file(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("a: 1\n", encoding="utf-8")
    path = tmp_path / "x.yaml"
    if kind == "symlink":
        os.symlink(target, path)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        os.mkfifo(path)
    with pytest.raises(LoadError) as e:
        load_file(path, root=tmp_path)
    assert (
        e.value.problem.rule == {"symlink": "file-symlink", "hardlink": "file-hardlink", "fifo": "file-special"}[kind]
    )
    assert e.value.problem.path == "x.yaml"


def test_the_loader_refuses_a_file_below_a_linked_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/r.json").write_text("{}", encoding="utf-8")
    (tmp_path / "ledger").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "ledger/answerability")
    with pytest.raises(LoadError) as e:
        load_file(tmp_path / "ledger/answerability/r.json", root=tmp_path)
    assert (e.value.problem.path, e.value.problem.rule) == ("ledger/answerability", "file-symlink")
    # Outside the root, the folders are the caller's choice.
    assert load_file(tmp_path / "ledger/answerability/r.json").data == {}


def test_a_rubric_template_is_read_only_as_a_plain_file_in_its_folder(corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rubrics = corpus.root / "rubrics"
    shutil.copytree(REPO / "rubrics/facts-v1", rubrics / "facts-v1")
    prompt = rubrics / "facts-v1/prompt.md"
    assert load_rubric(rubrics, "facts-v1", root=corpus.root).name == "facts-v1"
    prompt.rename(tmp_path / "prompt.md")
    os.mkfifo(prompt)
    with pytest.raises(LoadError) as e:
        load_rubric(rubrics, "facts-v1", root=corpus.root)
    assert (e.value.problem.path, e.value.problem.rule) == ("rubrics/facts-v1/prompt.md", "file-special")
    spec = rubrics / "facts-v1/rubric.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("template: prompt.md", "template: ../../x.md"))
    with pytest.raises(LoadError) as e:
        load_rubric(rubrics, "facts-v1", root=corpus.root)
    assert "must be a file name in the rubric's own folder" in e.value.problem.message


def test_changed_paths_keep_links_deletions_and_both_sides_of_a_rename(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    from propeval import gitutil

    good_corpus.item("i0002", prompt="Who gave the order?")
    good_corpus.write("docs/example.yaml", item_yaml("i0163"))
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    base = in_git("rev-parse", "HEAD").strip()
    in_git("mv", "questions/c0001/i0002.yaml", "questions/c0001/i0003.yaml")
    in_git("rm", "-q", "docs/example.yaml")
    os.symlink("../../docs/example.yaml", good_corpus.root / "questions/c0001/i0163.yaml")
    assert gitutil.changed_paths(good_corpus.root, base) == [
        "docs/example.yaml",
        "questions/c0001/i0002.yaml",
        "questions/c0001/i0003.yaml",
        "questions/c0001/i0163.yaml",
    ]
