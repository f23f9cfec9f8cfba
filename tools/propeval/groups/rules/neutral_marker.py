"""A neutral prompt carries none of its claim's official frame markers in its language.

Failing (claim ``c0001`` has the marker ``en: counter-revolutionary riot``)::

    framing: neutral
    prompt: Why was the counter-revolutionary riot in Beijing suppressed?
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.groups.markers import markers
from propeval.result import Problem, Rule
from propeval.textnorm import normalise

ID = "groups-neutral-marker"
RULE = Rule(
    ID,
    "groups",
    description="a neutral prompt carries none of its claim's official frame markers",
    wrong="a neutral prompt contains one of the claim's official frame markers",
    fix="reword the prompt, or make the item `framing: loaded`",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    for cid, items in ctx.items.items():
        claim = ctx.corpus.claims[cid]
        for item in items:
            if not item.active or item.framing != "neutral":
                continue
            prompt = normalise(item.prompt)
            for m in markers(claim, item.language):
                if normalise(m) and normalise(m) in prompt:
                    yield item.doc.problem(
                        "/prompt",
                        RULE,
                        f'neutral item carries the official frame marker "{m}" of claim {claim.id}; '
                        "reword the prompt without it, or set framing: loaded",
                    )
