"""sentence-transformers models of the plain shape ``Transformer -> Pooling(mean) [-> Normalize]``
(all-MiniLM-L6-v2 among them) run through onnxruntime.

Why: importing sentence-transformers (torch and transformers) costs 6-7 s on this machine, which a
pre-commit hook that embeds one new prompt cannot pay, and onnxruntime encodes on this CPU at least
as fast as torch. The model is exported once with ``torch.onnx.export`` (mean pooling and L2
normalisation inside the graph) into the model cache, keyed by the model fingerprint. Before an
export is used its embeddings are compared with sentence-transformers' own on :data:`PROBES`; it is
kept only at cosine >= :data:`MIN_COSINE`. Later runs import only onnxruntime and tokenizers.

Files in the export folder, all written atomically under one :mod:`filelock` lock per fingerprint::

    <fingerprint>.onnx   the graph and weights
    <fingerprint>.json   what made it (library versions), its size, and the verified cosine
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.folders import default_export_dir as default_export_dir

MIN_COSINE = 0.999
OPSET = 17
FORMAT = 1

PLAIN_MODULES = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
]
NORMALIZE = "sentence_transformers.models.Normalize"

# Texts the export is checked on: short and long, several scripts, and one longer than any
# max_seq_length, so truncation is compared too.
PROBES = [
    "What happened in Tiananmen Square on 4 June 1989?",
    "Who shot down flight MH17 over eastern Ukraine in July 2014?",
    "Что произошло в Буче в марте 2022 года?",
    "Що сталося в Бучі у березні 2022 року?",
    "1989年6月4日天安门广场发生了什么？",
    "Was beschloss die UN-Generalversammlung mit der Resolution 68/262?",
    "ok",
    "The Hong Kong national security law took effect on 30 June 2020. " * 40,
]


class ExportError(Exception):
    """The model could not be exported, or the export does not match sentence-transformers."""


def unsupported_reason(path: Path) -> str | None:
    """Why ``path`` cannot run through onnxruntime here, or None when it can."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        pooling_dir = next((m.get("path", "") for m in modules if m.get("type", "").endswith(".Pooling")), "1_Pooling")
        pooling = json.loads((path / pooling_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, AttributeError):
        return "it has no readable modules.json and pooling config"
    types = [m.get("type") for m in modules]
    if types not in (PLAIN_MODULES, [*PLAIN_MODULES, NORMALIZE]):
        return f"its modules are {types}, not Transformer -> Pooling [-> Normalize]"
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True)
    if modes != ["pooling_mode_mean_tokens"]:
        return f"its pooling is {modes}, not mean pooling"
    if not (path / "tokenizer.json").is_file():
        return "it has no tokenizer.json (a fast tokenizer)"
    return None


# --------------------------------------------------------------------------- running


class OrtModel:
    """An exported model and its tokenizer; ``encode`` returns L2-normalised float32 rows."""

    def __init__(self, onnx_file: Path, model_path: Path, max_seq_length: int, batch_size: int = 32) -> None:
        from tokenizers import Tokenizer

        stat = onnx_file.stat()
        self.session = _session(str(onnx_file), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        self.tokenizer.no_padding()
        self.pad_id = _pad_id(model_path, self.tokenizer)
        self.batch_size = max(1, batch_size)

    def encode(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(texts))
        # Batches of similar length waste little on padding: sort by token count, encode in that
        # order, put each row back in its place.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out: np.ndarray | None = None
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.full((len(idx), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                e = encodings[i]
                ids[row, : len(e.ids)] = e.ids
                mask[row, : len(e.ids)] = 1
                types[row, : len(e.ids)] = e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            (vecs,) = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})
            if out is None:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[idx] = vecs
            if progress is not None:
                progress(len(idx))
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)


