"""Fill a rubric's template, fencing untrusted text so it cannot end or rewrite a section.

The question, the answer, the claim's facts and its frame markers are untrusted: an answer may
say "ignore previous instructions" and carry a fake verdict, or try to close the answer section
early, and a contributor may write a "fact" that reads like a grading rule. Each fact and each
marker gets a fence of its own, below its id or language tag (both checked by the schema), so
it can neither forge another fact nor pass for rubric text. Each call draws a fresh
random boundary token; untrusted text goes between ``<<<NAME-TOKEN`` and ``NAME-TOKEN>>>`` lines.
Before that, any run of ``<<<`` / ``>>>`` in untrusted text is turned into look-alike guillemets
and any occurrence of the token is removed, so the text can neither close its own fence nor
forge another. ``${boundary}`` lets the template tell the judge which token is real.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propeval.judge.rubric import Rubric

if TYPE_CHECKING:
    from propeval.corpus import Claim, Item

_PLACEHOLDER_TOKEN = "BOUNDARY"  # stands in for the random token when hashing


def new_token() -> str:
    return secrets.token_hex(8).upper()


def neutralise(text: str, token: str) -> str:
    """Untrusted text with fence markers disarmed and the token removed."""
    text = text.replace("<<<", "‹‹‹").replace(">>>", "›››")
    while token in text:
        text = text.replace(token, "")
    return text


def inline(text: str, token: str) -> str:
    """A short label (a fact id, a language tag) on one line, disarmed like fenced text."""
    return " ".join(neutralise(text, token).split())


def fence(name: str, text: str, token: str) -> str:
    return f"<<<{name}-{token}\n{neutralise(text, token)}\n{name}-{token}>>>"


@dataclass(frozen=True)
class Case:
    """What the judge is shown of one item besides the answer: its question, its claim's facts
    (id, text) in order, the frame markers (language, text), and the item's labels."""

    question: str
    facts: list[tuple[str, str]]
    markers: list[tuple[str, str]]
    language: str = ""
    framing: str = ""
    question_type: str = ""

    @classmethod
    def of(cls, item: Item, claim: Claim) -> Case:
        return cls(
            item.prompt,
            [(f.id, f.text) for f in claim.facts],
            list(claim.markers),
            item.language,
            item.framing,
            item.question_type,
        )


@dataclass(frozen=True)
class FilledPrompt:
    text: str
    hash: str  # sha256 of the prompt with the random token replaced: stable across calls
    token: str
    shown_answer: str  # the answer as the judge saw it (after neutralising)


def fill(
    rubric: Rubric,
    *,
    question: str,
    answer: str,
    facts: list[tuple[str, str]],
    markers: list[tuple[str, str]],
    language: str = "",
    framing: str = "",
    question_type: str = "",
    token: str | None = None,
) -> FilledPrompt:
    """The judge prompt for one (item, answer) pair."""
    tok = token or new_token()

    def render(t: str) -> str:
        values: dict[str, Any] = {
            "question": fence("QUESTION", question, t),
            "answer": fence("ANSWER", answer, t),
            "facts": "\n".join(f"- {inline(fid, t)}:\n{fence('FACT', text, t)}" for fid, text in facts) or "(none)",
            "fact_ids": ", ".join(inline(fid, t) for fid, _ in facts),
            "frame_markers": "\n".join(f"- [{inline(lang, t)}]\n{fence('MARKER', text, t)}" for lang, text in markers)
            or "(none)",
            "language": inline(language, t),
            "framing": inline(framing, t),
            "question_type": inline(question_type, t),
            "boundary": t,
        }
        return string.Template(rubric.template).substitute(values)

    text = render(tok)
    stable = render(_PLACEHOLDER_TOKEN)
    digest = "sha256:" + hashlib.sha256(stable.encode("utf-8")).hexdigest()
    return FilledPrompt(text, digest, tok, neutralise(answer, tok))


def fill_case(rubric: Rubric, case: Case, answer: str, token: str | None = None) -> FilledPrompt:
    """:func:`fill` for one :class:`Case`."""
    return fill(
        rubric,
        question=case.question,
        answer=answer,
        facts=case.facts,
        markers=case.markers,
        language=case.language,
        framing=case.framing,
        question_type=case.question_type,
        token=token,
    )
