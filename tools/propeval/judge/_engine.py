"""The shared loop of `answer` and `grade`: bounded concurrency, durable appends, progress."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from propeval.judge.client import FatalEndpointError
from propeval.judge.runs import append

T = TypeVar("T")
Progress = Callable[[int, int], None]  # (done, total)


async def run_all(
    todo: Sequence[T],
    work: Callable[[T], Awaitable[dict[str, Any]]],
    out: Path,
    *,
    done_before: int,
    total: int,
    progress: Progress | None,
    concurrency: int,
) -> list[dict[str, Any]]:
    """Run ``work`` on each of ``todo`` with at most ``concurrency`` running; append each record as
    it finishes. A :class:`FatalEndpointError` cancels what is left and is raised after the records
    already finished are on disk."""
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
            record = await work(t)
            await asyncio.to_thread(append, out, record)
            records.append(record)
            done += 1
            if progress:
                progress(done, total)

    tasks = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo))))]
    try:
        await asyncio.gather(*tasks)
    except FatalEndpointError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return records


async def run_all_closing(
    client: Any,
    todo: Sequence[T],
    work: Callable[[T], Awaitable[dict[str, Any]]],
    out: Path,
    result: Any,
    progress: Progress | None,
    concurrency: int,
) -> list[dict[str, Any]]:
    """:func:`run_all` for a run whose ``result`` counts skipped and total, then close ``client``."""
    try:
        return await run_all(
            todo,
            work,
            out,
            done_before=result.skipped,
            total=result.total,
            progress=progress,
            concurrency=concurrency,
        )
    finally:
        await client.aclose()
