"""A --root that is not a corpus is a usage error for every command, never an empty success."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from propeval.cli import cli

LOOKED_FOR = (
    "looked for a pyproject.toml with a [tool.propeval] table, and the questions folder it names (questions_dir)"
)

COMMANDS = [
    ["check"],
    ["stats"],
    ["groups"],
    ["dedup"],
    ["difficulty"],
    ["export", "--out", "release-out"],
    ["new", "claim"],
    ["score", "runs/r1"],
    ["gate", "answerability"],
    ["run"],
    ["ci", "--base", "main"],
    ["schema", "diff", "--base", "main"],
]


def variants(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other-python-project"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    no_questions = tmp_path / "no-questions"
    no_questions.mkdir()
    (no_questions / "pyproject.toml").write_text("[tool.propeval]\n", encoding="utf-8")
    return {
        "missing": (tmp_path / "nowhere", f"--root {tmp_path / 'nowhere'}: no such folder; {LOOKED_FOR}"),
        "empty": (empty, f"--root {empty} is not a propeval corpus: no pyproject.toml; {LOOKED_FOR}"),
        "other": (
            other,
            f"--root {other} is not a propeval corpus: its pyproject.toml has no [tool.propeval] table; "
            f"{LOOKED_FOR} (propeval init makes one)",
        ),
        "no-questions": (
            no_questions,
            f"--root {no_questions} is not a propeval corpus: no questions/ folder beside its pyproject.toml; "
            f"{LOOKED_FOR} (propeval init makes one)",
        ),
    }


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_a_wrong_root_is_exit_2_saying_what_was_looked_for(tmp_path: Path, monkeypatch, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    for root, said in variants(tmp_path).values():
        result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"propeval: error: {said}\n"), args
    assert not (tmp_path / "release-out").exists()


def test_a_folder_below_no_corpus_is_exit_2(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["stats"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "no pyproject.toml with a [tool.propeval] table at or above" in result.stderr
