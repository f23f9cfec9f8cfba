"""Progress for long work: a rich bar on a terminal's stderr, nothing in CI, in pipes or with json.

One helper for every command. Core functions never print:

- a core whose loop it owns (``agree`` and ``difficulty`` bootstraps, ``answer`` and ``grade``) takes a
  ``(done, total)`` callback, and the command asks :func:`bar` for one;
- work in several steps (``import``, ``overlap``) takes a ``(what, done, total)`` callback from
  :func:`phases`, and :func:`counted` turns it into embedding's per-batch ``progress_factory``;
- the embedding of many texts (:func:`propeval.embed.cache.embed`, reached from dedup, overlap, import,
  calibrate and the groups-drift rule through cores that know nothing of it) asks :func:`current` for a
  listener and, when there is one, calls it with the number of texts it is about to encode; the listener
  returns a per-batch callback (or None to stay quiet). A command installs its listener around its core
  call with :func:`listening` (the CLI's is :func:`propeval.cli._progress.embedding_progress`).

A bar is shown only when stderr is a terminal, the ``CI`` environment variable is unset (or empty) and
the output format is not json, so logs and machine-read output stay clean. rich is imported only when a
bar is shown. Elsewhere (a pipe, a CI log) :func:`bar` and :func:`phases` write a plain line to stderr
every :data:`PLAIN_EVERY` seconds instead (how far, how long), so a long run is never silent for minutes;
a run shorter than that writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TextIO

Update = Callable[[int, int], None]  # (done, total)
Progress = Callable[[int], None]  # called with the number of texts just done
Listener = Callable[[int], Progress | None]  # called with the number of texts to do

_listener: ContextVar[Listener | None] = ContextVar("propeval_progress", default=None)


PLAIN_EVERY = 30.0  # seconds between plain progress lines off a terminal


def _plain(label: str) -> Callable[[str, int, int], None]:
    """``(what, done, total)`` that writes ``label: what done/total, N s`` to stderr at most every
    :data:`PLAIN_EVERY` seconds (the first after that long)."""
    import time

    start = last = time.monotonic()

    def update(what: str, done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < PLAIN_EVERY:
            return
        last = now
        step = f" {what}" if what else ""
        count = f" {done}/{total}" if total else (f" {done}" if done else "")
        print(f"{label}:{step}{count}, {now - start:.0f} s", file=sys.stderr, flush=True)

    return update


def shown(fmt: str = "text", stream: TextIO | None = None) -> bool:
    """Whether a progress bar belongs on ``stream`` (stderr by default) now (see the module docstring)."""
    if fmt == "json" or os.environ.get("CI", "").strip():
        return False
    try:
        return bool((stream or sys.stderr).isatty())
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


@contextlib.contextmanager
def bar(label: str, *, enabled: bool = True) -> Iterator[Update | None]:
    """A transient bar on stderr labelled ``label``; yields its ``(done, total)`` update, or None
    when ``enabled`` is false; where :func:`shown` says no bar belongs, plain lines (see above)."""
    if not enabled:
        yield None
        return
    if not shown():
        plain = _plain(label)
        yield lambda done, total: plain("", done, total)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


Phase = Callable[[str, int, int], None]  # (what is being done, done, total); total 0: not counted
Factory = Callable[[int], Callable[[int], None] | None]  # embedding's progress_factory: total -> per-batch step


@contextlib.contextmanager
def phases(label: str, *, enabled: bool = True) -> Iterator[Phase | None]:
    """One transient bar on stderr for work in several steps (``import``, ``overlap``): its text
    says which step runs (``import: dedup: embedding``), its bar counts the step's units when they
    are counted. Yields ``(what, done, total)``, or None when ``enabled`` is false; where
    :func:`shown` says no bar belongs, plain lines (see above)."""
    if not enabled:
        yield None
        return
    if not shown():
        yield _plain(label)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"{label}: {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        task = progress.add_task("starting", total=None)

        def update(what: str, done: int, total: int) -> None:
            progress.update(task, description=what, completed=done, total=total or None)

        yield update


def counted(phase: Phase | None, what: str) -> Factory | None:
    """An embedding ``progress_factory`` (called with the number of texts, it returns a per-batch
    step) that drives ``phase`` as ``what``; None without a phase."""
    if phase is None:
        return None

    def factory(total: int) -> Callable[[int], None] | None:
        done = 0
        phase(what, 0, total)

        def step(n: int) -> None:
            nonlocal done
            done += n
            phase(what, done, total)

        return step

    return factory


def current() -> Listener | None:
    """The embedding listener installed by the innermost :func:`listening`, or None."""
    return _listener.get()


@contextlib.contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Install ``listener`` for the embedding done inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
