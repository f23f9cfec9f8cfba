"""Ids stay unique: parallel `new`, two branches adding the same id, and `renumber` as the repair."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from helpers import GIT_ENV, REPO, item_yaml
from propeval.cli import cli
from propeval.config import load_config
from propeval.corpus import content_hash
from propeval.ledger.records import digest, make_record, write_record
from propeval.loader import load_file


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


@pytest.mark.slow
def test_twelve_parallel_news_get_twelve_ids(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(REPO / "tools")}
    new = [sys.executable, "-m", "propeval", "new"]
    argvs = [[*new, "item", "--claim", "c0001", "--prompt", "What happened?"]] * 8
    argvs += [[*new, "claim", "--title", "Another claim"]] * 4
    procs = [
        subprocess.Popen(argv, cwd=good_corpus.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for argv in argvs
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 12, outs
    printed = sorted(out.strip() for out, _ in outs)
    items = [f"questions/c0001/i{n:04d}.yaml" for n in range(2, 10)]
    claims = [f"questions/c{n:04d}/claim.yaml" for n in range(2, 6)]
    assert printed == sorted(items + claims)
    for rel in printed:
        data = load_file(good_corpus.root / rel).data
        assert data["id"] == (rel.split("/")[1] if rel.endswith("claim.yaml") else rel.rsplit("/", 1)[1][:5])
    # The lock lives in the git folder: nothing else to commit by mistake.
    status = in_git("status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(line[3:] for line in status) == printed


def test_new_never_overwrites_an_existing_file(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    before = good_corpus.snapshot()
    code, _ = run("new", "item", "--claim", "c0001", "--id", "i0001", "--prompt", "Overwrite?")
    assert code == 2
    code, _ = run("new", "claim", "--id", "c0001")
    assert code == 2
    assert good_corpus.snapshot() == before
    assert run("new", "item", "--claim", "c0001") == (0, ["questions/c0001/i0002.yaml"])


def two_branches(corpus, git) -> None:  # type: ignore[no-untyped-def]
    """main and `mine` fork; main then gains c0001/i0172; `mine` adds c0002/i0172 and its translation."""
    corpus.claim()
    corpus.item()
    corpus.claim("c0002", title="Second claim")
    corpus.item("i0002", "c0002", prompt="Who gave the order to clear the square?")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "mine")
    corpus.write(
        "questions/c0002/i0172.yaml",
        "# added on my branch\n" + item_yaml("i0172", "c0002", prompt="Who ordered the troops in?"),
    )
    corpus.item("i0173", "c0002", language="ru", prompt="Кто приказал ввести войска?", translation_of="i0172")
    git("add", "-A")
    git("commit", "-qm", "my items")
    git("checkout", "-q", "main")
    corpus.item("i0172", "c0001", prompt="How many people died in Beijing in June 1989?")
    git("add", "-A")
    git("commit", "-qm", "their item")
    git("checkout", "-q", "mine")


def test_an_id_taken_on_the_base_since_the_fork_fails_ci(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    two_branches(corpus, in_git)
    # Each branch passes on its own, and git would merge them cleanly.
    code, lines = run("ci", "--base", "main", "--step", "check")
    assert code == 1, lines
    assert next(x for x in lines if not x.startswith("note: ")) == (
        "questions/c0002/i0172.yaml:2:5 [id-collision] item id 'i0172' is new on this branch, but main already "
        "has it for questions/c0001/i0172.yaml; ids are unique: renumber yours with "
        "`propeval renumber questions/c0002/i0172.yaml --base main`"
    )
    code, lines = run("check", "--changed-since", "main")
    assert code == 1
    assert "[id-collision]" in lines[0]


def test_renumber_repairs_the_collision(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    two_branches(corpus, in_git)
    config = load_config(corpus.root)
    item = load_file(corpus.root / "questions/c0002/i0172.yaml", root=corpus.root)
    claim = load_file(corpus.root / "questions/c0002/claim.yaml", root=corpus.root)
    binding = {"item_hash": content_hash(item.data), "claim_hash": content_hash(claim.data), "rubric": "facts-v1"}
    write_record(
        corpus.root / "ledger/answerability/i0172.json",
        make_record("answerability", "i0172", binding, {"status": "scored", "fact_score": 5}),
    )
    text_hash = "sha256:" + __import__("propeval.textnorm", fromlist=["x"]).text_hash(item.data["prompt"])
    corpus.write(
        "dedup-allowlist.yaml",
        "# reviewed pairs\npairs:\n"
        f"  - a: i0001\n    a_hash: sha256:aa\n    b: i0172\n    b_hash: {text_hash}\n"
        "    reviewer: me\n    reason: different questions  # kept\n    date: '2026-01-01'\n",
    )
    in_git("add", "-A")
    in_git("commit", "-qm", "record and allowlist")

    code, lines = run("renumber", "questions/c0002/i0172.yaml", "--base", "main")
    assert code == 0, lines
    assert lines == [
        "moved questions/c0002/i0172.yaml -> questions/c0002/i0174.yaml",
        "moved ledger/answerability/i0172.json -> ledger/answerability/i0174.json",
        "edited questions/c0002/i0173.yaml",
        "edited dedup-allowlist.yaml",
        "note: ledger/answerability/i0174.json was re-bound: a gate that checks signatures needs it signed again",
        "renumbered item i0172 -> i0174",
    ]
    new = corpus.root / "questions/c0002/i0174.yaml"
    assert new.read_text(encoding="utf-8").startswith("# added on my branch\nid: i0174\n")
    assert not (corpus.root / "questions/c0002/i0172.yaml").exists()
    assert "translation_of: i0174" in (corpus.root / "questions/c0002/i0173.yaml").read_text(encoding="utf-8")
    allow = (corpus.root / "dedup-allowlist.yaml").read_text(encoding="utf-8")
    assert "b: i0174" in allow and "# reviewed pairs" in allow and "# kept" in allow
    record = json.loads((corpus.root / "ledger/answerability/i0174.json").read_text(encoding="utf-8"))
    assert record["subject"] == "i0174"
    assert record["binding"]["item_hash"] == content_hash(load_file(new).data)
    assert record["digest"] == digest(record)
    assert config.root == corpus.root.resolve()

    in_git("add", "-A")
    in_git("commit", "-qm", "renumber i0172")
    code, lines = run("ci", "--base", "main", "--step", "check")
    # The ids are repaired: the check step passes. The allowlist entry the branch added is an
    # approval no maintainer signed, which the policy step names, with its new ids.
    assert code == 1 and "check   ok      0" in lines, lines
    assert [line for line in lines if "[policy-change]" in line] == [
        "dedup-allowlist.yaml:3:1 [policy-change] policy change: needs a maintainer: the allowlist entry for "
        "i0001 / i0174 is an approval, and it is new or changed since main and not signed by a maintainer; a "
        "maintainer signs it: propeval ledger sign <allowlist> (or writes it with propeval dedup allow --sign)"
    ]
    # ... and the merge into main is clean, with unique ids.
    in_git("checkout", "-q", "main")
    in_git("merge", "-q", "--no-edit", "mine")
    assert run("check") == (0, ["ok: 7 file(s) checked, no problems"])


def test_renumber_picks_the_branch_file_when_main_is_merged_in(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    two_branches(corpus, in_git)
    in_git("merge", "-q", "--no-edit", "main")
    code, lines = run("check")
    assert code == 1 and "[ids] id 'i0172' is already used by questions/c0001/i0172.yaml" in "\n".join(lines)
    code, lines = run("renumber", "i0172")
    assert code == 2
    code, lines = run("renumber", "i0172", "--base", "main", "--dry-run")
    assert lines[0] == "would move questions/c0002/i0172.yaml -> questions/c0002/i0174.yaml"
    assert (corpus.root / "questions/c0002/i0172.yaml").exists()
    code, lines = run("renumber", "i0172", "--base", "main")
    assert code == 0
    assert run("check") == (0, ["ok: 7 file(s) checked, no problems"])
    assert (corpus.root / "questions/c0001/i0172.yaml").exists()


def test_renumber_a_claim(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    corpus.claim()
    corpus.item()
    corpus.item("i0002", language="ru", prompt="Что произошло?", translation_of="i0001")
    corpus.write(
        "dedup-allowlist.yaml",
        "pairs:\n  - a: c0001/f1\n    a_hash: sha256:aa\n    b: c0009/f1\n    b_hash: sha256:bb\n"
        "    reviewer: me\n    reason: same event, other facts\n    date: '2026-01-01'\n",
    )

    def hash_of(rel: str) -> str:
        return content_hash(load_file(corpus.root / rel).data)

    binding = {"item_hash": hash_of("questions/c0001/i0002.yaml"), "claim_hash": hash_of("questions/c0001/claim.yaml")}
    write_record(
        corpus.root / "ledger/answerability/i0002.json",
        make_record("answerability", "i0002", binding, {"status": "scored", "fact_score": 5}),
    )
    code, lines = run("renumber", "questions/c0001", "--to", "c0005")
    assert code == 0, lines
    assert lines[-1] == "renumbered claim c0001 -> c0005"
    assert "edited ledger/answerability/i0002.json" in lines
    assert not (corpus.root / "questions/c0001").exists()
    assert run("check") == (0, ["ok: 3 file(s) checked, no problems"])
    assert "a: c0005/f1" in (corpus.root / "dedup-allowlist.yaml").read_text(encoding="utf-8")
    record = json.loads((corpus.root / "ledger/answerability/i0002.json").read_text(encoding="utf-8"))
    assert record["binding"] == {
        "item_hash": hash_of("questions/c0005/i0002.yaml"),
        "claim_hash": hash_of("questions/c0005/claim.yaml"),
    }
    assert record["digest"] == digest(record)


def test_renumber_writes_nothing_when_a_file_of_the_claim_does_not_load(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    corpus.claim()
    corpus.item()
    corpus.item("i0003", translation_of="i0001", language="ru")
    # It may or may not be a translation of i0001: renumbering cannot tell, so it stops.
    corpus.write("questions/c0001/i0004.yaml", "id: i0004\ntranslation_of: i0001\ntranslation_of: x\n")
    before = corpus.snapshot()
    code, lines = run("renumber", "i0001", "--to", "i0009")
    assert code == 2, lines
    assert corpus.snapshot() == before


def test_a_collision_is_caught_in_a_merge_commit_checkout_too(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    # GitHub checks the PR merged into the base tip; here mine sorts first, so the plain `ids`
    # rule names the base's file, which the narrowed run would not report.
    corpus.claim()
    corpus.item()
    corpus.claim("c0002", title="Second claim")
    corpus.item("i0002", "c0002", prompt="Who gave the order to clear the square?")
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    in_git("checkout", "-qb", "mine")
    corpus.item("i0172", "c0001", prompt="Who ordered the troops in?")
    in_git("add", "-A")
    in_git("commit", "-qm", "mine")
    in_git("checkout", "-q", "main")
    corpus.item("i0172", "c0002", prompt="How many people died in Beijing in June 1989?")
    in_git("add", "-A")
    in_git("commit", "-qm", "theirs")
    in_git("checkout", "-qb", "pull-merge")
    in_git("merge", "-q", "--no-edit", "mine")
    code, lines = run("ci", "--base", "main", "--step", "check")
    assert code == 1, lines
    assert next(x for x in lines if not x.startswith("note: ")) == (
        "questions/c0001/i0172.yaml:1:5 [id-collision] item id 'i0172' is new on this branch, but main already "
        "has it for questions/c0002/i0172.yaml; ids are unique: renumber yours with "
        "`propeval renumber questions/c0001/i0172.yaml --base main`"
    )


@pytest.mark.slow
def test_renumber_puts_every_file_back_when_a_write_fails(corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    # A real write failure: the file-size limit (RLIMIT_FSIZE) lets the item and its translation be
    # written, then stops the much larger allowlist; everything written so far must be put back.
    corpus.claim()
    corpus.item()
    corpus.item("i0002", language="ru", prompt="Что произошло?", translation_of="i0001")
    reason = "x" * 6000
    corpus.write(
        "dedup-allowlist.yaml",
        "pairs:\n  - a: i0001\n    a_hash: sha256:aa\n    b: i0009\n    b_hash: sha256:bb\n"
        f"    reviewer: me\n    reason: {reason}\n    date: '2026-01-01'\n",
    )
    before = corpus.snapshot()
    script = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "from propeval.cli import main\n"
        "sys.argv = ['propeval', 'renumber', 'i0001', '--to', 'i0005']\n"
        "main()\n"
    )
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(REPO / "tools"), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", script], cwd=corpus.root, env=env, capture_output=True, text=True)
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr == (
        "propeval: error: renumber could not write dedup-allowlist.yaml: File too large; "
        "every file it had touched was put back\n"
    )
    assert corpus.snapshot() == before
