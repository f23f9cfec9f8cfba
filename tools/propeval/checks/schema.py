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

A ``claim.yaml`` is checked as a claim and any other file as an item, by its name, so a claim
without ``facts`` gives one message::

    questions/c0001/claim.yaml:1:1 [schema] facts missing: every claim needs it (The required facts (2-4), ...); add it
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "schema"
RULE = Rule(
    ID,
    "check",
    description="claims and items validate against schema.json",
    wrong="a field is missing, unknown, or has a wrong value",
    fix="the message names the field and the allowed values",
    draft=True,
)


def check(ctx: Context) -> Iterator[Problem]:
    if ctx.schema is None:
        return
    # The file's name says what it is meant to be: a claim.yaml without facts is told "facts
    # missing", not checked as an item. Only the files the run reports on are validated.
    for claim in ctx.claims():
        yield from ctx.schema.validate(claim.doc, "claim")
    for item in ctx.items():
        yield from ctx.schema.validate(item.doc, "item")
