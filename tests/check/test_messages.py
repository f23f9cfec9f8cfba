"""Messages in a contributor's terms: each mistake told once, in words that say what to do.

Every test runs the real CLI (CliRunner, catch_exceptions=False) on a corpus in tmp_path and
asserts the lines a contributor reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import REPO, CorpusDir, claim_yaml
from propeval.cli import cli


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_claim_file_without_facts_is_told_facts_missing_once(good_corpus: CorpusDir) -> None:
    # Before: validated as an item (no facts: the schema's else branch), 8 errors about item
    # fields ("'claim_id' is a required property", "unknown field 'anchor'") and none about facts.
    good_corpus.write("questions/c0001/claim.yaml", claim_yaml(facts=None))
    code, out, _ = run("check")
    assert code == 1
    assert out.splitlines() == [
        "questions/c0001/claim.yaml:1:1 [schema] facts missing: every claim needs it (The required facts (2-4), "
        "each with a stable id that is never reused or renamed); add it",
        "1 error(s), 0 warning(s) in 2 file(s) checked",
    ]


def test_an_item_file_with_facts_is_checked_as_an_item(good_corpus: CorpusDir) -> None:
    good_corpus.write(
        "questions/c0001/i0001.yaml",
        (good_corpus.root / "questions/c0001/i0001.yaml").read_text(encoding="utf-8")
        + "facts:\n  - id: f1\n    text: a fact in the wrong file\n",
    )
    code, out, _ = run("check")
    assert code == 1
    assert out.splitlines()[0] == (
        "questions/c0001/i0001.yaml:8:1 [schema] unknown field 'facts'; remove it or use one of: claim_id, framing, "
        "id, language, notes, prompt, question_type, retired_reason, status, translation_of"
    )


def test_a_narrow_count_says_required_and_a_wide_one_allowed(good_corpus: CorpusDir) -> None:
    one = "\n  - id: f1\n    text: Troops fired on civilians in Beijing on 3-4 June 1989."
    good_corpus.write("questions/c0001/claim.yaml", claim_yaml(facts=one, categories="[]"))
    code, out, _ = run("check")
    assert code == 1
    assert [ln.split(" [schema] ", 1)[1] for ln in out.splitlines() if "[schema]" in ln] == [
        "facts has 1 entry; at least 2 are required",
        "categories has 0 entries; at least 1 is required",
    ]


def test_an_unknown_command_gets_did_you_mean() -> None:
    code, _, err = run("chek")
    assert code == 2
    assert "Error: No such command 'chek'. Did you mean 'check'?" in err
    code, _, err = run("schema", "shw")
    assert code == 2 and "Did you mean 'show'?" in err
    code, _, err = run("ledger", "aprove")
    assert code == 2 and "Did you mean 'approve'?" in err
    code, _, err = run("frobnicate")  # nothing close: click's own message, nothing invented
    assert code == 2 and "No such command 'frobnicate'." in err and "Did you mean" not in err


def test_check_help_has_no_stray_word() -> None:
    code, out, _ = run("check", "--help")
    assert code == 0
    assert "today" not in out
    assert "(so far: language tags)" in " ".join(out.split())


def test_a_cross_claim_duplicate_in_two_languages_suggests_the_translation(corpus: CorpusDir) -> None:
    corpus.claim()
    corpus.item(prompt="Tiananmen 1989, Tank Man?")
    facts = (
        "\n  - id: f1\n    text: A man stood in front of a column of tanks.\n  - id: f2\n    text: He was never named."
    )
    corpus.claim("c0002", facts=facts, source_url="https://en.wikipedia.org/wiki/Tank_Man", anchor="Lead")
    corpus.item("i0002", "c0002", language="de", prompt="Tiananmen 1989, Tank Man?")
    code, out, _ = run("dedup", "--pass", "exact")
    assert code == 1
    [line] = [ln for ln in out.splitlines() if "[dedup-exact]" in ln]
    assert line.endswith(
        "if i0002 asks i0001's question in de, make it i0001's translation in c0001: "
        "`propeval move i0002 --to-claim c0001 --translation-of i0001` (for new text, "
        "`propeval new item --claim c0001 --language de --translation-of i0001`); else retire or rewrite one, "
        "or if both belong, review and run `propeval dedup allow i0001 i0002 --reason ...`"
    )
    # Two claims in one language: no translation to suggest.
    corpus.item("i0002", "c0002", language="en", prompt="Tiananmen 1989, Tank Man?")
    code, out, _ = run("dedup", "--pass", "exact")
    [line] = [ln for ln in out.splitlines() if "[dedup-exact]" in ln]
    assert "translation" not in line and line.endswith("`propeval dedup allow i0001 i0002 --reason ...`")


DRIFT_NOTE = "note: translation drift: skipped, no multilingual encoder is configured"


def _groups_in_one_session(root: Path, *commands: list[str]) -> list[str]:
    """Run each ``propeval groups`` command in turn from one new terminal session (one shell that
    the test starts with setsid, as a terminal starts a shell); the output of each."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    env.pop("CI", None)
    sep = "----next-command----"
    script = f"; echo {sep}; ".join(
        " ".join([sys.executable, "-m", "propeval", "groups", *args]) + " 2>&1" for args in commands
    )
    done = subprocess.run(
        ["sh", "-c", script], cwd=root, env=env, capture_output=True, text=True, start_new_session=True, check=False
    )
    return done.stdout.split(sep + "\n")


@pytest.mark.slow  # seven fresh processes
def test_a_standing_note_is_shown_once_per_terminal_session(good_corpus: CorpusDir) -> None:
    first, second, verbose, as_json, github = _groups_in_one_session(
        good_corpus.root, [], [], ["--verbose"], ["--format", "json"], ["--format", "github"]
    )
    assert DRIFT_NOTE in first  # the first run of the session says it
    assert "translation drift" not in second  # the next one does not repeat it
    assert DRIFT_NOTE in verbose  # --verbose always shows it
    assert "translation drift: skipped" in as_json  # json always carries every note
    assert "translation drift" not in github  # never a ::notice:: on every pull request
    [again] = _groups_in_one_session(good_corpus.root, [])
    assert DRIFT_NOTE in again  # a new terminal is a new session
