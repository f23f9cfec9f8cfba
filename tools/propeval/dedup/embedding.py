"""Vectors for dedup's texts, through the one embedding cache, with dedup's warnings as problems."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from propeval.dedup.result import DedupResult
from propeval.dedup.units import Unit
from propeval.embed.protocol import Encoder
from propeval.embed.registry import configured_encoder
from propeval.result import Problem, Severity
from propeval.settings import DedupSettings

Progress = Callable[[int], None]
E = TypeVar("E")


def reporting_notes(announce: Callable[[str], None] | None, make: Callable[[Callable[[str], None]], E]) -> E:
    """The encoder ``make(say)`` builds, whose ``say`` passes on to ``announce`` everything but the
    encoder's own notes (a fallback to a slower engine): :func:`embed_units` reports those as
    ``dedup-encoder`` warnings, so a person reads each once. A conversion under way is announced."""
    made: list[E] = []

    def say(message: str) -> None:
        if announce is not None and not any(message in getattr(e, "notes", ()) for e in made):
            announce(message)

    made.append(make(say))
    return made[0]


def embed_units(
    units: Sequence[Unit],
    settings: DedupSettings,
    root: Path,
    result: DedupResult,
    *,
    encoder: Encoder | None = None,
    progress_factory: Callable[[int], Progress | None] | None = None,
    announce: Callable[[str], None] | None = None,
) -> np.ndarray:
    """One row per unit, of its normalised text: from the cache where present; the rest are
    encoded and stored. Adds the encoder's notes, the cache's warnings and truncation warnings to
    ``result``."""
    from propeval.embed.cache import embed

    if encoder is None:
        encoder = reporting_notes(announce, lambda say: configured_encoder(settings, root, announce=say))
    got = embed(
        encoder,
        [u.norm for u in units],
        settings.cache_folder(root),
        progress_factory=progress_factory,
        text_keys=[u.key for u in units],  # a unit's key is the sha256 hex of its normalised text
    )
    if got.encoded:
        for note in getattr(encoder, "notes", ()):
            result.problems.append(Problem("pyproject.toml", 0, 0, "dedup-encoder", note, severity=Severity.WARNING))
        result.encoded += got.encoded
    for w in got.warnings:
        result.problems.append(Problem(str(got.path), 0, 0, "dedup-cache", w, severity=Severity.WARNING))
    limit = encoder.max_seq_length
    for u, n in zip(units, got.token_counts, strict=True):
        if n > limit:
            result.problems.append(
                Problem(
                    u.path,
                    u.line,
                    u.col,
                    "dedup-truncated",
                    f"{u.id} is {n} tokens long, over the embedding model's max_seq_length {limit}: the model "
                    "reads only the start, so duplicates beyond it go unseen; shorten the text",
                    severity=Severity.WARNING,
                )
            )
    return got.vectors
