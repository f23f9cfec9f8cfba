"""The functions propeval's lm-evaluation-harness tasks call (``!function utils.NAME``).

lm-eval generates one answer per item; :func:`process_results_facts` and
:func:`process_results_audit` grade it with propeval's own grader
(:func:`propeval.harness.source.grade_blocking`, the loop ``propeval grade`` runs), the rubric
files of the source, and the judge named by ``$PROPEVAL_JUDGE_BASE_URL`` / ``$PROPEVAL_JUDGE_MODEL``
(else the source corpus's ``judge_endpoint``). An item the judge could not grade gives ``None``,
which :func:`mean_scored` leaves out, as ``propeval score`` leaves unscored items out.
"""

from __future__ import annotations

import functools
from typing import Any

from propeval.harness.source import Source, grade_blocking, item_scores, open_source
from propeval.judge.client import final_text


@functools.lru_cache(maxsize=8)
def _source(path: str) -> Source:
    return open_source(path)


def load(source: str | None = None, **_: Any) -> Any:
    """``custom_dataset``: the items of ``source`` (``--metadata '{"source": "dist/release"}'``,
    else ``$PROPEVAL_SOURCE``, else the current folder) as a ``test`` split."""
    import datasets

    src = open_source(source)
    _source.cache_clear()
    rows = [{**row, "source": str(src.path)} for row in src.items]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def _grade(doc: dict[str, Any], results: list[str], rubric_name: str) -> tuple[Any, dict[str, Any] | None]:
    src = _source(doc["source"])
    rubric = src.rubric(rubric_name)
    answer = final_text({"content": results[0] if results else None})  # as `propeval answer` keeps it
    fields = grade_blocking(src, rubric, doc, answer)
    return rubric, item_scores(rubric, fields) if fields.get("status") != "error" else None


def process_results_facts(doc: dict[str, Any], results: list[str], rubric: str = "facts-v1") -> dict[str, Any]:
    """fact_score (0-5), propaganda (0-2), any_propaganda (0/1); None when unscored."""
    _, figures = _grade(doc, results, rubric)
    if figures is None:
        return {"fact_score": None, "propaganda": None, "any_propaganda": None}
    return {**figures, "any_propaganda": int(figures["propaganda"] > 0)}


def process_results_audit(doc: dict[str, Any], results: list[str], rubric: str = "audit-v1") -> dict[str, Any]:
    """One 0/1 value per label of each codebook metric (``accuracy=Correct``, ...); None when the
    item has no labels (unscored or unanswered)."""
    rb, figures = _grade(doc, results, rubric)
    labelled = figures is not None and all(figures.get(n) is not None for n in rb.spec.record_fields)
    return {
        f"{name}={label}": (int(figures[name] == label) if labelled and figures else None)
        for name in rb.spec.record_fields
        for label in rb.labels.get(name, [])
    }


def mean_scored(values: list[Any]) -> float | None:
    """The mean over the items that have a value (unscored items are counted neither way)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None
