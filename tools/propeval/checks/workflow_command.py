"""No text of a claim or item holds a workflow command: GitHub Actions runs it from any log line.

The runner reads a command in two forms (actions/runner ``ActionCommand``): ``::name::data`` at
the start of a line, after any leading white space, and ``##[name]data`` anywhere in a line. A
workflow log runs either as a workflow command: ``::add-mask::TEXT`` hides TEXT in the rest of
the log, ``::stop-commands::TOKEN`` silences every later annotation (propeval's own errors
included) and ``::error ...::`` forges one; ``##[add-mask]TEXT`` and ``##[stop-commands]TOKEN``
do the same from the middle of a line. propeval prints item text with its line breaks escaped
and ``##[`` broken, so a prompt cannot start an output line or hold a command; this check
refuses such text at the source too, so that no other tool that prints the corpus (a diff, a
script, a reviewer's `cat`) can be made to run one. Every string of a claim or item is checked,
line by line.

Failing::

    prompt: |-
      What happened in Beijing on 4 June 1989?
      ::add-mask::Beijing

gives ``[workflow-command] prompt line 2 starts with '::', which GitHub Actions runs as a workflow
command (here ::add-mask::) wherever a log prints it; reword the line``.

Failing::

    prompt: "Is ##[add-mask]Beijing masked in the log?"

gives ``[workflow-command] prompt line 1 holds '##[', which GitHub Actions runs as a workflow
command (here ##[add-mask]) wherever a log prints it; reword the line``.

Passing::

    prompt: "Which rights does article 35 guarantee, and what does ::1 mean in IPv6?"
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "workflow-command"
RULE = Rule(
    ID,
    "check",
    description="no line of a claim or item starts with '::' or holds '##[' (a GitHub Actions workflow command)",
    wrong=(
        "a line of a prompt (or any other string of a claim or item) starts with `::` (after any blanks) or holds "
        "`##[`, which GitHub Actions runs as a workflow command (`::add-mask::`, `##[stop-commands]`, "
        "`::error ...::`) wherever a log prints it"
    ),
    fix="reword the line so it does not start with `::` and holds no `##[`",
    draft=True,
)
_COMMAND = re.compile(r"::[A-Za-z-]*(?:::)?")
_V1 = re.compile(r"##\[[^\]\s]{0,40}\]?")


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, text) of every string in a document's data, keys' values depth first."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{pointer}/{i}")


def findings(text: str) -> Iterator[tuple[int, str, str]]:
    """(line number, how, the command as written) of each line of ``text`` that starts with ``::``
    after any white space (``how`` "starts with '::'") or holds ``##[`` (``how`` "holds '##['").
    Lines are split wherever a log may split them (``str.splitlines``: CR, LF, and the Unicode
    breaks); blanks are every Unicode white space, more than the runner's ``TrimStart`` trims."""
    for number, line in enumerate(text.splitlines(), start=1):
        m = _COMMAND.match(line.lstrip())
        if m:
            yield number, "starts with '::'", m.group()
        for v1 in _V1.finditer(line):
            yield number, "holds '##['", v1.group()


def check(ctx: Context) -> Iterator[Problem]:
    for doc in ctx.documents():
        for pointer, text in _strings(doc.data, ""):
            if "::" not in text and "##[" not in text:
                continue
            where = pointer.lstrip("/") or "the file"
            for number, how, command in findings(text):
                yield doc.problem(
                    pointer,
                    RULE,
                    f"{where} line {number} {how}, which GitHub Actions runs as a workflow command "
                    f"(here {command}) wherever a log prints it; reword the line",
                )
