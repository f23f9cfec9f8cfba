"""``translation_of`` names an item of the same claim: a translation stays inside its claim.

Failing: ``translation_of: i0042`` on an item of ``c0001``, where ``i0042`` belongs to ``c0007``.
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.result import Problem, Rule

ID = "groups-translation-claim"
RULE = Rule(
    ID,
    "groups",
    description="translation_of names an item of the same claim",
    wrong="`translation_of` names an item of another claim, or no item",
    fix="point it at an item of the same claim",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    items = ctx.corpus.items
    for item in ctx.scoped:
        src_id = item.translation_of
        if src_id is None:
            continue
        src = items.get(src_id)
        if src is None:
            yield item.doc.problem(
                "/translation_of",
                RULE,
                f"translation_of {src_id!r} names no item; point it at the item this one translates, or remove it",
            )
        elif src.claim_id != item.claim_id:
            yield item.doc.problem(
                "/translation_of",
                RULE,
                f"translation_of {src_id!r} is an item of claim {src.claim_id}, not {item.claim_id}; "
                f"a translation stays inside its claim: point it at an item of {item.claim_id}",
            )
