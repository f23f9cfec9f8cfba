"""``propeval hook``: check, groups and dedup on what changed since HEAD, in one process over one
Workspace (#40), through the real CLI in a real git repository, with the bundled model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli

pytestmark = pytest.mark.slow  # dedup loads the bundled model

TIANANMEN = '"What happened in central Beijing on the night of 3-4 June 1989?"'
PARAPHRASE = '"What happened in the centre of Beijing during the night of 3 to 4 June 1989?"'
BRIDGE = '"Who built the Crimean bridge across the Kerch Strait?"'


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _second_claim(corpus: Any) -> None:
    corpus.claim(
        "c0002",
        source_url="https://example.org/bridge",
        title="The Crimean bridge",
        facts="\n  - id: f1\n    text: The bridge opened in May 2018.\n"
        "  - id: f2\n    text: It crosses the Kerch Strait.",
    )


def _two_claims_committed(corpus: Any, in_git: Any) -> None:
    """c0001 with i0001 (Tiananmen) and c0002 with i0002 (the bridge), committed on main."""
    corpus.claim()
    corpus.item("i0001", prompt=TIANANMEN)
    _second_claim(corpus)
    corpus.item("i0002", "c0002", prompt=BRIDGE)
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus")


def test_the_first_commit_is_checked_whole_and_each_part_reports_under_its_heading(corpus: Any, in_git: Any) -> None:
    corpus.claim()
    corpus.item("i0001", prompt=TIANANMEN)
    corpus.item("i0002", framing="balanced", prompt=BRIDGE)
    in_git("add", "-A")  # no commit yet: HEAD names nothing, so everything is new
    bad = run("hook")
    assert bad.exit_code == 1, bad.output
    check, rest = bad.stdout.split("== propeval groups", 1)
    groups, dedup = rest.split("== propeval dedup", 1)
    assert check.startswith("== propeval check (changed files, cross-file rules over the whole corpus; since HEAD)")
    assert "questions/c0001/i0002.yaml:4:10 [schema] 'balanced' is not one of" in check
    assert "[schema]" not in groups + dedup
    assert "4 text(s) changed since HEAD" in dedup  # the first commit: every prompt and fact is new
    assert bad.stdout.rstrip().endswith("propeval hook: exit 1 (check exit 1, groups exit 0, dedup exit 0)")


def test_the_hook_says_what_the_three_commands_say_and_exits_with_the_worst(corpus: Any, in_git: Any) -> None:
    _two_claims_committed(corpus, in_git)
    # A commit that adds a near-duplicate of i0001 in another claim, and a loaded item with no
    # neutral control in its group: dedup and groups find something, check does not.
    corpus.item("i0003", "c0002", prompt=PARAPHRASE)
    corpus.item("i0004", "c0002", framing="loaded", prompt='"Why did the West build up the bridge story?"')
    in_git("add", "-A")
    hooked = run("hook", "--format", "json")
    assert hooked.exit_code == 1, hooked.output
    doc = json.loads(hooked.stdout)
    assert doc["changed_since"] == "HEAD" and doc["exit_code"] == 1
    assert [doc[p]["exit_code"] for p in ("check", "groups", "dedup")] == [0, 1, 1]
    for part in ("check", "groups", "dedup"):
        alone = run(part, "--changed-since", "HEAD", "--format", "json")
        assert alone.exit_code == doc[part]["exit_code"], (part, alone.output)
        assert json.loads(alone.stdout)["problems"] == doc[part]["problems"], part
    assert [(p["a"]["id"], p["b"]["id"]) for p in doc["dedup"]["pairs"]] == [("i0001", "i0003")]
    text = run("hook")
    assert text.exit_code == 1
    assert text.stdout.rstrip().endswith("propeval hook: exit 1 (check exit 0, groups exit 1, dedup exit 1)")
    skipped = run("hook", "--skip", "dedup", "--skip", "groups")
    assert skipped.exit_code == 0, skipped.output
    assert "dedup: skipped (--skip dedup)" in skipped.stdout
    assert skipped.stdout.rstrip().endswith("(check exit 0, groups skipped, dedup skipped)")


def test_the_hook_reads_each_corpus_file_once(corpus: Any, in_git: Any, monkeypatch: Any) -> None:
    """One corpus load for the three parts: dedup takes the Workspace's corpus (it has no loader of
    its own) instead of reading every file again (the three hooks read each file three times)."""
    import propeval.corpus

    corpus.claim()
    corpus.item("i0001", prompt=TIANANMEN)
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus")
    _second_claim(corpus)
    corpus.item("i0002", "c0002", prompt=BRIDGE)
    in_git("add", "-A")
    loaded: list[str] = []
    real = propeval.corpus.load_entry

    def counting(path: Any, root: Any) -> Any:
        loaded.append(path.name if hasattr(path, "name") else str(path))
        return real(path, root)

    monkeypatch.setattr(propeval.corpus, "load_entry", counting)
    hooked = run("hook")
    assert hooked.exit_code == 0, hooked.output
    assert sorted(loaded) == ["claim.yaml", "claim.yaml", "i0001.yaml", "i0002.yaml"]


def test_the_files_pre_commit_names_are_what_changed_and_git_is_not_asked(
    corpus: Any, in_git: Any, monkeypatch: Any
) -> None:
    """pre-commit passes the staged files (the published hook's default): they are what each part
    looks at, the same answer as git's for a staged change, and git's diff and untracked-file scan
    are not run. An untracked file is not in the commit, so its own problems wait; without files,
    git's answer counts it. Ids still stay stable against HEAD."""
    from propeval import gitutil

    _two_claims_committed(corpus, in_git)
    new = corpus.item("i0003", "c0002", prompt=PARAPHRASE)
    in_git("add", "-A")
    corpus.item("i0004", "c0002", framing="balanced", prompt='"An untracked draft?"')  # not staged
    asked: list[list[str]] = []
    real = gitutil._run

    def counting(root: Any, args: list[str], **kw: Any) -> bytes:
        asked.append(args)
        return real(root, args, **kw)

    monkeypatch.setattr(gitutil, "_run", counting)
    named = run("hook", "--format", "json", str(new.relative_to(corpus.root)))
    doc = json.loads(named.stdout)
    assert not [a for a in asked if a[0] in ("diff", "ls-files")], asked
    assert doc["check"]["problems"] == [] and doc["check"]["files_checked"] == 1
    assert [(p["a"]["id"], p["b"]["id"]) for p in doc["dedup"]["pairs"]] == [("i0001", "i0003")]
    assert named.exit_code == 1
    by_git = json.loads(run("hook", "--format", "json").stdout)
    assert [p["path"] for p in by_git["check"]["problems"]] == ["questions/c0002/i0004.yaml"]
    assert [(p["a"]["id"], p["b"]["id"]) for p in by_git["dedup"]["pairs"]] == [("i0001", "i0003")]
    # a file outside the corpus root, or one that is gone, changes nothing and breaks nothing
    (corpus.root / "questions/c0002/i0004.yaml").unlink()
    gone = run("hook", "--format", "json", "questions/c0002/i0009.yaml", "../elsewhere.yaml")
    assert json.loads(gone.stdout)["check"]["files_checked"] == 0, gone.output
    # deleting a file of the base still fails stable-ids, named or not
    (corpus.root / "questions/c0001/i0001.yaml").unlink()
    deleted = json.loads(run("hook", "--format", "json", "questions/c0002/i0003.yaml").stdout)
    assert [p["rule"] for p in deleted["check"]["problems"]] == ["stable-ids"]


def test_the_hook_process_ends_at_once_with_all_of_its_output_and_its_code(corpus: Any, in_git: Any) -> None:
    """The command ends without Python's teardown (#40): everything it wrote reaches the pipe
    pre-commit reads, in order, and the exit code is the worst part's."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    corpus.claim()
    corpus.item("i0001", prompt=TIANANMEN)
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus")
    bad = corpus.item("i0002", framing="balanced", prompt=BRIDGE)
    in_git("add", "-A")
    tools = Path(__file__).resolve().parents[2] / "tools"
    done = subprocess.run(
        [sys.executable, "-m", "propeval", "hook", "--skip", "dedup", str(bad.relative_to(corpus.root))],
        cwd=corpus.root,
        env={**os.environ, "PYTHONPATH": str(tools)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "questions/c0001/i0002.yaml:4:10 [schema] 'balanced' is not one of" in done.stdout
    assert done.stdout.rstrip().endswith("propeval hook: exit 1 (check exit 1, groups exit 0, dedup skipped)")


RUSSIAN = '"Что произошло в центре Пекина в ночь на 3-4 июня 1989 года?"'


def test_the_hooks_advice_to_move_a_translation_is_a_command_that_works_and_its_summary_is_short_lines(
    corpus: Any, in_git: Any
) -> None:
    """A Russian i0001 landed in another claim with another question type: the hook's advice is one
    `propeval move` that works the first time (it sets the question type a translation keeps),
    and its dedup summary comes as short lines, its json as before."""
    import re
    import shlex

    _two_claims_committed(corpus, in_git)
    corpus.item("i0003", "c0002", language="ru", question_type="frame_testing", prompt=RUSSIAN)
    in_git("add", "-A")
    hooked = run("hook")
    assert hooked.exit_code == 1, hooked.output
    advice = re.search(r"`(propeval move i0003 [^`]*)`", hooked.stdout)
    assert advice is not None, hooked.stdout
    assert advice.group(1) == "propeval move i0003 --to-claim c0001 --translation-of i0001 --question-type named_fact"
    summary = hooked.stdout.split("== propeval dedup", 1)[1].split("\ndedup: ", 1)[1].splitlines()[:-1]
    assert len(summary) >= 4 and max(map(len, summary)) <= 104, summary
    assert summary[1] == "  flagged pairs by pass: exact 0, lexical 0, semantic 1; 1 unreviewed, 0 reviewed"
    assert [s for s in summary if s.startswith("  thresholds: ")], summary
    moved = run(*shlex.split(advice.group(1))[1:])
    assert moved.exit_code == 0, moved.output
    text = (corpus.root / "questions/c0001/i0003.yaml").read_text(encoding="utf-8")
    assert "question_type: named_fact\n" in text and "translation_of: i0001\n" in text
    in_git("add", "-A")
    again = run("hook")
    assert again.exit_code == 0, again.output
