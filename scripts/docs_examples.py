"""The command examples in the docs (docs/*.md, CONTRIBUTING.md), produced by running the commands;
and the rule reference (docs/rules.md), produced from the rule registry.

The blocks are kept by cog (https://cog.readthedocs.io): a block is marked in Markdown with an
HTML comment, which GitHub does not show, and cog rewrites what lies between the markers with what
the code in the first comment prints:

    <!-- [[[cog from docs_examples import console; console("propeval stats")]]] -->
    ```console
    $ propeval stats
    ...            <- the output of the run, written by cog
    ```
    <!-- [[[end]]] -->

    make docs-examples                                     # rewrite every block from fresh runs
    python -m cogapp --check -I scripts docs/groups.md ... # exit 5 when a block is stale (a test runs it)

Each command runs as ``python -m propeval`` with this checkout's ``tools/`` first, on the starter
corpus, or on a scratch git copy of it (``scratch=``) changed as the example needs. Its exit code
is part of the example: a block whose command now exits otherwise is an error, not a new text.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cog  # type: ignore[import-not-found]  # provided by cogapp while it runs this
from corpus_copy import corpus_repo, git

REPO = Path(__file__).resolve().parents[1]
# What a scratch copy of the corpus holds.
CORPUS_PARTS = ("questions", "rubrics", "ledger", "schema.json", "pyproject.toml", "CHANGELOG.md")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "docs",
    "GIT_AUTHOR_EMAIL": "docs@example.invalid",
    "GIT_COMMITTER_NAME": "docs",
    "GIT_COMMITTER_EMAIL": "docs@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
Change = Callable[[Path], None]


def run(argv: Sequence[str], cwd: Path, expect: int) -> str:
    """Standard output and error of ``propeval argv`` in ``cwd``; its exit code must be ``expect``."""
    env = {
        **os.environ,
        **GIT_ENV,
        "PYTHONPATH": os.pathsep.join([str(REPO / "tools"), os.environ.get("PYTHONPATH", "")]),
        "NO_COLOR": "1",
        "TERM": "dumb",
        "COLUMNS": "100",
        "HF_HUB_OFFLINE": "1",
    }
    res = subprocess.run(
        [sys.executable, "-m", "propeval", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = res.stdout + res.stderr
    if res.returncode != expect:
        raise SystemExit(f"docs example `propeval {shlex.join(argv)}` exited {res.returncode}, not {expect}:\n{out}")
    return out


@contextmanager
def scratch(change: Change | None) -> Iterator[Path]:
    """The repository itself, or a git copy of its corpus whose main (also ``origin/main``) is
    this checkout's corpus, with ``change`` made in the working tree."""
    if change is None:
        yield REPO
        return
    with tempfile.TemporaryDirectory(prefix="propeval-docs-") as tmp:
        root = Path(tmp)
        corpus_repo(REPO, root, CORPUS_PARTS, GIT_ENV)
        git(root, GIT_ENV, "update-ref", "refs/remotes/origin/main", "HEAD")
        change(root)
        yield root


def _jq(output: str, keys: Sequence[str]) -> str:
    """What ``jq -c '{a, b}'`` prints for that document: the keys, in that order, compact."""
    doc = json.loads(output)
    return json.dumps({k: doc[k] for k in keys}, ensure_ascii=False, separators=(",", ":"))


def example(
    command: str,
    *,
    expect: int = 0,
    scratch_change: Change | None = None,
    jq: Sequence[str] = (),
    prompt: bool = True,
) -> str:
    """``$ command`` and what it printed. ``jq``: the keys to keep of a json output (shown as a pipe
    into ``jq -c``); ``prompt=False``: the output only."""
    argv = shlex.split(command)
    if argv[0] != "propeval":
        raise SystemExit(f"docs example {command!r}: only propeval commands are run here")
    with scratch(scratch_change) as cwd:
        out = run(argv[1:], cwd, expect)
    if jq:
        out = _jq(out, jq)
        command += f" | jq -c '{{{', '.join(jq)}}}'"
    return "\n".join(([f"$ {command}"] if prompt else []) + [out.rstrip("\n")])


def fence(lang: str, *texts: str) -> None:
    """Print one fenced block of ``texts``."""
    cog.outl("\n".join([f"```{lang}", *texts, "```"]))


