"""Parse a judge's reply, then hand it to the rubric's kind to validate and derive what is derived.

A verdict that fails here is re-asked with the message as feedback; after the last re-ask the
item is recorded *unscored* with the reason and the raw text. Messages say what is wrong and
what to send instead, because the judge reads them. What a valid verdict is depends on the
rubric's kind (``propeval.judge.kinds``); this module knows no kind.
"""

from __future__ import annotations

import json
import re
from typing import Any

from propeval.judge.kinds.base import Outcome, VerdictError
from propeval.judge.prompt import Case, fill_case
from propeval.judge.rubric import Rubric
from propeval.loader import Limits, LoadError, load_json_text

__all__ = ["Outcome", "VerdictError", "item_schema", "judge", "parse", "rederive"]

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n(.*?)\n?```\s*$", re.DOTALL)
_LIMITS = Limits(max_bytes=200_000, max_depth=8, max_nodes=2_000)


def item_schema(rubric: Rubric, fact_ids: list[str]) -> dict[str, Any]:
    """The rubric's verdict schema for one item (a facts rubric narrows it to the item's fact ids)."""
    return rubric.spec.item_schema(rubric, fact_ids)


def parse(raw: str | None) -> dict[str, Any]:
    """The JSON object in a reply: bare, or in one ```json fence. Duplicate keys are refused."""
    if raw is None or not raw.strip():
        raise VerdictError("the reply was empty; send one JSON object and nothing else")
    text = raw.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise VerdictError("the reply holds no JSON object; send one JSON object and nothing else")
        text = text[start : end + 1]
    try:
        data = load_json_text(text, "verdict", limits=_LIMITS).data
    except LoadError as e:
        p = e.problem
        if p.rule == "number-size":  # the strict loader's cap, met before int()'s own limit
            raise VerdictError(
                "the reply holds an integer too long to read; use the labels the schema allows"
            ) from None
        raise VerdictError(
            f"the reply is not valid JSON ({p.message} at line {p.line}, column {p.col}); "
            "send one complete JSON object and nothing else"
        ) from None
    except ValueError:  # an integer past Python's digit limit
        raise VerdictError("the reply holds an integer too long to read; use the labels the schema allows") from None
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise VerdictError(
            "the reply holds a lone surrogate escape (\\ud800-\\udfff); send valid Unicode text"
        ) from None
    return data


def judge(
    raw: str | None, rubric: Rubric, *, fact_ids: list[str], answer: str, shown_answer: str | None = None
) -> Outcome:
    """Parse and validate one reply. Raises :class:`VerdictError` with feedback for the judge."""
    data = parse(raw)
    return rubric.spec.validate(data, rubric, fact_ids, answer, shown_answer if shown_answer is not None else answer)


def rederive(rubric: Rubric, case: Case, answer: str, reply: str) -> tuple[dict[str, Any], str]:
    """What grading derives from a judge's ``reply`` to ``answer``, and the judge prompt's hash.

    The same code that graded the answer (prompt filling, this validator, the rubric's score
    table) runs again, so a recorded score, quote or prompt hash can be checked, never trusted.
    Raises :class:`VerdictError` when the reply is not a valid verdict.
    """
    filled = fill_case(rubric, case, answer)
    fact_ids = [fid for fid, _ in case.facts]
    outcome = judge(reply, rubric, fact_ids=fact_ids, answer=answer, shown_answer=filled.shown_answer)
    return outcome.fields, filled.hash
