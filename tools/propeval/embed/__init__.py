"""Embeddings behind a small protocol, an on-disk cache, and a faiss index wrapper.

Nothing here imports torch, sentence-transformers or faiss at module level: they load inside the
functions that need them, so ``propeval --help`` and ``propeval check`` stay fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    """What dedup needs from a model (the shape of MinishLab/semhash's ``Encoder``).

    ``encode`` returns one L2-normalised float32 row per text. ``fingerprint`` names the model
    fully (name, weights hash, max_seq_length, pooling): the embedding cache is keyed by it.
    ``token_counts`` lets callers warn about texts the model will truncate.
    """

    fingerprint: str
    max_seq_length: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def token_counts(self, texts: Sequence[str]) -> list[int]: ...
