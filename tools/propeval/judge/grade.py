"""`propeval grade`: a verdict per answer from a judge model, or from a panel of judges, appended to
``grades-<rubric>.jsonl``.

A panel is several judge endpoints asked the same prompt. Its record keeps every judge's own
record (``judges``: endpoint, model, status, parsed verdict, fields, reason, raw reply, cached)
and, at the top level, the combined verdict of the judges that scored (``Kind.combine``: a
majority per fact, a median per ordinal field), with its ties in ``panel.ties``. A judge whose
request failed makes the item an ``error`` (a rerun retries it, the other judges' replies coming
from the response cache); a judge that gave no valid verdict is left out of the combination, and
with no judge scoring the item is ``unscored``. A panel of one is the single-judge record.

Every judge, of a panel or alone, and every harness adapter (``propeval.harness``) grades through
one loop, :func:`grade_answer`: ``propeval grade`` gives it its chat client (which records each
call's token usage) and a :class:`CacheSlot` on the response cache; the adapters give their own
model and no cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propeval.corpus import Corpus
from propeval.errors import EndpointError, UsageError
from propeval.judge import runs
from propeval.judge._engine import OnRecord, Progress, make_client, run_all, run_all_closing
from propeval.judge.answer import RunResult
from propeval.judge.cache import ResponseCache, default_dir, request_key
from propeval.judge.client import ChatClient, Completion, RequestError, response_format
from propeval.judge.prompt import Case, fill_case
from propeval.judge.records import GradeRecord, JudgeRecord, Usage, Verdict
from propeval.judge.rubric import Rubric
from propeval.judge.verdict import Outcome, VerdictError, item_schema, judge
from propeval.loader import relative_path
from propeval.result import Problem, Severity
from propeval.settings import Endpoint, JudgeSettings

if TYPE_CHECKING:
    from propeval.workspace import Workspace

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
    # Several judges: the panel (``endpoint`` is then unused). Empty: ``endpoint`` judges alone.
    panel: tuple[Endpoint, ...] = ()
    use_cache: bool = True  # read and fill the response cache (``--no-cache``: neither)
    # A panel item scored by fewer than a majority of its judges is unscored, unless this is set
    # (``--allow-partial-panel``): then it is scored on the judges that gave a verdict, and says so.
    allow_partial_panel: bool = False
    partial: bool = False  # grade a run whose answers are incomplete (``--partial``); else refuse it

    @property
    def judges(self) -> tuple[Endpoint, ...]:
        return self.panel or (self.endpoint,)


def panel_label(endpoints: tuple[Endpoint, ...]) -> str:
    """The ``judge_model`` of a grade record: the model, or ``panel(m1, m2, ...)`` in panel order."""
    if len(endpoints) == 1:
        return endpoints[0].model
    return "panel(" + ", ".join(ep.model for ep in endpoints) + ")"


@dataclass
class _Job:
    """One answer to grade: its record, the item it answers, and what the judge is shown of that item."""

    answer: dict[str, Any]
    item_id: str
    case: Case


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
        todo.append(_Job(ans, item.id, Case.of(item, claim)))
    return todo


def _scored(v: Verdict, outcome: Outcome, raw: str | None) -> None:
    v.set_fields(outcome.fields)
    v.status, v.verdict, v.reason, v.raw = "scored", outcome.verdict, "; ".join(outcome.notes) or None, raw


def _unanswered(v: Verdict, rubric: Rubric) -> None:
    v.status, v.verdict, v.reason, v.raw = "unanswered", None, "the model gave no final text", None
    v.set_fields(rubric.spec.unanswered_fields())


# (messages, verdict schema) -> the reply: one request to the judge model. ``propeval grade`` passes
# its own client (:func:`client_completer`); the harness adapters pass their harness's model.
Complete = Callable[[list[dict[str, str]], dict[str, Any]], Awaitable[Completion]]


@dataclass(frozen=True)
class CacheSlot:
    """The response cache as one judge's grading loop uses it: the key of each request it sends
    (:func:`~propeval.judge.cache.request_key`), a lookup before the call, a store after a valid
    verdict."""

    cache: ResponseCache
    endpoint: Endpoint
    rubric: Rubric
    temperature: float
    max_tokens: int

    def key(self, messages: list[dict[str, str]], schema: dict[str, Any], token: str) -> str:
        ep, rubric = self.endpoint, self.rubric
        return request_key(
            endpoint=ep.name,  # two panel members on one model stay two judges
            base_url=ep.base_url,
            model=ep.model,
            messages=messages,
            params={
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "response_format": response_format(ep.response_format, schema),
            },
            rubric={"name": rubric.name, "version": rubric.version, "hash": rubric.hash},
            token=token,
        )

    def lookup(self, key: str, check: Callable[[str], Outcome]) -> tuple[Outcome, str] | None:
        """The verdict of the reply cached under ``key``, if there is one and it is still valid
        (the cache is untrusted: one that is not is a warning, and the judge is asked)."""
        hit = self.cache.get(key)
        if hit is None:
            return None
        try:
            return check(hit.text), hit.text
        except VerdictError as e:
            self.cache.reject(key, str(e))
            return None

    def store(self, key: str, reply: Completion) -> None:
        """Keep a reply that gave a valid verdict, unless it was cut (by the server or the client)."""
        if not reply.text or reply.cut or reply.finish_reason == "length":
            return
        ep, rb = self.endpoint, self.rubric
        about = {"model": ep.model, "base_url": ep.base_url, "rubric": rb.name, "rubric_version": rb.version}
        self.cache.put(key, reply.text, reply.finish_reason, {**about, "created": runs.now()})


def new_fields(rubric: Rubric) -> Verdict:
    """A grade's verdict fields before the judge is asked: no prompt, no attempt, no verdict."""
    return Verdict(rubric.spec.empty_fields())


