"""Each language a claim's kind must cover has every (framing, question type) cell the claim uses
in any language, and at least a neutral item. Located at the claim's ``kind``; the message ends
with the ``propeval new item`` command that fills the cell.

Failing (a narrative claim, which must cover en, ru, uk and de, asked only in English)::

    questions/c0002/claim.yaml:2:7 [groups-completeness] no ru item for neutral/named_fact: narrative
    claims cover en, ru, uk, de; add one with: propeval new item --claim c0002 --language ru ...
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.result import Problem, Rule

ID = "groups-completeness"
RULE = Rule(
    ID,
    "groups",
    description="each required language has every cell the claim uses, and a neutral item",
    wrong=(
        "a language the claim's kind must cover lacks a (framing, question type) cell the claim uses elsewhere, or "
        "any neutral item"
    ),
    fix="run the `propeval new item ...` command in the message",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    for cid, matrix in ctx.matrices.items():
        claim = ctx.corpus.claims[cid]
        for m in matrix.missing:
            if m.reason != "required":
                continue
            covers = ", ".join(matrix.required)
            yield claim.doc.problem(
                "/kind",
                RULE,
                f"no {m.language} item for {m.framing}/{m.question_type}: {claim.kind} claims cover {covers}; "
                f"add one with: {m.command}",
                fix=m.command,
            )
