"""Every claim and item validates against schema.json.

Passing::

    id: i0001
    claim_id: c0001
    language: en
    framing: neutral
    question_type: named_fact
    prompt: What happened in Beijing on 4 June 1989?
    status: active

Failing (``framing: balanced`` is not one of the allowed values)::

    questions/c0001/i0001.yaml:4:10 [schema] 'balanced' is not one of ['neutral', 'loaded']; use one of those values
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "schema"


def check(ctx: Context) -> Iterator[Problem]:
    if ctx.schema is None:
        return
    for doc in ctx.documents():
        yield from ctx.schema.validate(doc)