def console(command: str, *, lang: str = "console", **kw: Any) -> None:
    """Print one fenced block: :func:`example` of ``command``."""
    fence(lang, example(command, **kw))


def rename_notes(root: Path) -> None:
    """The schema change of README's `schema diff` example: the item property `notes` renamed to
    `remarks`, with no version bump and no CHANGELOG entry."""
    path = root / "schema.json"
    text = path.read_text(encoding="utf-8")
    item = text.index('"item": {')
    at = text.index('"notes": {', item)
    path.write_text(text[:at] + '"remarks": {' + text[at + len('"notes": {') :], encoding="utf-8")


def typo_in_settings(root: Path) -> None:
    """A misspelt key, as the settings example shows."""
    path = root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[tool.propeval.dedup]\n", "[tool.propeval.dedup]\nlexical_treshold = 90\n"), "utf-8")


def moved_setting(root: Path) -> None:
    """A key in a table it moved out of."""
    path = root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    new = '[tool.propeval.difficulty]\nruns_dir = "runs"\n'
    path.write_text(text.replace("[tool.propeval.difficulty]\n", new), "utf-8")


def rules_table(*, areas: Sequence[str] = (), ids: Sequence[str] = (), leave_out: Sequence[str] = ()) -> None:
    """An error table of these rules (CONTRIBUTING's, docs/developing.md's), from the rule registry
    (propeval.rules): what is wrong and how to fix it have one source, which SARIF's rule help reads too."""
    from propeval.rules import markdown_table, select

    cog.outl(markdown_table(select(tuple(areas), tuple(ids), tuple(leave_out))))


def command_paths(group: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command and subcommand of propeval, as the words that call it, in help order."""
    import click

    from propeval.cli import cli

    group = group or cli
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        yield (*path, name)
        if isinstance(sub, click.Group):
            yield from command_paths(sub, (*path, name))


def cli_reference() -> None:
    """docs/cli.md's body: ``propeval --help`` and each command's and subcommand's ``--help``, as
    the terminal shows them (100 columns), under a heading that is the command: the reference is
    the help itself, so the two cannot disagree (a test fails when the page is stale)."""
    from click.testing import CliRunner

    from propeval.cli import cli

    for path in ((), *command_paths()):
        result = CliRunner().invoke(cli, [*path, "--help"], prog_name="propeval", terminal_width=100)
        if result.exit_code != 0:
            raise SystemExit(f"propeval {' '.join(path)} --help exited {result.exit_code}:\n{result.output}")
        level = "#" * min(2 + len(path), 4)
        cog.outl(f"{level} propeval {' '.join(path)}\n".replace("propeval \n", "propeval\n"))
        cog.outl(f"```text\n{result.output.rstrip()}\n```\n")


def rule_reference() -> None:
    """docs/rules.md's body: one section per area, one entry per rule id (a heading that is the id
    alone, so its anchor is the id on GitHub and on the docs site alike: SARIF's helpUri links it),
    with its severity, what it checks, what is wrong and how to fix it."""
    from propeval.rules import AREAS, in_area

    for area in AREAS:
        cog.outl(f"## `{area}` rules\n")
        for r in in_area(area).values():
            severities = " or ".join(s.value for s in (r.severity, *r.also))
            draft = " Drafts are held to it too." if r.draft else ""
            cog.outl(f"### `{r.id}`\n")
            cog.outl(f"**{severities}**: {r.description}.{draft}\n")
            cog.outl(f"- **What is wrong:** {r.wrong}.")
            cog.outl(f"- **How to fix it:** {r.fix}.\n")


def recipes(target: str) -> None:
    """The harness recipes of ``target`` ("local" or "openrouter"), from the one place that
    ``propeval eval-smoke`` runs them from (propeval.harness.recipes)."""
    from propeval.harness import recipes as r

    if target == "local":
        head = [
            "propeval export --out dist/release",
            "propeval serve-local &        # or: propeval serve-local --stub &  (the plumbing model)",
        ]
        shown = r.recipes(r.LOCAL)
    else:
        head = [
            "export OPENROUTER_API_KEY=sk-or-...   # your key: every recipe below names this variable",
            "propeval export --out dist/release",
        ]
        shown = r.recipes(r.OPENROUTER, endpoint="openrouter", run_id="llama-70b")
    body = "\n".join(head + [f"# {x.harness}\n{x.shell()}" for x in shown])
    cog.outl(f"```sh\n{body}\n```")