async def grade_answer(
    complete: Complete,
    rubric: Rubric,
    case: Case,
    answer: str | None,
    max_reasks: int,
    *,
    record: Verdict | None = None,
    cache: CacheSlot | None = None,
    model: str | None = None,
) -> Verdict:
    """The one grading loop, of ``propeval grade`` and of the harness adapters (``propeval.harness``).

    Fills ``record`` (default :func:`new_fields`) with the verdict fields of one answer: status,
    the kind's fields, verdict, reason, raw, attempts, prompt_hash. ``unanswered`` at once for no
    text, else the judge's verdict, re-asked with feedback up to ``max_reasks`` times, then
    ``unscored``; a :class:`RequestError` from ``complete`` gives ``error``. With ``cache``, each
    request is looked up first (a hit sets ``cached``) and a reply that gave a valid verdict is
    stored; errors, cut and invalid replies never are. ``complete`` records its calls' token usage
    if its caller wants it (:func:`client_completer`). With ``model`` (the judge model asked), a
    reply whose server names another model records that name as ``served_model``: who judged."""
    record = new_fields(rubric) if record is None else record
    if not answer:
        _unanswered(record, rubric)
        return record
    filled = fill_case(rubric, case, answer)
    record.prompt_hash = filled.hash
    fact_ids = [fid for fid, _ in case.facts]
    schema = item_schema(rubric, fact_ids)
    messages = [{"role": "user", "content": filled.text}]

    def check(raw: str | None) -> Outcome:
        return judge(raw, rubric, fact_ids=fact_ids, answer=answer, shown_answer=filled.shown_answer)

    reason, raw = "", None
    try:
        for _ in range(max_reasks + 1):
            key = cache.key(messages, schema, filled.token) if cache else ""
            hit = cache.lookup(key, check) if cache else None
            if hit is not None:
                _scored(record, *hit)
                record.cached = True
                return record
            reply = await complete(messages, schema)
            record.attempts += 1
            if model is not None and reply.served_model not in (None, model):
                record.more["served_model"] = reply.served_model  # who judged, as the server says
            raw = reply.text
            try:
                outcome = check(raw)
            except VerdictError as e:
                reason = str(e)
                if reply.finish_reason == "length":
                    reason += " (the reply was cut at max_tokens; raise judge_max_tokens)"
                messages += [
                    {"role": "assistant", "content": raw or ""},
                    {"role": "user", "content": REASK.format(reason=reason)},
                ]
                continue
            if cache:
                cache.store(key, reply)
            _scored(record, outcome, raw)
            return record
        record.status, record.verdict, record.raw = "unscored", None, raw
        record.reason = f"no valid verdict after {record.attempts} attempt(s): {reason}"
    except RequestError as e:
        record.status, record.verdict, record.reason = "error", None, str(e)
        record.raw = e.raw if e.raw is not None else raw
    return record


def client_completer(
    client: ChatClient, temperature: float, max_tokens: int, usage: list[dict[str, int] | None] | None = None
) -> Complete:
    """:data:`Complete` over propeval's own chat client; each call's checked token usage is
    appended to ``usage`` when given (None: the server sent none usable)."""

    async def complete(messages: list[dict[str, str]], schema: dict[str, Any]) -> Completion:
        c = await client.complete(messages, temperature=temperature, max_tokens=max_tokens, schema=schema)
        if usage is not None:
            usage.append(c.usage)
        return c

    return complete


