"""Gold sets: answers with a human verdict each (``rubrics/<name>/gold.jsonl``), for the judge gate.

A gold case is one JSON line::

    {"id": "g01", "question": "...", "answer": "...", "language": "en",
     "facts": [{"id": "f1", "text": "..."}], "frame_markers": [{"language": "en", "text": "..."}],
     "label": {"facts": [{"id": "f1", "state": "stated"}], "propaganda": 0, "frame_adopted": null}}

People label what a judge labels (fact states, propaganda, the quote; or the codebook metrics),
and the compared fields, such as the fact score, are derived from a human label exactly as from a
judge's verdict: the label goes through the judge engine's own validator (:func:`human_fields`).
The judge gate grades each case's answer from memory through the grading loop of ``propeval
grade`` (:func:`case_of` is what the judge is shown), and verification re-derives from the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.corpus import content_hash
from propeval.judge.prompt import Case
from propeval.loader import LoadError, load_jsonl, relative_path
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric

RULE = "judge-gate"


@dataclass(frozen=True)
class GoldSet:
    """A rubric's gold cases as read, their content hash, and each case's human fields."""

    rubric: str
    cases: list[dict[str, Any]]
    hash: str
    human: list[dict[str, Any]]

    def case_id(self, n: int) -> str:
        """The id of case ``n`` (its ``id``, else its 1-based place)."""
        return str(self.cases[n].get("id", n + 1))


def human_fields(rubric: Rubric, case: dict[str, Any]) -> dict[str, Any]:
    """The compared fields of a gold case's human ``label``, derived as a judge verdict's are.

    Raises ValueError (the engine's VerdictError) when the label is not a valid verdict.
    """
    from propeval.judge.verdict import judge

    label = case.get("label")
    if not isinstance(label, dict):
        raise ValueError("it has no 'label' object (the human verdict)")
    ids = [str(f.get("id")) for f in case.get("facts") or [] if isinstance(f, dict)]
    raw = json.dumps({"rationale": "gold", **label})
    outcome = judge(raw, rubric, fact_ids=ids, answer=str(case.get("answer", "")))
    if outcome.notes:
        raise ValueError("; ".join(outcome.notes))
    return {k: outcome.fields.get(k) for k in rubric.spec.agreement_fields}


def case_of(case: dict[str, Any]) -> Case:
    """What the judge is shown of a gold case besides its answer (as a corpus item's Case)."""
    facts = [(str(f.get("id")), str(f.get("text", ""))) for f in case.get("facts") or [] if isinstance(f, dict)]
    markers = [
        (str(m.get("language", "")), str(m.get("text", "")))
        for m in case.get("frame_markers") or []
        if isinstance(m, dict)
    ]
    return Case(
        str(case.get("question", "")),
        facts,
        markers,
        str(case.get("language", "en")),
        str(case.get("framing", "neutral")),
        str(case.get("question_type", "named_fact")),
    )


def answer_of(case: dict[str, Any]) -> str:
    return str(case.get("answer") or "")


def load_gold(rubric: Rubric, root: Path) -> GoldSet:
    """The gold set of ``rubric``: its cases, their content hash and human fields. A missing
    file, a bad line or a label the validator refuses is a LoadError naming the place."""
    path: Path = rubric.gold_path
    rel = relative_path(path, root) if path.is_relative_to(root) else path.as_posix()
    if not path.is_file():
        raise LoadError(Problem(rel, 0, 0, RULE, f"rubric {rubric.name!r} has no gold set; write {rel}"))
    cases: list[dict[str, Any]] = []
    human: list[dict[str, Any]] = []
    for line, row in load_jsonl(path, root=root):
        try:
            human.append(human_fields(rubric, row))
        except ValueError as e:
            raise LoadError(Problem(rel, line, 1, RULE, f"gold case {row.get('id')!r}: {e}")) from None
        cases.append(row)
    return GoldSet(rubric.name, cases, content_hash(cases), human)
