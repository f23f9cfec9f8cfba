"""`propeval grade`: a verdict per answer from a judge model, appended to ``grades-<rubric>.jsonl``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from propeval.config import Config
from propeval.corpus import Claim, Corpus, Item, load_corpus
from propeval.errors import UsageError
from propeval.judge import runs
from propeval.judge._engine import OnRecord, Progress, make_client, run_all_closing
from propeval.judge.answer import RunResult
from propeval.judge.client import ChatClient, RequestError
from propeval.judge.prompt import fill
from propeval.judge.rubric import Rubric, load_rubric
from propeval.judge.settings import Endpoint, JudgeSettings
from propeval.judge.verdict import VerdictError, item_schema, judge
from propeval.result import Problem, Severity

REASK = (
    "Your verdict could not be used: {reason}\n"
    "Reply again with only the corrected JSON verdict for the same answer, following the schema."
)


@dataclass
class GradeOptions:
    run: str
    rubric: str
    endpoint: Endpoint
    temperature: float
    max_tokens: int
    max_reasks: int
    retry_unscored: bool = False


@dataclass
class _Job:
    answer: dict[str, Any]
    item: Item
    claim: Claim


def _warn(path: str, rule: str, message: str) -> Problem:
    return Problem(path, 0, 0, rule, message, severity=Severity.WARNING)


def _plan(
    answers: dict[str, dict[str, Any]], graded: set[str], corpus: Corpus, answers_name: str, result: RunResult
) -> list[_Job]:
    """The answers still to grade; counts total and skipped, and warns of what cannot be graded."""
    todo: list[_Job] = []
    for item_id, ans in sorted(answers.items()):
        if ans.get("status") not in runs.FINAL_ANSWER:
            result.problems.append(
                _warn(
                    answers_name,
                    "no-answer",
                    f"{item_id} has no answer ({ans.get('error')}); rerun `propeval answer` to retry it",
                )
            )
            continue
        if item_id in graded:
            result.total += 1
            result.skipped += 1
            continue
        item = corpus.items.get(item_id)
        claim = corpus.claim_of(item) if item else None
        if item is None or claim is None:
            result.problems.append(
                _warn(
                    answers_name,
                    "no-item",
                    f"{item_id} (or its claim) is no longer in the corpus; it cannot be graded",
                )
            )
            continue
        result.total += 1
        if item.hash != ans.get("item_hash") or claim.hash != ans.get("claim_hash"):
            result.problems.append(
                _warn(
                    item.doc.relpath,
                    "stale-answer",
                    f"{item_id} or its claim changed since it was answered; grading against the current facts "
                    "(answer it again in a new run for a clean result)",
                )
            )
        todo.append(_Job(ans, item, claim))
    return todo


async def _ask(client: ChatClient, job: _Job, rubric: Rubric, options: GradeOptions, record: dict[str, Any]) -> None:
    """Ask the judge, re-asking with feedback up to ``max_reasks`` times; fill ``record``."""
    item, claim = job.item, job.claim
    answer = str(job.answer["answer"])
    facts = [(f.id, f.text) for f in claim.facts]
    filled = fill(
        rubric,
        question=item.prompt,
        answer=answer,
        facts=facts,
        markers=claim.markers,
        language=item.language,
        framing=item.framing,
        question_type=item.question_type,
    )
    record["prompt_hash"] = filled.hash
    fact_ids = [fid for fid, _ in facts]
    schema = item_schema(rubric, fact_ids)
    messages = [{"role": "user", "content": filled.text}]
    reason, raw = "", None
    try:
        for _ in range(options.max_reasks + 1):
            c = await client.complete(
                messages, temperature=options.temperature, max_tokens=options.max_tokens, schema=schema
            )
            record["attempts"] += 1
            record["usage"].append(c.usage)
            raw = c.text
            try:
                outcome = judge(raw, rubric, fact_ids=fact_ids, answer=answer, shown_answer=filled.shown_answer)
            except VerdictError as e:
                reason = str(e)
                if c.finish_reason == "length":
                    reason += " (the reply was cut at max_tokens; raise judge_max_tokens)"
                messages += [
                    {"role": "assistant", "content": raw or ""},
                    {"role": "user", "content": REASK.format(reason=reason)},
                ]
                continue
            record.update(outcome.fields)
            record.update(status="scored", verdict=outcome.verdict, reason="; ".join(outcome.notes) or None, raw=raw)
            return
        record.update(
            status="unscored",
            verdict=None,
            reason=f"no valid verdict after {record['attempts']} attempt(s): {reason}",
            raw=raw,
        )
    except RequestError as e:
        record.update(status="error", verdict=None, reason=str(e), raw=e.raw if e.raw is not None else raw)


async def _grade_one(client: ChatClient, job: _Job, rubric: Rubric, options: GradeOptions) -> dict[str, Any]:
    """One grade record: unanswered at once, else the judge's verdict, unscored or error."""
    record: dict[str, Any] = {
        "item_id": job.item.id,
        "model": job.answer.get("model"),
        "rubric": rubric.name,
        "rubric_version": rubric.version,
        "rubric_hash": rubric.hash,
        "judge_model": options.endpoint.model,
        "judge_settings": {"temperature": options.temperature, "max_tokens": options.max_tokens},
        "prompt_hash": None,
        "attempts": 0,
        "usage": [],  # the checked token usage of each judge call (None: the server sent none usable)
        **rubric.spec.empty_fields(),
    }
    if job.answer.get("status") == "unanswered" or not job.answer.get("answer"):
        record.update(status="unanswered", verdict=None, reason="the model gave no final text", raw=None)
        record.update(rubric.spec.unanswered_fields())
    else:
        await _ask(client, job, rubric, options, record)
    record["created"] = runs.now()
    return record


def grade_run(
    config: Config,
    settings: JudgeSettings,
    options: GradeOptions,
    progress: Progress | None = None,
    on_record: OnRecord | None = None,
) -> RunResult:
    """Grade every answer of a run that has no final grade yet under ``options.rubric``;
    ``on_record`` sees each grade record as soon as it is on disk."""
    run_dir = runs.resolve_run(config.root / settings.runs_dir, options.run)
    rubric = load_rubric(config.root / settings.rubrics_dir, options.rubric, root=config.root)
    answers_path = run_dir / runs.ANSWERS
    out = run_dir / runs.grades_file(rubric.name)
    result = RunResult(run_dir.name, run_dir, out, deadline=settings.run_deadline)
    corpus = load_corpus(config)

    with runs.locked(run_dir, f"grades-{rubric.name}"):
        oversized: list[int] = []
        answers = runs.latest(answers_path, config.root, oversized)
        result.problems += runs.oversized_warnings(answers_path, oversized, config.root)
        if not answers:
            raise UsageError(f"{answers_path} has no answers; run `propeval answer` first")
        runs.repair_tail(out)
        final = runs.FINAL_GRADE if not options.retry_unscored else ("scored", "unanswered")
        oversized = []
        prior = runs.latest(out, config.root, oversized)
        result.problems += runs.oversized_warnings(out, oversized, config.root)
        graded = {k for k, r in prior.items() if r.get("status") in final}
        todo = _plan(answers, graded, corpus, answers_path.name, result)

        async def main() -> list[dict[str, Any]]:
            client = make_client(options.endpoint, settings)

            async def work(job: _Job) -> dict[str, Any]:
                return await _grade_one(client, job, rubric, options)

            return await run_all_closing(client, todo, work, out, result, progress, settings, on_record)

        records = asyncio.run(main())
    result.tally(records, "reason")
    return result
