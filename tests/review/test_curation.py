"""`propeval retire` and `propeval move`: round-trip edits, refusals naming the rule, all or nothing."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def two_claims(good_corpus: Any) -> Any:
    c = good_corpus
    c.claim("c0002", title="Another claim")
    c.write("questions/c0001/i0001.yaml", "# kept comment\n" + (c.root / "questions/c0001/i0001.yaml").read_text())
    c.item("i0002", "c0002", language="zh", prompt='"一个问题？"')
    c.item("i0003", "c0002", language="en", prompt='"Another question?"', translation_of=None)
    return c


def test_retire_sets_status_and_reason_and_keeps_comments(two_claims: Any) -> None:
    before = two_claims.snapshot()
    res = run("retire", "i0001", "--reason", "duplicate of i0003", "--dry-run")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        "would edit questions/c0001/i0001.yaml",
        "would retire i0001 (questions/c0001/i0001.yaml)",
    ]
    assert two_claims.snapshot() == before
    res = run("retire", "i0001", "--reason", "duplicate of i0003")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "retired i0001 (questions/c0001/i0001.yaml)"
    text = (two_claims.root / "questions/c0001/i0001.yaml").read_text()
    assert text.startswith("# kept comment\n")
    assert "status: retired\n" in text and "retired_reason: duplicate of i0003\n" in text
    assert run("check").exit_code == 0
    again = run("retire", "i0001", "--reason", "x")
    assert again.exit_code == 2
    assert "i0001 is retired already (retired_reason: 'duplicate of i0003')" in again.output


def test_retire_refuses_an_empty_reason_and_an_unknown_item(two_claims: Any) -> None:
    assert "--reason must say why" in run("retire", "i0001", "--reason", "  ").output
    res = run("retire", "i0099", "--reason", "x")
    assert res.exit_code == 2 and "no item 'i0099' under questions/" in res.output
    res = run("retire", "../etc", "--reason", "x")
    assert res.exit_code == 2 and "is not an item id" in res.output


def test_retire_names_translations_that_stay(two_claims: Any) -> None:
    two_claims.item("i0004", "c0002", language="de", prompt='"Eine Frage?"', translation_of="i0003")
    res = run("retire", "i0003", "--reason", "asks two things")
    assert "note: i0004 is a translation of i0003 and stays active; retire it too if it goes with it" in res.output


def test_move_as_translation_keeps_the_id_and_checks(two_claims: Any) -> None:
    res = run("move", "i0002", "--to-claim", "c0001", "--translation-of", "i0001")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        "moved questions/c0002/i0002.yaml -> questions/c0001/i0002.yaml",
        "moved i0002 from claim c0002 to c0001 as a translation of i0001",
    ]
    moved = two_claims.root / "questions/c0001/i0002.yaml"
    assert not (two_claims.root / "questions/c0002/i0002.yaml").exists()
    text = moved.read_text()
    assert "id: i0002\n" in text and "claim_id: c0001\n" in text and "translation_of: i0001\n" in text
    assert run("check").exit_code == 0


@pytest.mark.parametrize(
    ("args", "rule"),
    [
        (["i0003", "--to-claim", "c0001", "--translation-of", "i0001"], "[translation] i0003 and i0001 are both in en"),
        (["i0002", "--to-claim", "c0001", "--translation-of", "i0009"], "[translation] --translation-of i0009 is not"),
        (
            ["i0003", "--to-claim", "c0001"],
            "[groups-conflict] claim c0001 already has i0001 in en, neutral, named_fact",
        ),
        (["i0002", "--to-claim", "c0002"], "i0002 is in claim c0002 already"),
        (["i0002", "--to-claim", "c0009"], "no claim 'c0009'"),
    ],
)
def test_move_refuses_what_would_break_a_rule(two_claims: Any, args: list[str], rule: str) -> None:
    before = two_claims.snapshot()
    res = run("move", *args)
    assert res.exit_code == 2
    assert rule in res.output
    assert two_claims.snapshot() == before


def test_move_refuses_another_framing_and_stranded_translations(two_claims: Any) -> None:
    two_claims.item("i0002", "c0002", language="zh", prompt='"一个问题？"', framing="loaded")
    res = run("move", "i0002", "--to-claim", "c0001", "--translation-of", "i0001")
    assert "[groups-translation-framing] i0002 has framing loaded but i0001 has neutral" in res.output
    two_claims.item("i0002", "c0002", language="zh", prompt='"一个问题？"')
    two_claims.item("i0004", "c0002", language="de", prompt='"Eine Frage?"', translation_of="i0002")
    res = run("move", "i0002", "--to-claim", "c0001", "--translation-of", "i0001")
    assert "[groups-translation-claim] i0004 in claim c0002 is a translation of i0002" in res.output


@pytest.mark.slow
def test_a_move_that_cannot_write_changes_nothing(two_claims: Any) -> None:
    """A real write failure (the file-size limit, below the moved file's size): the old file stays."""
    import os
    import subprocess
    import sys

    from helpers import REPO

    two_claims.item("i0002", "c0002", language="zh", prompt='"' + "一个很长的问题" * 40 + '"')
    before = two_claims.snapshot()
    script = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))\n"
        "from propeval.cli import main\n"
        "sys.argv = ['propeval', 'move', 'i0002', '--to-claim', 'c0001', '--translation-of', 'i0001']\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools"), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", script], cwd=two_claims.root, env=env, capture_output=True, text=True)
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr == (
        "propeval: error: move could not write questions/c0001/i0002.yaml: File too large; "
        "every file it had touched was put back\n"
    )
    assert two_claims.snapshot() == before
