"""``translation_of`` names an item of the same claim in another language.

Failing::

    id: i0002
    claim_id: c0001
    language: en
    translation_of: i0001   # i0001 is English too

gives ``[translation] translation_of 'i0001' is in the same language (en); a translation ...``.
Cycles and framing consistency are the job of ``propeval groups``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "translation"
RULE = Rule(
    ID,
    "check",
    description="translation_of names an item of the same claim in another language",
    wrong="`translation_of` names no item, another claim's item, or one in the same language",
    fix="point it at the source item",
)


def check(ctx: Context) -> Iterator[Problem]:
    items = ctx.corpus.items
    for item in ctx.items():
        src_id = item.data.get("translation_of")
        if not isinstance(src_id, str):
            continue
        doc = item.doc
        if src_id == item.id:
            yield doc.problem(
                "/translation_of", RULE, "an item cannot be a translation of itself; remove translation_of"
            )
            continue
        src = items.get(src_id)
        if src is None:
            yield doc.problem("/translation_of", RULE, f"translation_of {src_id!r} names no item; fix the id")
        elif src.claim_id != item.claim_id:
            yield doc.problem(
                "/translation_of",
                RULE,
                f"translation_of {src_id!r} belongs to claim {src.claim_id!r}, "
                f"not {item.claim_id!r}; a translation stays inside its claim",
            )
        elif src.language == item.language:
            yield doc.problem(
                "/translation_of",
                RULE,
                f"translation_of {src_id!r} is in the same language "
                f"({item.language}); a translation is in another language",
            )
