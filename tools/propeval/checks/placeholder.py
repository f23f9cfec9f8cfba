"""No ``TODO`` placeholder left by ``propeval new`` survives into a commit.

Failing::

    prompt: "TODO: write the question as a user would ask it"

gives ``[placeholder] fill in this field: replace the TODO text``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from propeval.loader import escape
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "placeholder"
RULE = Rule(
    ID,
    "check",
    description="no TODO placeholder from `propeval new` is left",
    wrong="a `TODO` left by `propeval new`",
    fix="fill in the field",
)
MARK = "TODO"


def check(ctx: Context) -> Iterator[Problem]:
    for doc in ctx.documents():
        for pointer, value in _strings(doc.data, ""):
            if value.lstrip().startswith(MARK):
                yield doc.problem(pointer, RULE, f"fill in this field: replace the placeholder {value!r}")


def _strings(node: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield pointer, node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, f"{pointer}/{escape(k)}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{pointer}/{i}")
