"""The shared loop of `answer` and `grade`: bounded concurrency, durable appends, a run deadline,
progress."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from propeval.judge.client import ITEM_STARTED, ChatClient
from propeval.judge.runs import append
from propeval.settings import Endpoint, JudgeSettings

T = TypeVar("T")
Progress = Callable[[int, int], None]  # (done, total)
OnRecord = Callable[[dict[str, Any]], None]


def make_client(endpoint: Endpoint, settings: JudgeSettings) -> ChatClient:
    """The chat client for one run, with every bound from ``[tool.propeval.judge]``."""
    return ChatClient(
        endpoint,
        retry=settings.retry,
        timeout=settings.timeout,
        connect_timeout=settings.connect_timeout,
        concurrency=settings.concurrency,
        request_deadline=settings.request_deadline,
        item_deadline=settings.item_deadline,
        max_reply_bytes=settings.max_reply_bytes,
    )


async def run_all(
    todo: Sequence[T],
    work: Callable[[T], Awaitable[dict[str, Any]]],
    out: Path | None,
    *,
    done_before: int,
    total: int,
    progress: Progress | None,
    concurrency: int,
    deadline: float = 0.0,
    on_record: OnRecord | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Run ``work`` on each of ``todo`` with at most ``concurrency`` running; append each record as
    it finishes (to ``out``; None: keep it in memory only), then hand it to ``on_record``. Returns
    the records and how many items were left unfinished because the run ``deadline`` (seconds, 0
    for none) passed.

    A failure (:class:`~propeval.judge.client.FatalEndpointError`) cancels what is left and is
    raised after the records already finished are on disk. The append is synchronous on purpose:
    a cancellation (deadline, fatal error) can then never fall between a record reaching the file
    and being counted.
    """
    records: list[dict[str, Any]] = []
    done = done_before
    if progress:
        progress(done, total)
    queue: asyncio.Queue[T] = asyncio.Queue()
    for t in todo:
        queue.put_nowait(t)

    async def worker() -> None:
        nonlocal done
        while True:
            try:
                t = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            token = ITEM_STARTED.set(time.monotonic())  # the item deadline counts from here
            try:
                record = await work(t)
            finally:
                ITEM_STARTED.reset(token)
            if out is not None:
                append(out, record)
            records.append(record)
            done += 1
            if on_record:
                on_record(record)
            if progress:
                progress(done, total)

    tasks = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo))))]
    finished, pending = await asyncio.wait(tasks, timeout=deadline or None, return_when=asyncio.FIRST_EXCEPTION)
    # Read every finished task's exception (not just the first), so none is logged as never retrieved.
    errors = [e for t in finished if not t.cancelled() and (e := t.exception()) is not None]
    failed = errors[0] if errors else None
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if failed is not None:
        raise failed
    return records, len(todo) - len(records)


async def run_all_closing(
    client: ChatClient,
    todo: Sequence[T],
    work: Callable[[T], Awaitable[dict[str, Any]]],
    out: Path,
    result: Any,
    progress: Progress | None,
    settings: JudgeSettings,
    on_record: OnRecord | None = None,
) -> list[dict[str, Any]]:
    """:func:`run_all` for a run whose ``result`` counts skipped, total and unfinished (under
    ``settings.run_deadline``), then close ``client``."""
    try:
        records, result.unfinished = await run_all(
            todo,
            work,
            out,
            done_before=result.skipped,
            total=result.total,
            progress=progress,
            concurrency=settings.concurrency,
            deadline=settings.run_deadline,
            on_record=on_record,
        )
        return records
    finally:
        await client.aclose()