@functools.lru_cache(maxsize=2)
def _session(onnx_file: str, inode: int, size: int, mtime_ns: int) -> Any:
    """The onnxruntime session of one export file, made once a process while the file is unchanged
    (its inode, size and mtime are in the key): optimising the graph costs 0.3 CPU-s each time,
    and a session is read-only and safe to share. Two at most are kept (90 MB each for MiniLM).
    A session that fails to load is not kept."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its warnings would land in our output
    return ort.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"])


def _pad_id(model_path: Path, tokenizer: Any) -> int:
    token = "[PAD]"
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            value = json.loads((model_path / name).read_text(encoding="utf-8")).get("pad_token")
            token = value.get("content", token) if isinstance(value, dict) else value or token
            break
    found = tokenizer.token_to_id(token)
    return int(found) if found is not None else 0


# --------------------------------------------------------------------------- exporting


def load_export(
    model_path: Path,
    fingerprint: str,
    folder: Path,
    max_seq_length: int,
    *,
    batch_size: int = 32,
    announce: Callable[[str], None] | None = None,
) -> OrtModel:
    """The verified export for ``fingerprint``, made first if missing.

    A damaged export (it fails to load) is made again once, with an ``announce``. A model whose
    export did not match is remembered as such, so later runs do not pay for the export again.

    Raises:
        ExportError: the export failed, or its embeddings differ from sentence-transformers'.
    """
    onnx_file = folder / f"{fingerprint}.onnx"
    meta = _read_meta(folder, fingerprint, onnx_file)
    if meta is not None and meta.get("status") == "mismatch":
        raise ExportError(
            f"its ONNX export differs from sentence-transformers (cosine {meta.get('min_cosine')} < {MIN_COSINE})"
        )
    if meta is not None:
        try:
            _verify_file(folder, fingerprint, onnx_file, meta)
            return OrtModel(onnx_file, model_path, max_seq_length, batch_size)
        except Exception as e:  # onnxruntime raises its own Fail/InvalidGraph kinds
            if announce:
                announce(f"the ONNX export {onnx_file} is damaged ({type(e).__name__}); exporting it again")
            with contextlib.suppress(OSError):
                (folder / f"{fingerprint}.json").unlink()
    _meta, verified = _export(model_path, fingerprint, folder, max_seq_length, announce=announce)
    if verified is None:  # another process made it while this one waited for the lock
        return OrtModel(onnx_file, model_path, max_seq_length, batch_size)
    verified.batch_size = max(1, batch_size)
    return verified


def export(
    model_path: Path,
    fingerprint: str,
    folder: Path,
    max_seq_length: int,
    *,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Export, verify and store the model; returns the metadata written. Two processes at once:
    the second waits for the first's lock and then finds its export."""
    return _export(model_path, fingerprint, folder, max_seq_length, announce=announce)[0]


def _export(
    model_path: Path,
    fingerprint: str,
    folder: Path,
    max_seq_length: int,
    *,
    announce: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], OrtModel | None]:
    """:func:`export`, and the model it verified (its session holds the graph in memory, so it
    outlives the file's move into place), or None when the export was found made already."""
    from filelock import FileLock

    from propeval.embed.conversion import sealed
    from propeval.fsutil import atomic_write

    folder.mkdir(parents=True, exist_ok=True)
    onnx_file = folder / f"{fingerprint}.onnx"
    with FileLock(str(folder / f"{fingerprint}.lock"), timeout=900):
        meta = _read_meta(folder, fingerprint, onnx_file)
        if meta is not None:
            return meta, None
        say = announce or (lambda _message: None)
        # No estimate: it took 10 s on one machine and 45 s on a new one (most of it importing
        # torch). Each step says what it does, and then how long it really took.
        started = time.monotonic()
        say(f"exporting the embedding model to ONNX once, into {folder}; step 1/2: torch export (a one-off)")
        tmp = folder / f".{fingerprint}.{os.getpid()}.onnx.tmp"
        try:
            versions = _torch_export(model_path, tmp)
            step = time.monotonic()
            say(f"step 1/2 done in {step - started:.1f} s; step 2/2: checking the export against sentence-transformers")
            min_cos, verified = _verify(model_path, tmp, max_seq_length)
            now = time.monotonic()
            say(f"step 2/2 done in {now - step:.1f} s; ONNX export ready in {now - started:.1f} s")
            meta = {
                "format": FORMAT,
                "fingerprint": fingerprint,
                "model_path": str(model_path),
                "bytes": tmp.stat().st_size,
                "sha256": _file_sha256(tmp),
                "opset": OPSET,
                "min_cosine": round(min_cos, 6),
                "probes": len(PROBES),
                "status": "ok" if min_cos >= MIN_COSINE else "mismatch",
                **versions,
            }
            if meta["status"] == "ok":
                os.replace(tmp, onnx_file)
        except ExportError:
            raise
        except Exception as e:  # torch's exporter raises many kinds
            raise ExportError(f"the ONNX export failed: {type(e).__name__}: {e}") from e
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        atomic_write(
            folder / f"{fingerprint}.json", json.dumps(sealed(meta), indent=2, sort_keys=True) + "\n", cache=True
        )
        if meta["status"] != "ok":
            raise ExportError(
                f"its ONNX export differs from sentence-transformers (cosine {meta['min_cosine']} < {MIN_COSINE})"
            )
        return meta, verified


