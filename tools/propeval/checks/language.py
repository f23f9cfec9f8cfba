"""Languages are valid BCP 47 tags (checked against the IANA registry by langcodes).

Failing::

    language: english

gives ``[language] 'english' is not a valid BCP 47 language tag; use a tag such as en, zh-Hans, ru, uk or de``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

from propeval.loader import Document
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "language"


@lru_cache(maxsize=256)
def valid(tag: str) -> bool:
    import langcodes

    return bool(langcodes.tag_is_valid(tag))


def check(ctx: Context) -> Iterator[Problem]:
    for item in ctx.corpus.all_items:
        yield from _one(item.doc, "/language", item.data.get("language"))
    for claim in ctx.corpus.all_claims:
        for n, marker in enumerate(claim.data.get("official_frame_markers") or []):
            if isinstance(marker, dict):
                yield from _one(claim.doc, f"/official_frame_markers/{n}/language", marker.get("language"))


def _one(doc: Document, pointer: str, tag: object) -> Iterator[Problem]:
    if isinstance(tag, str) and tag and not valid(tag):
        yield doc.problem(
            pointer,
            ID,
            f"{tag!r} is not a valid BCP 47 language tag; use a tag such as en, zh-Hans, ru, uk or de",
        )
