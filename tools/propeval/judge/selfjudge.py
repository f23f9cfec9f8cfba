"""Scores a model should not be trusted with: graded by itself, or on items it picked.

Two cases are warned about, naming the models:

* ``self-judged``: the answer model is also a judge of its answers (a panel member counts);
* ``reference-model``: the answer model is the answerability reference model, the model whose
  answers decided which items were kept (``ledger/answerability/*.json`` name it in
  ``binding.answer_model``), so the corpus leans towards what it knows.

Model ids are compared after :func:`normalise`: case-folded, surrounding space dropped, and
everything up to the last ``/`` dropped, so a provider or organisation prefix does not hide a
match (``openai/GPT-4o`` and ``gpt-4o`` are the same model; so are ``x-ai/grok-4`` and
``Grok-4``). Versions and tags are kept (``gpt-4o-mini`` is not ``gpt-4o``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from propeval.ledger.paths import ANSWERABILITY, JUDGE

if TYPE_CHECKING:
    from propeval.ledger.view import LedgerView
    from propeval.workspace import Workspace

SELF_JUDGED = "self-judged"
REFERENCE_MODEL = "reference-model"


def normalise(model: str) -> str:
    """A model id for comparison: case-folded, without a provider prefix (``openai/``)."""
    return model.strip().rsplit("/", 1)[-1].strip().casefold()


@dataclass
class Ledger:
    """What the answerability records say about their models: ``reference`` and ``judges`` map
    each normalised model id to how many records name it as the reference (answer) model or as
    the judge, and ``self_graded`` counts records whose reference model judged its own answer."""

    reference: Counter[str] = field(default_factory=Counter)
    judges: Counter[str] = field(default_factory=Counter)
    names: dict[str, str] = field(default_factory=dict)  # normalised id -> the id as first written
    self_graded: Counter[str] = field(default_factory=Counter)


def read_ledger(view: LedgerView) -> Ledger:
    """The models named by ``<ledger_dir>/answerability/*.json`` (read through the strict loader, each
    file once per workspace; an unreadable or odd record is skipped here, the gate reports it)."""
    out = Ledger()
    for rel in view.paths.records(ANSWERABILITY):
        doc, _error = view.document(rel)
        binding = doc.data.get("binding") if doc is not None else None
        if not isinstance(binding, dict):
            continue
        answer, judge = binding.get("answer_model"), binding.get("judge_model")
        if isinstance(answer, str) and answer.strip():
            out.reference[normalise(answer)] += 1
            out.names.setdefault(normalise(answer), answer)
        if isinstance(judge, str) and judge.strip():
            out.judges[normalise(judge)] += 1
            out.names.setdefault(normalise(judge), judge)
        if isinstance(answer, str) and isinstance(judge, str) and normalise(answer) == normalise(judge):
            out.self_graded[normalise(answer)] += 1
    return out


def ledger_for(ws: Workspace) -> Ledger:
    """:func:`read_ledger` of a workspace's ledger (``[tool.propeval.gates] ledger_dir``)."""
    return read_ledger(ws.ledger)


def gate_judges(view: LedgerView) -> dict[str, str]:
    """rubric -> the judge model of its judge-gate record (``<ledger_dir>/judge/<rubric>.json``)."""
    out: dict[str, str] = {}
    for rel in view.paths.records(JUDGE):
        doc, _error = view.document(rel)
        binding = doc.data.get("binding") if doc is not None else None
        if isinstance(binding, dict) and isinstance(binding.get("judge_model"), str):
            out[Path(rel).stem] = binding["judge_model"]
    return out


def card_lines(ws: Workspace) -> list[str]:
    """:func:`card_warnings` of a workspace's ledger: the dataset card's self-judging lines."""
    return card_warnings(read_ledger(ws.ledger), gate_judges(ws.ledger))


def warnings(answer_models: Iterable[str], judge_models: Iterable[str], ledger: Ledger) -> list[tuple[str, str]]:
    """``(rule, message)`` for each answer model graded by itself or that is the reference model."""
    judges: dict[str, list[str]] = {}
    for j in judge_models:
        judges.setdefault(normalise(j), [])
        if j not in judges[normalise(j)]:
            judges[normalise(j)].append(j)
    out: list[tuple[str, str]] = []
    for model in sorted(set(answer_models)):
        key = normalise(model)
        if key in judges:
            same = ", ".join(judges[key])
            out.append(
                (
                    SELF_JUDGED,
                    f"answer model {model!r} is also a judge ({same}): a model scored with itself as judge; "
                    "grade with another judge, or leave it out of the panel",
                )
            )
        if ledger.reference[key]:
            out.append(
                (
                    REFERENCE_MODEL,
                    f"answer model {model!r} is the answerability reference model ({ledger.names[key]!r} in "
                    f"{ledger.reference[key]} ledger/answerability record(s)): items were kept because it answered "
                    "them, so its score is not comparable with other models'",
                )
            )
    return out


def card_warnings(ledger: Ledger, gate_judges: Mapping[str, str]) -> list[str]:
    """The card's lines: answerability records whose reference model judged itself, and judge-gate
    judges (rubric -> model) that are also the answerability reference model."""
    out = [
        f"{n} answerability record(s) graded the reference model {ledger.names[m]!r} with itself as judge: "
        "the gate's evidence for those items is a model scored with itself as judge."
        for m, n in sorted(ledger.self_graded.items())
    ]
    for rubric, judge in sorted(gate_judges.items()):
        key = normalise(judge)
        if ledger.reference[key]:
            out.append(
                f"The {rubric} judge {judge!r} is also the answerability reference model: scores of "
                f"{ledger.names[key]!r} under this judge are self-judged, on items it was used to select."
            )
    return out
