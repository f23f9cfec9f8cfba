"""Languages are canonical BCP 47 tags (checked against the IANA registry by langcodes).

Failing::

    language: ua        # gives [language] 'ua' is not a valid BCP 47 language tag; did you mean 'uk'?
    language: ru_RU     # gives [language] 'ru_RU' is not in canonical BCP 47 form; write 'ru-RU'
    language: english   # gives [language] 'english' is not a valid BCP 47 language tag; use a tag such as ...

Passing::

    language: uk

The rule is :func:`propeval.langtags.problem`; ``propeval check --fix`` writes the suggested tag
when there is one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.langtags import canonical, problem
from propeval.loader import Document
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "language"
RULE = Rule(
    ID,
    "check",
    description="language tags are canonical BCP 47 (ru-RU, not ru_RU; uk, not ua)",
    wrong="not a valid BCP 47 tag",
    fix="use `en`, `zh`, `zh-Hans`, `ru`, `uk`, `de`, ...",
)


def pointers(data: object) -> Iterator[tuple[str, object]]:
    """(JSON pointer, tag) of every language field in one claim's or item's data."""
    if not isinstance(data, dict):
        return
    if "language" in data:
        yield "/language", data.get("language")
    for n, marker in enumerate(data.get("official_frame_markers") or []):
        if isinstance(marker, dict) and "language" in marker:
            yield f"/official_frame_markers/{n}/language", marker.get("language")


def check(ctx: Context) -> Iterator[Problem]:
    for item in ctx.items():
        yield from _one(item.doc, "/language", item.data.get("language"))
    for claim in ctx.claims():
        for pointer, tag in pointers(claim.data):
            if pointer != "/language":
                yield from _one(claim.doc, pointer, tag)


def _one(doc: Document, pointer: str, tag: object) -> Iterator[Problem]:
    if isinstance(tag, str) and tag:
        found = problem(tag)
        if found is not None:
            message, fixed = found
            # Only a rewrite of the same tag is applied by --fix; a guess ("ua" -> "uk") is a suggestion.
            message += " (propeval check --fix writes it)" if canonical(tag) else ""
            yield doc.problem(pointer, RULE, message, fix=f"language: {fixed}" if fixed else "")
