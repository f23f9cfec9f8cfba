"""The propeval benchmark as inspect_ai tasks: ``propeval/facts`` and ``propeval/audit``.

Each item is one sample whose input is the item's prompt, asked as a single user turn with no
system prompt (as ``propeval answer`` asks it). The scorer is propeval's own grader
(:func:`propeval.judge.grade.grade_answer`): the same rubric files, prompt template, verdict
checks, re-ask loop and score table as ``propeval grade``; only the judge model is inspect's
(the ``grader`` model role, or ``-T judge=...``).

Per sample, ``facts`` gives ``fact_score`` (0-5), ``propaganda`` (0-2) and ``any_propaganda``
(0/1); an unanswered item scores 0 and 0, and an item the judge could not grade is *unscored*
(counted neither way), as in ``propeval score``. ``audit`` gives one 0/1 value per label of each
codebook metric (``accuracy=Correct``, ...), so their means are the label shares.

The answers are asked with the source's sampling settings (temperature, max_tokens, top_p, seed,
reasoning effort, thinking, system prompt: what ``propeval answer`` sends and records), the
verdicts with its judge settings (judge_temperature, judge_max_tokens, max_reasks).

Run it (a release folder, its items.jsonl, or a corpus root). For an OpenAI-compatible server,
name the model ``openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY`` set: inspect's ``openai/`` provider takes a model name it does not know for
OpenAI's newest reasoning model, and then sends no temperature::

    LOCAL_BASE_URL=http://127.0.0.1:8080/v1 LOCAL_API_KEY=none inspect eval propeval/facts \\
        -T source=dist/release --model openai-api/local/gemma-3-270m --model-role grader=openai-api/local/gemma-3-270m
    inspect eval propeval/audit -T source=. \\
        --model openrouter/meta-llama/llama-3.3-70b-instruct --model-role grader=openrouter/openai/gpt-4o-mini

By file (``inspect eval "$(propeval harness inspect)@facts"``), give ``source`` as an absolute path:
inspect runs a task file from the file's own folder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ResponseSchema,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.util import JSONSchema

from propeval.errors import UsageError
from propeval.harness.source import Source, case_of, inspect_config, open_source
from propeval.judge.client import Completion, final_text
from propeval.judge.grade import Complete, grade_answer
from propeval.judge.rubric import Rubric


def _dataset(source: Source) -> MemoryDataset:
    return MemoryDataset(
        [Sample(input=row["prompt"], id=row["id"], metadata={"item": row}) for row in source.items],
        name="propeval",
        location=str(source.path),
    )


def _schema_as_is(grader: Model, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The verdict schema as propeval's own client sends it, for a grader on an OpenAI-compatible
    chat API (``openai-api/...``, ``openrouter/...``, vLLM, ...); None for any other provider.

    inspect's ``JSONSchema`` has no ``minItems``/``maxItems``, so its copy of the schema lets a judge
    list the facts without end: the bundled 270M model did, until every verdict was cut at its
    token cap (0 of 3 graded, where the same judge graded 3 of 3 through propeval's client). The
    request's ``extra_body`` goes over inspect's ``response_format``, so the judge gets the
    rubric's schema whole; any other provider keeps inspect's own translation of the schema.
    """
    try:
        from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI
    except ImportError:  # a later inspect moved it: its own translation of the schema stays
        return None
    api = getattr(grader, "api", None)
    if not isinstance(api, OpenAICompatibleAPI) or getattr(api, "responses_api", False):
        return None
    return {"response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}}


def _complete(grader: Model, temperature: float, max_tokens: int) -> Complete:
    """propeval's ``Complete`` over an inspect model."""

    async def complete(messages: list[dict[str, str]], schema: dict[str, Any]) -> Completion:
        chat: list[ChatMessage] = [
            ChatMessageUser(content=m["content"]) if m["role"] == "user" else ChatMessageAssistant(content=m["content"])
            for m in messages
        ]
        config = GenerateConfig(
            temperature=temperature,
            max_tokens=max_tokens,
            response_schema=ResponseSchema(name="verdict", json_schema=JSONSchema.model_validate(schema)),
            extra_body=_schema_as_is(grader, schema),
        )
        out = await grader.generate(chat, config=config)
        return Completion(out.completion, "length" if out.stop_reason == "max_tokens" else out.stop_reason, 1)

    return complete


async def _grade(
    source: Source, rubric: Rubric, state: TaskState, judge: str | None, max_reasks: int | None
) -> dict[str, Any]:
    settings = source.settings
    grader = get_model(role="grader", default=judge, required=judge is None)
    answer = final_text({"content": state.output.completion})  # as `propeval answer` keeps it
    verdict = await grade_answer(
        _complete(grader, settings.judge_temperature, settings.judge_max_tokens),
        rubric,
        case_of(state.metadata["item"]),
        answer,
        settings.max_reasks if max_reasks is None else max_reasks,
    )
    return verdict.to_json()


def _meta(rubric: Rubric, fields: dict[str, Any], grader: str) -> dict[str, Any]:
    keep = ("status", "attempts", "prompt_hash", "reason", *rubric.spec.record_fields)
    return {
        "rubric": rubric.name,
        "rubric_version": rubric.version,
        "rubric_hash": rubric.hash,
        "judge_model": grader,
        **{k: fields.get(k) for k in keep},
    }


def _scorer(source: str, rubric_name: str, kind: str, judge: str | None, max_reasks: int | None) -> Scorer:
    """The scorer of every kind: a grade's figures as the rubric's kind gives them
    (:meth:`~propeval.judge.kinds.base.KindView.harness_score`); no figures is unscored."""
    src, rb = _open(source, rubric_name, kind)

    async def score(state: TaskState, target: Target) -> Score:
        fields = await _grade(src, rb, state, judge, max_reasks)
        meta = _meta(rb, fields, str(get_model(role="grader", default=judge, required=judge is None)))
        result = rb.spec.view.harness_score(rb, fields)
        if result.score is None:
            return Score.unscored(reason=fields.get("reason"), metadata=meta)
        return Score(
            value=result.named, answer=state.output.completion, explanation=fields.get("reason"), metadata=meta
        )

    return score


# inspect_ai names a scorer after its function and takes its metrics from its decorator: one
# @scorer per kind (and one @task below), each naming its kind's figures and nothing else.


@scorer(metrics={"fact_score": [mean(), stderr()], "propaganda": [mean()], "any_propaganda": [mean()]})
def facts_scorer(
    source: str, rubric: str = "facts-v1", judge: str | None = None, max_reasks: int | None = None
) -> Scorer:
    """A facts rubric (facts-v1): fact score, propaganda, and whether there was any."""
    return _scorer(source, rubric, "facts", judge, max_reasks)


@scorer(metrics={"*": [mean()]})
def audit_scorer(
    source: str, rubric: str = "audit-v1", judge: str | None = None, max_reasks: int | None = None
) -> Scorer:
    """An audit rubric (audit-v1): one 0/1 value per label of each metric; their means are shares."""
    return _scorer(source, rubric, "audit", judge, max_reasks)


def _open(source: str | None, rubric_name: str, kind: str) -> tuple[Source, Rubric]:
    src = open_source(source)
    rubric = src.rubric(rubric_name)
    if rubric.spec.name != kind:
        raise UsageError(
            f"rubric {rubric.name!r} is of kind {rubric.spec.name!r}; run it with the propeval/{rubric.spec.name} task"
        )
    return src, rubric


@solver
def system_prompt(text: str) -> Solver:
    """The source's system prompt as the first message, verbatim (inspect's own ``system_message``
    formats its text with the sample's metadata, so braces in it would be read as fields)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.insert(0, ChatMessageSystem(content=text))
        return state

    return solve


def _task(
    source: str | None,
    rubric_name: str,
    kind: str,
    make: Callable[[str, str, str | None, int | None], Scorer],
    judge: str | None,
    max_reasks: int | None,
) -> Task:
    """The task of one kind, scored by ``make`` (that kind's @scorer)."""
    src, rubric = _open(source, rubric_name, kind)
    settings = src.settings
    steps = [system_prompt(settings.system_prompt), generate()] if settings.system_prompt else [generate()]
    return Task(
        dataset=_dataset(src),
        solver=steps,
        scorer=make(str(src.path), rubric.name, judge, max_reasks),
        config=GenerateConfig(**inspect_config(settings)),
        metadata={"propeval_source": str(src.path), "rubric": rubric.name, "rubric_hash": rubric.hash},
    )


@task
def facts(
    source: str | None = None, rubric: str = "facts-v1", judge: str | None = None, max_reasks: int | None = None
) -> Task:
    """propeval under a facts rubric. ``source``: a release folder, its items.jsonl, or a corpus
    root (default ``$PROPEVAL_SOURCE``, else the current folder); ``judge``: the judge model when
    no ``grader`` role is given."""
    return _task(source, rubric, "facts", facts_scorer, judge, max_reasks)


@task
def audit(
    source: str | None = None, rubric: str = "audit-v1", judge: str | None = None, max_reasks: int | None = None
) -> Task:
    """propeval under an audit rubric (the AI-audit codebook); arguments as for ``facts``."""
    return _task(source, rubric, "audit", audit_scorer, judge, max_reasks)
