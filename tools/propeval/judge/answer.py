"""`propeval answer`: one answer per active item from a model, appended to ``answers.jsonl``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval import names
from propeval.corpus import Claim, Item
from propeval.errors import UsageError
from propeval.fsutil import atomic_write
from propeval.judge import runs
from propeval.judge._engine import Progress, make_client, run_all_closing
from propeval.judge.client import ChatClient, RequestError
from propeval.judge.records import AnswerRecord
from propeval.loader import LoadError
from propeval.result import Problem, Severity
from propeval.settings import Endpoint, JudgeSettings, optional_sampling

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class AnswerOptions:
    endpoint: Endpoint
    temperature: float
    max_tokens: int
    run_id: str | None = None
    items: tuple[str, ...] = ()
    limit: int | None = None
    top_p: float | None = None
    seed: int | None = None
    reasoning_effort: str = ""  # "": not sent
    thinking: str = ""  # "on" / "off": chat_template_kwargs.enable_thinking; "": not sent
    system_prompt: str = ""  # "": no system message

    def settings(self) -> dict[str, Any]:
        """Every sampling setting of the run, as recorded (None: not sent, the server's default)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "seed": self.seed,
            "reasoning_effort": self.reasoning_effort or None,
            "thinking": self.thinking or None,
            "system_prompt": self.system_prompt or None,
        }

    def request(self) -> dict[str, Any]:
        """The request parameters beyond temperature and max_tokens that the settings send."""
        out: dict[str, Any] = optional_sampling(self.top_p, self.seed, self.reasoning_effort)
        if self.thinking:
            out["extra_body"] = {"chat_template_kwargs": {"enable_thinking": self.thinking == "on"}}
        return out

    def messages(self, prompt: str) -> list[dict[str, str]]:
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*system, {"role": "user", "content": prompt}]


