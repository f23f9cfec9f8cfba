"""Every loaded item has a neutral item of the same language (its control). Since a language whose
items are all loaded fails this rule, it also guarantees that every language a claim uses has at
least a neutral item.

Failing (``i0002`` is loaded, and claim ``c0001`` has no neutral item in English)::

    questions/c0001/i0002.yaml:3:10 [groups-control] loaded item has no neutral control: claim c0001
    has no neutral item in en; add one with: propeval new item --claim c0001 --language en ...
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.result import Problem, Rule
from propeval.settings import primary_subtag

ID = "groups-control"
RULE = Rule(
    ID,
    "groups",
    description="every loaded item has a neutral control in its language and question type",
    wrong="a loaded item has no neutral item in its language",
    fix="add the neutral item the message names",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    for cid, matrix in ctx.matrices.items():
        for m in matrix.missing:
            if m.reason != "control":
                continue
            for item in ctx.items[cid]:
                if item.active and item.framing == "loaded" and item.language == m.language:
                    yield item.doc.problem(
                        "/framing",
                        RULE,
                        f"loaded item has no neutral control: claim {cid} has no neutral item in "
                        f"{primary_subtag(item.language)}; "
                        f"add one with: {m.command}",
                        fix=m.command,
                    )
