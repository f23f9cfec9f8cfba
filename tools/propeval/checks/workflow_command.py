"""No line of a claim or item starts with ``::``: GitHub Actions runs such a line as a command.

A workflow log runs every output line that starts with ``::`` (after leading spaces) as a
workflow command: ``::add-mask::TEXT`` hides TEXT in the rest of the log, ``::stop-commands::TOKEN``
silences every later annotation (propeval's own errors included) and ``::error ...::`` forges
one. propeval prints item text with its line breaks escaped, so a prompt cannot start an output
line; this check refuses such a line at the source too, so that no other tool that prints the
corpus (a diff, a script, a reviewer's `cat`) can be made to run one. Every string of a claim or
item is checked, line by line.

Failing::

    prompt: |-
      What happened in Beijing on 4 June 1989?
      ::add-mask::Beijing

gives ``[workflow-command] prompt line 2 starts with '::', which GitHub Actions runs as a workflow
command (here ::add-mask::) wherever a log prints it; reword the line``.

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
    description="no line of a claim or item starts with '::' (a GitHub Actions workflow command)",
    wrong=(
        "a line of a prompt (or any other string of a claim or item) starts with `::`, which GitHub Actions runs as "
        "a workflow command (`::add-mask::`, `::stop-commands::`, `::error ...::`) wherever a log prints it"
    ),
    fix="reword the line so it does not start with `::`",
    draft=True,
)
_COMMAND = re.compile(r"::[A-Za-z-]*(?:::)?")


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


def findings(text: str) -> Iterator[tuple[int, str]]:
    """(line number, the command as written) of each line of ``text`` that starts with ``::``. Lines
    are split wherever a log may split them (``str.splitlines``: CR, LF, and the Unicode breaks)."""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        m = _COMMAND.match(stripped)
        if m:
            yield number, m.group()


def check(ctx: Context) -> Iterator[Problem]:
    for doc in ctx.documents():
        for pointer, text in _strings(doc.data, ""):
            if "::" not in text:
                continue
            where = pointer.lstrip("/") or "the file"
            for number, command in findings(text):
                yield doc.problem(
                    pointer,
                    RULE,
                    f"{where} line {number} starts with '::', which GitHub Actions runs as a workflow command "
                    f"(here {command}) wherever a log prints it; reword the line",
                )