@dataclass
class RunResult:
    """What `answer` or `grade` did; counts by final status, and the items that failed."""

    run_id: str
    run_dir: Path
    out: Path
    total: int = 0
    skipped: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[tuple[str, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unfinished: int = 0  # items not finished when the run deadline passed
    deadline: float = 0.0
    cached: int = 0  # grade records whose every verdict came from the response cache
    partial: str | None = None  # grade --partial: why the run's answers were incomplete

    @property
    def exit_code(self) -> int:
        return 3 if self.errors or self.unfinished else 0

    def tally(self, records: list[dict[str, Any]], why: str) -> None:
        """Count ``records`` by status; an ``error`` record's ``why`` field says what failed."""
        for r in records:
            self.counts[r["status"]] = self.counts.get(r["status"], 0) + 1
            if r["status"] == "error":
                self.errors.append((r["item_id"], r[why]))


def item_meta(item: Item, categories: list[str], source_date: str | None = None) -> dict[str, Any]:
    return {
        "language": item.language,
        "framing": item.framing,
        "question_type": item.question_type,
        "categories": categories,
        "source_date": source_date,
    }


def _same_settings(old: Any, new: dict[str, Any]) -> bool:
    """A run's recorded settings equal ``new``; a key an older run did not record was not sent (None)."""
    if not isinstance(old, dict):
        return False
    return all(old.get(k) == v for k, v in new.items()) and set(old) <= set(new)


def _check_run(run_dir: Path, meta: dict[str, Any], root: Path) -> None:
    path = run_dir / runs.RUN_FILE
    if not path.is_file():
        atomic_write(path, runs.dump(meta) + "\n")
        return
    try:
        old = runs.run_meta(run_dir, root=root, strict=True)
    except LoadError as e:
        raise UsageError(f"{e}; remove {path} or pick a new --run-id") from None
    for key in ("model", "settings"):
        if (old.get(key) != meta[key]) if key == "model" else not _same_settings(old.get(key), meta[key]):
            raise UsageError(
                f"run {meta['run_id']!r} was answered with {key} {old.get(key)!r}, not {meta[key]!r}; "
                "resume it with the same settings or pick a new --run-id"
            )


async def _answer_one(
    client: ChatClient, item: Item, claim: Claim | None, options: AnswerOptions, run_settings: dict[str, Any]
) -> AnswerRecord:
    """One answer record: the model's reply, or the request's failure as an ``error`` record."""
    record = AnswerRecord(
        item_id=item.id,
        claim_id=item.claim_id,
        model=options.endpoint.model,
        item_hash=item.hash,
        claim_hash=claim.hash if claim else None,
        item=item_meta(
            item,
            list(claim.data.get("categories") or []) if claim else [],
            str(claim.data["source_date"]) if claim and claim.data.get("source_date") else None,
        ),
        settings=run_settings,
    )
    try:
        c = await client.complete(
            options.messages(item.prompt),
            temperature=options.temperature,
            max_tokens=options.max_tokens,
            sampling=options.request(),
        )
    except RequestError as e:
        record.status, record.error, record.attempts, record.raw = "error", str(e), e.attempts, e.raw
    else:
        record.status = "answered" if c.text else "unanswered"
        record.answer = c.text
        record.error = None if c.text else "the reply had no final text"
        record.finish_reason = c.finish_reason
        record.truncated = c.finish_reason == "length"
        record.usage = c.usage
        record.attempts = c.attempts
        record.anomalies = list(c.anomalies)
        record.served_model = c.served_model
        if c.cut:
            record.cut = f"the reply passed max_tokens; kept its first {len(c.text or '')} characters"
    record.created = runs.now()
    return record


def answer_run(
    ws: Workspace, settings: JudgeSettings, options: AnswerOptions, progress: Progress | None = None
) -> RunResult:
    """Ask ``options.endpoint`` every active item once; resume a run that was cut short."""
    config = ws.config
    corpus = ws.corpus
    items = sorted(corpus.active_items(), key=lambda i: i.id)
    if options.items:
        wanted = set(options.items)
        unknown = wanted - {i.id for i in items}
        if unknown:
            raise UsageError(f"no active item(s) {', '.join(sorted(unknown))} in the corpus")
        items = [i for i in items if i.id in wanted]
    if options.limit is not None:
        items = items[: options.limit]
    model = options.endpoint.model
    run_id = names.name(options.run_id, "--run-id") if options.run_id else runs.new_run_id(model)
    run_dir = config.root / settings.runs_dir / run_id
    out = run_dir / runs.ANSWERS
    run_settings = options.settings()
    result = RunResult(run_id, run_dir, out, deadline=settings.run_deadline)
    result.problems = [
        Problem(p.path, p.line, p.col, p.rule, f"{p.message} (file left out of the run)", severity=Severity.WARNING)
        for p in corpus.problems
    ]
    with runs.locked(run_dir, "answers"):
        _check_run(
            run_dir,
            {
                "run_id": run_id,
                "model": model,
                "base_url": options.endpoint.base_url,
                "settings": run_settings,
                "knowledge_cutoff": options.endpoint.knowledge_cutoff or None,
                "created": runs.now(),
                "corpus": {"items": len(items)},
            },
            config.root,
        )
        runs.repair_tail(out)
        oversized: list[int] = []
        done = runs.latest(out, config.root, oversized)
        result.problems += runs.oversized_warnings(out, oversized, config.root)
        finished = {k for k, r in done.items() if r.get("status") in runs.FINAL_ANSWER}
        todo = [i for i in items if i.id not in finished]
        result.total = len(items)
        result.skipped = len(items) - len(todo)
        # Incomplete until every item asked for has a final answer: `grade` refuses it till then.
        runs.mark_partial(run_dir, {"state": "answering", "items": len(items), "started": runs.now()})

        async def main() -> list[dict[str, Any]]:
            client = make_client(options.endpoint, settings)

            async def work(item: Item) -> dict[str, Any]:
                return (await _answer_one(client, item, corpus.claim_of(item), options, run_settings)).to_json()

            return await run_all_closing(client, todo, work, out, result, progress, settings)

        try:
            records = asyncio.run(main())
        except Exception as e:  # a fatal endpoint error, say: the records on disk stay, the run is partial
            _stopped(run_dir, out, items, config.root, failure=str(e))
            raise
        result.tally(records, "error")
        # Every item asked, some failed for good: complete (each failure is a record that grade,
        # score and report name). Items the run deadline left unasked: partial.
        if result.unfinished:
            _stopped(run_dir, out, items, config.root, errors=len(result.errors), unfinished=result.unfinished)
        else:
            runs.clear_partial(run_dir)
    return result


def _stopped(run_dir: Path, out: Path, items: list[Item], root: Path, **why: Any) -> None:
    """Rewrite the run's partial marker with what `answer` got done before it stopped."""
    final = runs.latest(out, root)
    answered = sum(1 for i in items if final.get(i.id, {}).get("status") in runs.FINAL_ANSWER)
    runs.mark_partial(run_dir, {"state": "stopped", "items": len(items), "answered": answered, **why})
