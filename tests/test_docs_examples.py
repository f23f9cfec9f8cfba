"""The documentation's examples cannot go stale.

- Output examples in the docs site's pages (docs/*.md) and CONTRIBUTING.md are cog blocks
  (scripts/docs_examples.py): the test reruns every command and fails on any difference
  (`make docs-examples` rewrites them).
- Every `propeval ...` line in a shell block of README.md, CONTRIBUTING.md, questions/README.md,
  benchmarks/README.md and every page of docs/ names a command that exists, with options it takes
  (parsed by click, as a shell would pass them); every `make X` names a target of the Makefile.
  The README's quickstarts run for real: tests/test_quickstarts.py; every other code block runs,
  is validated or says why it cannot run here: tests/test_docs_blocks.py.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from propeval.cli import cli

REPO = Path(__file__).resolve().parents[1]
# The pages that must show a propeval command, then every other page of docs/ and benchmarks/.
SHOWN = ("README.md", "CONTRIBUTING.md", "questions/README.md")
DOCS = (*SHOWN, "benchmarks/README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")))
COGGED = tuple(doc for doc in DOCS if "<!-- [[[cog" in (REPO / doc).read_text(encoding="utf-8"))
SHELL_BLOCK = re.compile(r"^```(?:sh|console|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.slow
def test_every_output_example_is_what_the_command_prints_now() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tools"), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", "--diff", "-I", "scripts", *COGGED],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, f"stale examples; run `make docs-examples`:\n{res.stdout}{res.stderr}"


def test_the_output_examples_are_cog_blocks() -> None:
    """The check above is not of an empty set: the docs' output examples are generated."""
    pages = "".join((REPO / doc).read_text(encoding="utf-8") for doc in COGGED if doc.startswith("docs/"))
    assert pages.count("<!-- [[[cog") == pages.count("<!-- [[[end]]] -->") >= 4
    for shown in ("$ propeval groups --matrix", "$ propeval stats --format json", "$ propeval schema diff"):
        assert shown in pages


def shell_words(line: str) -> list[str]:
    """The words of one shell command line as the shell splits them, comments dropped, up to the
    first pipe, redirection, `&` or `;`."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = []
    for word in lexer:
        if word in ("|", "||", "&", "&&", ";", ">", ">>", "<", "2>"):
            break
        words.append(word)
    return words


def shell_commands(doc: str) -> list[list[str]]:
    """Each command of each shell block in ``doc``, split as the shell would (continuations joined,
    comments dropped, cut at pipes, redirections and `&`); `$ ` prompts removed; output lines skipped."""
    text = (REPO / doc).read_text(encoding="utf-8")
    commands = []
    for block in SHELL_BLOCK.findall(text):
        console = any(line.startswith("$ ") for line in block.splitlines())
        for line in block.replace("\\\n", " ").splitlines():
            if console:
                if not line.startswith("$ "):
                    continue  # output
                line = line[2:]
            words = shell_words(line)
            if len(words) > 2 and words[0].endswith("=$") and words[1] == "(":
                words = words[2:]  # name=$(command ...): the command
            if words:
                commands.append(words)
    return commands


def _group_options(group: click.Group, ctx: click.Context, words: list[str]) -> list[str]:
    """``words`` after the group's own options (``propeval --root DIR check``), which are parsed."""
    n = 0
    while n < len(words) and words[n].startswith("-"):
        opt = next((p for p in group.params if words[n].split("=", 1)[0] in p.opts), None)
        assert opt is not None, f"propeval has no option {words[n]!r}"
        n += 1 if "=" in words[n] or getattr(opt, "is_flag", False) else 2
    group.parse_args(click.Context(group, info_name=ctx.info_name, resilient_parsing=True), list(words[:n]))
    return words[n:]


def check_propeval(argv: list[str]) -> None:
    """Parse ``argv`` (after `propeval`) as click would, down to the last subcommand. Files the
    example names need not exist here: a path's existence is not checked."""
    group: click.Group = cli
    ctx = click.Context(cli, info_name="propeval")
    rest = _group_options(cli, ctx, argv)
    name, rest = rest[0], rest[1:]
    while True:
        command = group.get_command(ctx, name)
        assert command is not None, f"propeval has no command {name!r}"
        if isinstance(command, click.Group) and rest and rest[0] in command.list_commands(ctx):
            ctx = click.Context(command, info_name=name, parent=ctx)
            group, name, rest = command, rest[0], rest[1:]
            continue
        paths = [p.type for p in command.params if isinstance(p.type, click.Path) and p.type.exists]
        try:
            for t in paths:
                t.exists = False
            command.make_context(name, list(rest), parent=ctx)
        finally:
            for t in paths:
                t.exists = True
        return


def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([\w.-]+):(?!=)", text, re.MULTILINE)}


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_in_the_docs_exists(doc: str) -> None:
    seen = 0
    for words in shell_commands(doc):
        if words[0] == "propeval":
            try:
                check_propeval(words[1:])
            except click.UsageError as e:
                pytest.fail(f"{doc}: `{shlex.join(words)}`: {e.format_message()}")
            seen += 1
        elif words[0] == "make":
            assert {w for w in words[1:] if "=" not in w} <= makefile_targets(), f"{doc}: {shlex.join(words)}"
        elif "propeval" in words:
            pytest.fail(f"{doc}: `{shlex.join(words)}` runs propeval another way; write `propeval ...`")
    assert seen or doc not in SHOWN, f"{doc} shows no propeval command"


def command_paths(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command and subcommand, as the words that call it."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        yield (*path, name)
        if isinstance(sub, click.Group):
            yield from command_paths(sub, (*path, name))


def help_examples(path: tuple[str, ...]) -> list[list[str]]:
    """The `propeval ...` lines of a command's --help examples, split as a shell would."""
    result = CliRunner().invoke(cli, [*path, "--help"], catch_exceptions=False)
    text = result.output.split("Example", 1)[1].split("\nOptions:", 1)[0]
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line.startswith("propeval "):
            continue
        commands.append(shell_words(line))
    return commands


@pytest.mark.parametrize("path", list(command_paths()), ids=" ".join)
def test_every_help_example_parses(path: tuple[str, ...]) -> None:
    """The examples in --help name commands and options that exist (test_cli_contract checks there is one)."""
    examples = help_examples(path)
    assert examples, f"propeval {' '.join(path)} --help shows no `propeval ...` example line"
    for words in examples:
        try:
            check_propeval(words[1:])
        except click.UsageError as e:
            pytest.fail(f"propeval {' '.join(path)} --help: `{shlex.join(words)}`: {e.format_message()}")
