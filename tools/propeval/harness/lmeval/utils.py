"""The functions propeval's lm-evaluation-harness tasks call (``!function utils.NAME``).

lm-eval generates one answer per item; :func:`process_results` (through each task's
``process_results_<kind>``) grades it with propeval's own grader
(:func:`propeval.harness.source.grade_blocking`, the loop ``propeval grade`` runs), the rubric
files of the source, and the judge named by ``$PROPEVAL_JUDGE_BASE_URL`` / ``$PROPEVAL_JUDGE_MODEL``
(else the source corpus's ``judge_endpoint``). An item the judge could not grade gives ``None``,
which :func:`mean_scored` leaves out, as ``propeval score`` leaves unscored items out.

Each task is a :class:`PropevalTask`: lm-eval's own ``ConfigurableTask``, built from the task's
YAML, whose ``generation_kwargs`` come from the source's settings (temperature, max tokens, top_p,
seed, reasoning effort, thinking; the system prompt as the task's description, which lm-eval sends
as the system message with ``--apply_chat_template``): what ``propeval answer`` sends and records.
The YAML's own values are the defaults of a release; ``--gen_kwargs`` still overrides them.

``propeval harness lm-eval --out`` copies this file byte for byte into the user's folder: it
imports only the installed propeval package (and lm-eval), so that a copy works wherever propeval does.
"""

from __future__ import annotations

import functools
from typing import Any

from lm_eval.api.task import ConfigurableTask

from propeval.harness.source import Source, grade_blocking, lm_eval_generation, open_source
from propeval.judge.client import final_text


@functools.lru_cache(maxsize=8)
def _source(path: str) -> Source:
    return open_source(path)


class PropevalTask(ConfigurableTask):
    """A propeval task: its YAML, with the source's sampling settings as ``generation_kwargs``."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = dict(config or {})
        config.pop("class", None)  # how lm-eval found this class; not a task setting
        meta = config.get("metadata")
        settings = open_source(meta.get("source") if isinstance(meta, dict) else None).settings
        config["generation_kwargs"] = {**(config.get("generation_kwargs") or {}), **lm_eval_generation(settings)}
        if settings.system_prompt:
            config["description"] = settings.system_prompt
        super().__init__(config=config, **kwargs)


def load(source: str | None = None, **_: Any) -> Any:
    """``custom_dataset``: the items of ``source`` (``--metadata '{"source": "dist/release"}'``,
    else ``$PROPEVAL_SOURCE``, else the current folder) as a ``test`` split."""
    import datasets

    src = open_source(source)
    _source.cache_clear()
    rows = [{**row, "source": str(src.path)} for row in src.items]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def process_results(doc: dict[str, Any], results: list[str], rubric: str) -> dict[str, Any]:
    """The figures of one answer graded under ``rubric``, as its kind names them
    (:meth:`propeval.judge.kinds.base.KindView.harness_score`); all None when unscored."""
    src = _source(doc["source"])
    rb = src.rubric(rubric)
    answer = final_text({"content": results[0] if results else None})  # as `propeval answer` keeps it
    return rb.spec.view.harness_score(rb, grade_blocking(src, rb, doc, answer)).named


# lm-eval's task files name a plain function (`process_results: !function utils.NAME`) and cannot
# pass it an argument: one function per task, each naming its rubric and nothing else.


def process_results_facts(doc: dict[str, Any], results: list[str], rubric: str = "facts-v1") -> dict[str, Any]:
    """fact_score (0-5), propaganda (0-2), any_propaganda (0/1); None when unscored."""
    return process_results(doc, results, rubric)


def process_results_audit(doc: dict[str, Any], results: list[str], rubric: str = "audit-v1") -> dict[str, Any]:
    """One 0/1 value per label of each codebook metric (``accuracy=Correct``, ...); None when the
    item has no labels (unscored or unanswered)."""
    return process_results(doc, results, rubric)


def mean_scored(values: list[Any]) -> float | None:
    """The mean over the items that have a value (unscored items are counted neither way)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None
