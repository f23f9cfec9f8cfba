"""The one progress bar for long embedding work (dedup, dedup calibrate, overlap, import, groups).

A bar (rich) on stderr when more than :data:`MIN_TEXTS` texts are to be encoded, stderr is a
terminal, the environment is not CI (``CI`` set and not empty) and the output format is ``text``;
nothing otherwise, so CI logs, pipes and ``--format json`` stay clean. The bar is transient: it is
erased when the work ends, also when it ends in an error.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from propeval import progress
from propeval.progress import Listener, Progress, listening

MIN_TEXTS = 200  # a few hundred texts: about 2 s on the default model, where a bar starts to help


def shown(fmt: str, stream: TextIO | None = None) -> bool:
    """Whether a bar may be drawn: text output, a terminal, not CI (:func:`propeval.progress.shown`)."""
    return fmt == "text" and progress.shown(fmt, stream)


@contextlib.contextmanager
def embedding_progress(fmt: str, label: str = "embedding", stream: TextIO | None = None) -> Iterator[None]:
    """Install the bar (when :func:`shown`) for the embedding done inside the block."""
    if not shown(fmt, stream):
        with listening(None):
            yield
        return
    bars: list[Any] = []

    def listener(total: int) -> Progress | None:
        if total <= MIN_TEXTS:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("texts"),
            TimeRemainingColumn(),
            console=Console(file=stream or sys.stderr),
            transient=True,
        )
        task = bar.add_task(label, total=total)

        def step(done: int) -> None:
            # Started on the first batch done, not before: a one-off model conversion announces
            # its steps on stderr first, and a live bar would garble them.
            if not bars or bars[-1] is not bar:
                bar.start()
                bars.append(bar)
            bar.advance(task, done)
            if bar.tasks[0].completed >= total:
                bar.stop()

        return step

    run: Listener = listener
    try:
        with listening(run):
            yield
    finally:
        for bar in bars:
            bar.stop()
