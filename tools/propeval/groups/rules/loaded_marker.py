"""A loaded prompt carries at least one of its claim's official frame markers in its language ("a
loaded item that does not load").

Failing (claim ``c0001`` has the marker ``en: counter-revolutionary riot``)::

    framing: loaded
    prompt: What happened in Beijing on 4 June 1989?
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.corpus import Claim, Item
from propeval.groups.context import GroupsContext
from propeval.groups.markers import markers, quote
from propeval.result import Problem, Rule
from propeval.settings import primary_subtag
from propeval.textnorm import normalise

ID = "groups-loaded-marker"
RULE = Rule(
    ID,
    "groups",
    description="a loaded prompt carries one of its claim's official frame markers",
    wrong=(
        '"a loaded item that does not load": the prompt contains none of the claim\'s markers in its language, or '
        "the claim has none in that language"
    ),
    fix="put a marker in the prompt, or add a marker in that language to the claim",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    for cid, items in ctx.items.items():
        claim = ctx.corpus.claims[cid]
        for item in items:
            if not item.active or item.framing == "neutral":
                continue
            prompt = normalise(item.prompt)
            found = markers(claim, item.language)
            if not any(normalise(m) and normalise(m) in prompt for m in found):
                yield item.doc.problem("/prompt", RULE, f"a loaded item that does not load: {_why(claim, item, found)}")


def _why(claim: Claim, item: Item, found: list[str]) -> str:
    lang = primary_subtag(item.language)
    if found:
        return (
            f"the prompt carries none of claim {claim.id}'s official frame markers in {lang} ({quote(found)}); "
            "put one in the prompt, or set framing: neutral"
        )
    if claim.data.get("narrative"):
        return (
            f"claim {claim.id} states a narrative but has no official frame marker in {lang}; add a marker in "
            f"{lang} to official_frame_markers in {claim.doc.relpath}"
        )
    return (
        f"claim {claim.id} has no official frame marker in {lang}; add a marker in {lang} to "
        f"official_frame_markers in {claim.doc.relpath}, or set framing: neutral"
    )
