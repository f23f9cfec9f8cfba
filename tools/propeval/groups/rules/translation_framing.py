"""A translation keeps its source's framing and question type (both active, of one claim).

Failing: ``framing: loaded`` with ``translation_of: i0001``, where ``i0001`` is neutral.
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.result import Problem, Rule

ID = "groups-translation-framing"
RULE = Rule(
    ID,
    "groups",
    description="a translation keeps its source's framing and question type",
    wrong="a translation's framing or question type differs from its source's",
    fix="match the source, or drop `translation_of`",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    items = ctx.corpus.items
    for item in ctx.scoped:
        src = items.get(item.translation_of) if item.translation_of is not None else None
        if src is None or src.claim_id != item.claim_id or not (item.active and src.active):
            continue
        for key, label in (("framing", "framing"), ("question_type", "question type")):
            mine, theirs = item.data.get(key), src.data.get(key)
            if mine != theirs:
                yield item.doc.problem(
                    f"/{key}",
                    RULE,
                    f"{key} is {mine} but its source {src.id} is {theirs}; a translation keeps its "
                    f"source's {label}: set {key}: {theirs}, or remove translation_of",
                )
