"""Where the embedding backends keep their files by default: the user cache, never the repository.

Light to import (platformdirs only, when called): the settings (``[tool.propeval.dedup]``
``cache_dir`` and ``onnx_dir``, empty by default) resolve their defaults here without importing a
backend module, which would load numpy.
"""

from __future__ import annotations

from pathlib import Path


def default_cache_dir() -> Path:
    """The embedding cache (:mod:`propeval.embed.cache`): ``<user cache>/propeval/embeddings``."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "embeddings"


def default_export_dir() -> Path:
    """Models converted for onnxruntime (:mod:`propeval.embed.ort`): ``<user cache>/propeval/onnx``."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "onnx"
