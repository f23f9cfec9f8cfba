"""The CLI's contract: output formats, exit codes, light imports, and documentation that is true."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from helpers import REPO
from propeval.cli import COMMANDS, cli
from userdirs import user_dirs_env

HEAVY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "faiss",
    "openai",
    "matplotlib",
    "sklearn",
    "numpy",
    "inspect_ai",
    "lm_eval",
)


def bad_item(corpus) -> None:  # type: ignore[no-untyped-def]
    corpus.claim()
    corpus.item(framing="balanced")


def test_json_format(corpus) -> None:  # type: ignore[no-untyped-def]
    bad_item(corpus)
    result = CliRunner().invoke(cli, ["check", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1
    payload = json.loads(result.output)
    assert payload["errors"] == 1
    assert payload["problems"][0] == {
        "path": "questions/c0001/i0001.yaml",
        "line": 4,
        "col": 10,
        "rule": "schema",
        "pointer": "/framing",
        "severity": "error",
        "fix": "",
        "message": "'balanced' is not one of ['neutral', 'loaded']; use one of those values",
    }


def test_github_format(corpus) -> None:  # type: ignore[no-untyped-def]
    bad_item(corpus)
    result = CliRunner().invoke(cli, ["check", "--format", "github"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output == (
        "::error file=questions/c0001/i0001.yaml,line=4,col=10,title=schema::[schema] 'balanced' is not one of "
        "['neutral', 'loaded']; use one of those values\n"
    )


def test_usage_errors_exit_2(good_corpus) -> None:  # type: ignore[no-untyped-def]
    assert CliRunner().invoke(cli, ["check", "--format", "xml"]).exit_code == 2
    result = CliRunner().invoke(cli, ["check", "no/such/file.yaml"], catch_exceptions=False)
    assert (result.exit_code, result.output) == (2, "propeval: error: no/such/file.yaml: no such file or folder\n")


def test_no_corpus_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "no pyproject.toml with a [tool.propeval] table" in result.output


def test_paths_narrow_what_is_reported(good_corpus) -> None:  # type: ignore[no-untyped-def]
    good_corpus.item("i0002", framing="balanced", language="ru", translation_of="i0001")
    result = CliRunner().invoke(cli, ["check", "questions/c0001/i0001.yaml"], catch_exceptions=False)
    assert (result.exit_code, result.output) == (0, "ok: 1 file(s) checked, no problems\n")
    result = CliRunner().invoke(cli, ["check", "questions/c0001"], catch_exceptions=False)
    assert result.exit_code == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "args", [["--help"], ["check"], ["check", "--help"], ["new", "--help"], ["groups"], ["init", "--help"]]
)
def test_hook_paths_import_nothing_heavy(args: list[str]) -> None:
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['propeval', *{args!r}]\n"
        "try:\n    runpy.run_module('propeval', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        # a bare environment, but the session's user folders (conftest.py), never the real ones
        env={"PYTHONPATH": str(REPO / "tools"), "PATH": "/usr/bin:/bin", **user_dirs_env()},
    )
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def command_paths(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command and subcommand, as the words that call it."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        yield (*path, name)
        if isinstance(sub, click.Group):
            yield from command_paths(sub, (*path, name))


def test_the_walk_finds_every_command_and_subcommands() -> None:
    paths = list(command_paths())
    assert [p[0] for p in paths if len(p) == 1] == sorted(COMMANDS)
    assert {("gate", "judge"), ("keys", "new"), ("ledger", "resign"), ("schema", "diff"), ("new", "item")} <= set(paths)


@pytest.mark.parametrize("path", list(command_paths()), ids=" ".join)
def test_every_command_has_help_with_an_example(path: tuple[str, ...]) -> None:
    """One test for every command and subcommand (it replaced a copy per area)."""
    result = CliRunner().invoke(cli, [*path, "--help"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"propeval {' '.join(path)} --help has no example"
    assert f"propeval {path[0]} " in result.output.split("Example", 1)[1]


def test_every_hook_is_documented() -> None:
    """(Rule ids: tests/test_rules.py holds CONTRIBUTING's error tables to the registry.)"""
    contributing = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for hook in re.findall(r"^\s*- id: (\S+)", (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"), re.M):
        assert f"`{hook}`" in contributing, hook


def test_the_docs_pages_name_every_command() -> None:
    """Each command is explained on a topic page of the docs site, not only in the generated CLI
    reference (tests/test_docs_site.py holds that reference to every command and option)."""
    pages = "".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")) if p.name != "cli.md")
    assert [name for name in COMMANDS if not re.search(rf"propeval {name}\b", pages)] == []


def test_readme_first_section_is_the_two_commands_ci_runs_in_order() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = readme.split("\n## ", 2)[1]
    commands = [line.split("#")[0].strip() for line in re.search(r"```sh\n(.*?)```", first, re.S).group(1).splitlines()]
    assert commands == ["make run", "make test"]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert [line for line in ci if line.startswith("make ")] == ["make run", "make test"]
    assert "set -euo pipefail" in ci


def test_category_constant_matches_the_schema() -> None:
    from propeval.corpus import CATEGORIES

    schema = json.loads((REPO / "schema.json").read_text(encoding="utf-8"))
    assert list(CATEGORIES) == schema["$defs"]["category"]["enum"]
