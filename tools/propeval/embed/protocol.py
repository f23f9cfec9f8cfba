"""The smallest encoder interface: texts in, one embedding row per text out.

``propeval groups`` measures translation drift against this protocol. The dedup branch's richer
``propeval.embed.Encoder`` (with ``fingerprint`` and ``token_counts``) satisfies it structurally.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Encoder(Protocol):
    """``encode`` returns a 2-D float array with one row per text (rows need not be normalised)."""

    def encode(self, texts: Sequence[str]) -> Any: ...