async def _ask(
    client: ChatClient,
    job: _Job,
    rubric: Rubric,
    options: GradeOptions,
    record: Verdict,
    usage: list[Usage],
    cache: ResponseCache | None,
) -> Verdict:
    """Grade ``job`` with one judge into ``record``: :func:`grade_answer` over ``client``, with the
    response cache under the judge's endpoint, and each call's usage in ``usage``."""
    temperature, max_tokens = options.temperature, options.max_tokens
    return await grade_answer(
        client_completer(client, temperature, max_tokens, usage=usage),
        rubric,
        job.case,
        str(job.answer["answer"]),
        options.max_reasks,
        record=record,
        cache=CacheSlot(cache, client.endpoint, rubric, temperature, max_tokens) if cache else None,
        model=client.endpoint.model,
    )


async def _ask_judge(
    client: ChatClient, job: _Job, rubric: Rubric, options: GradeOptions, cache: ResponseCache | None
) -> JudgeRecord:
    """One panel judge's own record (its usage is this judge's calls; the panel's list stays empty)."""
    ep = client.endpoint
    sub = JudgeRecord(ep.name, ep.model, ep.base_url, Verdict(rubric.spec.empty_fields(), cached=False))
    await _ask(client, job, rubric, options, sub.verdict, sub.usage, cache)
    return sub


def majority(size: int) -> int:
    """How many judges of a panel of ``size`` are a majority: more than half."""
    return size // 2 + 1


def _combine(record: GradeRecord, subs: list[JudgeRecord], rubric: Rubric, allow_partial: bool = False) -> None:
    """Fill a panel's grade record from its judges' own records (see the module docstring).

    A panel's verdict needs a majority of its judges: an item fewer of them scored is unscored,
    with each missing judge's reason, unless ``allow_partial`` (then it is scored on the judges
    that gave a verdict, and its reason names those left out)."""
    v = record.verdict
    record.judges = subs
    v.prompt_hash = next((s.verdict.prompt_hash for s in subs if s.verdict.prompt_hash), None)
    v.attempts = sum(s.verdict.attempts for s in subs)
    v.cached = all(s.verdict.cached for s in subs)
    failed = [s for s in subs if s.verdict.status == "error"]
    scored = [s for s in subs if s.verdict.status == "scored"]
    ties: dict[str, Any] = {}
    record.panel = {"size": len(subs), "scored": len(scored), "rule": rubric.spec.combine_rule, "ties": ties}

    def why(group: list[JudgeRecord]) -> str:
        return "; ".join(f"judge {s.endpoint} ({s.judge_model}): {s.verdict.reason}" for s in group)

    v.verdict, v.raw = None, None
    if failed:
        v.status, v.reason = "error", why(failed)
    elif not scored:
        v.status, v.reason = "unscored", why(subs)
    elif len(scored) < majority(len(subs)) and not allow_partial:
        left_out = [s for s in subs if s.verdict.status != "scored"]
        v.status = "unscored"
        v.reason = (
            f"only {len(scored)} of the panel's {len(subs)} judges gave a valid verdict, and a panel verdict "
            f"needs a majority ({majority(len(subs))}): {why(left_out)}; grade again with --retry-unscored, or "
            "score on the judges that answered with --allow-partial-panel"
        )
    else:
        fields, ties = rubric.spec.combine([s.to_json() for s in scored], rubric)
        v.set_fields(fields)
        record.panel["ties"] = ties
        left_out = [s for s in subs if s.verdict.status != "scored"]
        notes = [f"left out of the panel: {why(left_out)}"] if left_out else []
        if ties:
            notes.append(f"panel tie(s) on {', '.join(sorted(ties))}, scored by the stated rule")
        v.status, v.reason = "scored", "; ".join(notes) or None


async def _grade_one(
    clients: list[ChatClient], job: _Job, rubric: Rubric, options: GradeOptions, cache: ResponseCache | None
) -> GradeRecord:
    """One grade record: unanswered at once, else the judge's (or the panel's) verdict, unscored or error."""
    record = GradeRecord(
        item_id=job.item_id,
        model=job.answer.get("model"),
        rubric=rubric.name,
        rubric_version=rubric.version,
        rubric_hash=rubric.hash,
        judge_model=panel_label(options.judges),
        judge_settings={"temperature": options.temperature, "max_tokens": options.max_tokens},
        verdict=Verdict(rubric.spec.empty_fields()),
    )
    if job.answer.get("status") == "unanswered" or not job.answer.get("answer"):
        _unanswered(record.verdict, rubric)
    elif len(clients) == 1:
        record.verdict.cached = False
        await _ask(clients[0], job, rubric, options, record.verdict, record.usage, cache)
    else:
        subs = await asyncio.gather(*(_ask_judge(c, job, rubric, options, cache) for c in clients))
        _combine(record, list(subs), rubric, options.allow_partial_panel)
    record.created = runs.now()
    return record


