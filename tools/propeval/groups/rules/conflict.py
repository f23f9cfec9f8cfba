"""No two active items of a claim share language, framing and question type.

Failing: ``i0001`` and ``i0003`` both ask claim ``c0001`` in en, neutral, named_fact.
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.corpus import Item
from propeval.groups.context import GroupsContext
from propeval.groups.matrix import lang_key
from propeval.result import Problem, Rule

ID = "groups-conflict"
RULE = Rule(
    ID,
    "groups",
    description="no two active items of a claim share language, framing and question type",
    wrong="two active items of a claim share language, framing and question type",
    fix="retire one (`status: retired` with a `retired_reason`) or change it",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    for items in ctx.items.values():
        first: dict[tuple[str, str, str], Item] = {}
        for item in sorted(items, key=lambda i: i.id):
            if not item.active:
                continue
            key = (lang_key(item.language), item.framing, item.question_type)
            if key not in first:
                first[key] = item
                continue
            other = first[key]
            yield item.doc.problem(
                "/language",
                RULE,
                f"{other.id} already asks claim {item.claim_id} in {item.language}, {item.framing}, "
                f"{item.question_type}; retire one of them (status: retired, with a retired_reason) "
                "or change its language, framing or question_type",
            )