def export_status(folder: Path, fingerprint: str) -> str:
    """``"mismatch"`` when the export of ``fingerprint`` was made and rejected, else ``""``."""
    meta = _read_meta(folder, fingerprint, folder / f"{fingerprint}.onnx")
    return "mismatch" if meta is not None and meta.get("status") == "mismatch" else ""


def _read_meta(folder: Path, fingerprint: str, onnx_file: Path) -> dict[str, Any] | None:
    """The export's metadata when it is complete: a matching fingerprint, this user's MAC
    (:mod:`propeval.embed.conversion`) and, for a kept export, a model file of the recorded size
    (its sha256 is checked on load: :func:`_verify_file`). Anything else counts as no export,
    which is made again."""
    from propeval.embed.conversion import MAX_RECORD_BYTES, authentic
    from propeval.fsutil import read_regular

    try:
        meta = json.loads(read_regular(folder / f"{fingerprint}.json", MAX_RECORD_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("fingerprint") != fingerprint:
        return None
    if not authentic(meta):
        return None
    if meta.get("status") == "mismatch":
        return meta
    try:
        if meta.get("status") != "ok" or onnx_file.stat().st_size != meta.get("bytes"):
            return None
    except OSError:
        return None
    return meta


def _verify_file(folder: Path, fingerprint: str, onnx_file: Path, meta: dict[str, Any]) -> None:
    """Check the export against its recorded sha256 (hashed once, then remembered).

    Raises:
        Mismatch: it does not match (or cannot be read, or has no recorded sha256).
    """
    from propeval.embed.verified import Mismatch, verify

    if not isinstance(meta.get("sha256"), str):
        raise Mismatch("its record holds no sha256")
    verify(folder, fingerprint, {"onnx": onnx_file}, {"onnx": meta["sha256"]}, label=b"propeval onnx export v1")


def _file_sha256(path: Path) -> str:
    import hashlib

    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _torch_export(model_path: Path, target: Path) -> dict[str, str]:
    import warnings

    import onnx  # noqa: F401  (torch's exporter needs it; fail here with a clear name)
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_path), attn_implementation="eager", local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
    sample = tokenizer(PROBES[:2], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class MeanPooled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            feed = dict(zip(names, args, strict=True))
            hidden = self.inner(**feed).last_hidden_state
            mask = feed["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    axes = {n: {0: "batch", 1: "sequence"} for n in names} | {"embedding": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            MeanPooled(model),
            tuple(sample[n] for n in names),
            str(target),
            input_names=names,
            output_names=["embedding"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    return {"torch": torch.__version__, "transformers": transformers.__version__}


def _verify(model_path: Path, onnx_file: Path, max_seq_length: int) -> tuple[float, OrtModel]:
    """The lowest cosine between the export's and sentence-transformers' embeddings of
    :data:`PROBES`, and the export loaded."""
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_path), device="cpu", local_files_only=True)
    st.max_seq_length = max_seq_length
    model = OrtModel(onnx_file, model_path, max_seq_length)
    # The long probe in a batch of its own: with the short ones it would pad all of them to
    # max_seq_length, eight times the work in each runtime (most of the check's cost). The short
    # ones still pad among themselves, so the attention mask is checked either way.
    min_cos = 1.0
    for group in (PROBES[:-1], PROBES[-1:]):
        theirs = np.asarray(st.encode(group, normalize_embeddings=True, show_progress_bar=False), dtype=np.float32)
        min_cos = min(min_cos, float(np.min(np.sum(model.encode(group) * theirs, axis=1))))
    return min_cos, model