def grade_run(
    ws: Workspace,
    settings: JudgeSettings,
    options: GradeOptions,
    progress: Progress | None = None,
    on_record: OnRecord | None = None,
) -> RunResult:
    """Grade every answer of a run that has no final grade yet under ``options.rubric``;
    ``on_record`` sees each grade record as soon as it is on disk."""
    config = ws.config
    run_dir = runs.resolve_run(config.root / settings.runs_dir, options.run)
    incomplete = runs.answers_incomplete(run_dir)
    if incomplete and not options.partial:
        raise UsageError(
            f"run {run_dir.name} is not complete: {incomplete}; grading it now would score a part of the run as "
            f"the whole. Wait for it, or finish it (propeval answer --run-id {run_dir.name}, with the same "
            "settings), or pass --partial to grade the answers there now (score and report then label the run "
            "partial)"
        )
    rubric = ws.rubrics.load(options.rubric)
    answers_path = run_dir / runs.ANSWERS
    out = run_dir / runs.grades_file(rubric.name)
    result = RunResult(run_dir.name, run_dir, out, deadline=settings.run_deadline, partial=incomplete)
    if incomplete:
        result.problems.append(
            _warn(
                relative_path(run_dir / runs.ANSWERS, config.root),
                "partial-run",
                f"graded with --partial: {incomplete}; score and report label the run partial until it is finished",
            )
        )
    corpus = ws.corpus

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

        cache = ResponseCache(default_dir()) if options.use_cache else None

        async def main() -> list[dict[str, Any]]:
            clients = [make_client(ep, settings) for ep in options.judges]

            async def work(job: _Job) -> dict[str, Any]:
                return (await _grade_one(clients, job, rubric, options, cache)).to_json()

            try:
                return await run_all_closing(clients[0], todo, work, out, result, progress, settings, on_record)
            finally:
                for c in clients[1:]:
                    await c.aclose()

        try:
            records = asyncio.run(main())
        finally:
            if cache is not None:
                result.problems += [_warn(path, "response-cache", msg) for path, msg in cache.warnings]
    result.cached = sum(bool(r.get("cached")) for r in records)
    result.tally(records, "reason")
    from propeval.judge import selfjudge

    answer_models = {str(a["model"]) for a in answers.values() if isinstance(a.get("model"), str)}
    rel = relative_path(out, config.root)
    found = selfjudge.warnings(answer_models, [ep.model for ep in options.judges], selfjudge.ledger_for(ws))
    result.problems += [_warn(rel, rule, msg) for rule, msg in found]
    return result


def grade_cases(
    settings: JudgeSettings,
    options: GradeOptions,
    rubric: Rubric,
    cases: Sequence[tuple[str, Case, str | None]],
) -> list[dict[str, Any]]:
    """Grade answers held in memory, one ``(id, case, answer)`` each, through the grading loop of
    :func:`grade_run` (the same judges, panel, re-asks and record fields), without a run folder:
    the judge gate's gold set. One record per case, in the order given; an answer the run
    deadline left unasked is an EndpointError (a judge failure is never a verdict)."""
    jobs = [
        _Job(
            {"item_id": cid, "model": "gold", "status": "answered" if answer else "unanswered", "answer": answer},
            cid,
            case,
        )
        for cid, case, answer in cases
    ]
    cache = ResponseCache(default_dir()) if options.use_cache else None

    async def main() -> tuple[list[dict[str, Any]], int]:
        clients = [make_client(ep, settings) for ep in options.judges]

        async def work(job: _Job) -> dict[str, Any]:
            return (await _grade_one(clients, job, rubric, options, cache)).to_json()

        try:
            return await run_all(
                jobs,
                work,
                None,
                done_before=0,
                total=len(jobs),
                progress=None,
                concurrency=settings.concurrency,
                deadline=settings.run_deadline,
            )
        finally:
            for c in clients:
                await c.aclose()

    records, unfinished = asyncio.run(main())
    if unfinished:
        raise EndpointError(
            f"{unfinished} of {len(jobs)} answer(s) were not graded within the {settings.run_deadline:g}s run "
            "deadline; nothing was recorded"
        )
    by_id = {r["item_id"]: r for r in records}
    return [by_id[cid] for cid, _, _ in cases]
