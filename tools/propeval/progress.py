"""Progress of long work, for whoever listens: the core reports, the CLI draws.

Core functions never print. The one that does the long work (:func:`propeval.embed.cache.embed`)
asks :func:`current` for a listener and, when there is one, calls it with the number of texts it
is about to encode; the listener returns a per-batch callback (or None to stay quiet). A command
installs its listener around its core call with :func:`listening` (the CLI's bar is
:func:`propeval.cli._progress.embedding_progress`), so the cores between the command and the
encoder (dedup, overlap, import, calibrate, the groups-drift rule) need no parameter for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Progress = Callable[[int], None]  # called with the number of texts just done
Listener = Callable[[int], Progress | None]  # called with the number of texts to do

_listener: ContextVar[Listener | None] = ContextVar("propeval_progress", default=None)


def current() -> Listener | None:
    """The listener installed by the innermost :func:`listening`, or None."""
    return _listener.get()


@contextlib.contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Install ``listener`` for the work done inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
