"""Dedup in the background for the review app: one run at a time, its progress, its queue.

A dedup run embeds every text (from the cache when unchanged) and can take seconds to minutes, so
the page shows its progress instead of waiting. After an action the run is made again, and until it
ends the pairs of the items the action touched are set aside, marked with what was done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.review.dedup_view import Queue, load_queue

if TYPE_CHECKING:
    from propeval.config import Config


@dataclass
class RunState:
    state: str = "idle"  # idle | running | done | failed
    done: int = 0
    total: int = 0
    error: str = ""
    queue: Queue | None = None
    settled: dict[str, str] = field(default_factory=dict)  # item/fact id -> what an action did, until the next run


class DedupRunner:
    """Runs :func:`propeval.review.dedup_view.load_queue` on a thread; ``loader`` may replace it (tests
    give it an encoder through ``encoder``)."""

    def __init__(self, config: Config, *, encoder: Any = None, loader: Callable[..., Queue] = load_queue) -> None:
        self.config = config
        self.encoder = encoder
        self.loader = loader
        self.status = RunState()
        self._lock = threading.Lock()
        self._again = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start a run; while one runs, ask for one more after it (the corpus changed meanwhile)."""
        with self._lock:
            if self.status.state == "running":
                self._again = True
                return
            self.status.state, self.status.done, self.status.total, self.status.error = "running", 0, 0, ""
            self._thread = threading.Thread(target=self._run, name="propeval-review-dedup", daemon=True)
            self._thread.start()

    def ensure(self) -> None:
        if self.status.state == "idle":
            self.start()

    def settle(self, ids: tuple[str, ...], what: str) -> None:
        with self._lock:
            for i in ids:
                self.status.settled[i] = what
        self.start()

    def wait(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _progress(self, done: int, total: int) -> None:
        self.status.done, self.status.total = done, total

    def _run(self) -> None:
        while True:
            try:
                queue = self.loader(self.config, encoder=self.encoder, progress=self._progress)
            except Exception as e:  # shown on the page; the server goes on
                with self._lock:
                    self.status.state, self.status.error = "failed", f"{type(e).__name__}: {e}"
                    again, self._again = self._again, False
            else:
                with self._lock:
                    again, self._again = self._again, False
                    self.status.queue = queue
                    if not again:
                        self.status.state = "done"
                        self.status.settled = {}
            if not again:
                return
            with self._lock:
                self.status.state = "running"
