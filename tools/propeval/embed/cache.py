"""The one embedding cache, and :func:`embed`, the one way dedup and groups get vectors.

One ``.npz`` file per model and runtime (``<fingerprint>-<engine>.npz``); inside it, one entry per
sha256 of the text embedded (dedup embeds normalised text; the drift rule embeds prompts as
written). Each entry keeps the vector and the text's token count (for truncation warnings on warm
runs).

* Writes hold a :mod:`filelock` lock, re-read the file, merge, and replace it atomically, so two
  processes writing at once both keep their entries and a reader never sees half a file.
* A corrupt file, a file of another fingerprint or of the wrong dimension is set aside with a
  warning and rebuilt; it never crashes a run.
* A model change changes the fingerprint, so old entries are simply never read.
* Every file carries a MAC (HMAC-SHA256 under this user's cache key, :mod:`propeval.cachekey`)
  over all of it: the header (fingerprint, dimension), the texts' keys, the vectors and the token
  counts. A file whose MAC does not check out (a vector changed in it, or a file written by another
  user or machine) is set aside with a warning and its texts are embedded again: a cached vector
  never decides a result unless this user's propeval wrote it.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from propeval import cachekey
from propeval.embed.folders import default_cache_dir as default_cache_dir
from propeval.embed.protocol import Encoder

FORMAT = 2  # 2: the file carries a MAC


@dataclass
class EmbeddingCache:
    folder: Path
    fingerprint: str
    warnings: list[str] = field(default_factory=list)
    _index: dict[bytes, int] = field(default_factory=dict)
    _vecs: np.ndarray | None = None
    _ntok: np.ndarray | None = None

    @property
    def path(self) -> Path:
        return self.folder / f"{self.fingerprint}.npz"

    def load(self) -> None:
        """Read the cache file (missing is empty; broken is a warning and empty)."""
        keys, vecs, ntok = self._read()
        self._set(keys, vecs, ntok)

    def _set(self, keys: np.ndarray, vecs: np.ndarray | None, ntok: np.ndarray | None) -> None:
        self._index = {bytes(k): i for i, k in enumerate(keys)}
        self._vecs = vecs
        self._ntok = ntok

    def _read(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        empty = np.zeros((0,), dtype="S64")
        path = self.path
        if not path.is_file():
            return empty, None, None
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
            meta = json.loads(str(arrays["meta"]))
            keys, vecs, ntok, mac = arrays["keys"], arrays["vecs"], arrays["ntok"], str(arrays.pop("mac"))
            if meta.get("format") != FORMAT:
                raise ValueError(f"it is in cache format {meta.get('format')!r}, this propeval writes {FORMAT}")
            if meta.get("fingerprint") != self.fingerprint:
                raise ValueError("it belongs to another model fingerprint")
            if vecs.ndim != 2 or vecs.shape[0] != keys.shape[0] or ntok.shape[0] != keys.shape[0]:
                raise ValueError(f"its arrays disagree (keys {keys.shape}, vectors {vecs.shape})")
            if meta.get("dim") != vecs.shape[1]:
                raise ValueError(f"its vectors have dimension {vecs.shape[1]}, its header says {meta.get('dim')}")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as e:
            self.warnings.append(f"embedding cache {path} is unreadable ({e}); rebuilding it")
            return empty, None, None
        if not cachekey.same(self._mac(arrays), mac):
            self.warnings.append(
                f"embedding cache {path} failed authentication (its MAC does not match: it was changed after it was "
                f"written, or not written by this user's propeval); none of its {keys.shape[0]} entries is used, and "
                "their texts are embedded again"
            )
            return empty, None, None
        return keys, vecs.astype(np.float32, copy=False), ntok

    def _mac(self, arrays: dict[str, np.ndarray]) -> str:
        """The MAC of a cache file: every array in it (the header, the keys, the vectors, the token
        counts, and any array a later format adds), by name, dtype, shape and bytes. One MAC per
        file, not per entry: a file is written whole under its lock anyway, and one HMAC over its
        bytes costs a tenth of ten thousand small ones."""
        h = hmac.new(cachekey.cache_key(), b"propeval embedding cache v2\0", hashlib.sha256)
        for name in sorted(arrays):
            a = np.ascontiguousarray(arrays[name])
            head = f"{name}\0{a.dtype.str}\0{a.shape}\0{a.nbytes}\0".encode()
            h.update(len(head).to_bytes(8, "big") + head)
            h.update(a.tobytes())
        return h.hexdigest()

    def lookup(self, keys: Sequence[bytes]) -> tuple[dict[bytes, np.ndarray], dict[bytes, int]]:
        """Vectors and token counts for the keys present."""
        vecs: dict[bytes, np.ndarray] = {}
        ntok: dict[bytes, int] = {}
        if self._vecs is None or self._ntok is None:
            return vecs, ntok
        for k in keys:
            i = self._index.get(k)
            if i is not None:
                vecs[k] = self._vecs[i]
                ntok[k] = int(self._ntok[i])
        return vecs, ntok

    def rows(self, keys: Sequence[bytes]) -> list[int | None]:
        return [self._index.get(k) for k in keys]

    @property
    def vectors(self) -> np.ndarray | None:
        return self._vecs

    @property
    def ntok(self) -> np.ndarray | None:
        return self._ntok

    @property
    def dim(self) -> int | None:
        return None if self._vecs is None else int(self._vecs.shape[1])

    def add(self, keys: Sequence[bytes], vecs: np.ndarray, ntok: Sequence[int]) -> None:
        """Merge new entries into the file under a lock; the in-memory view is refreshed too."""
        from filelock import FileLock

        from propeval.fsutil import atomic_write

        if not keys:
            return
        vecs = np.asarray(vecs, dtype=np.float32)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.path) + ".lock", timeout=60)
            with lock:
                old_keys, old_vecs, old_ntok = self._read()
                if old_vecs is not None and old_vecs.shape[1] != vecs.shape[1]:
                    self.warnings.append(
                        f"embedding cache {self.path} has dimension {old_vecs.shape[1]}, the model gives "
                        f"{vecs.shape[1]}; rebuilding it"
                    )
                    old_keys, old_vecs, old_ntok = np.zeros((0,), dtype="S64"), None, None
                known = {bytes(k) for k in old_keys}
                fresh = [i for i, k in enumerate(keys) if k not in known]
                new_keys = np.concatenate([old_keys, np.array([keys[i] for i in fresh], dtype="S64")])
                parts = [vecs[fresh]] if old_vecs is None else [old_vecs, vecs[fresh]]
                all_vecs = np.concatenate(parts).astype(np.float32)
                tok = np.asarray([ntok[i] for i in fresh], dtype=np.int32)
                all_ntok = tok if old_ntok is None else np.concatenate([old_ntok.astype(np.int32), tok])
                meta = json.dumps({"format": FORMAT, "fingerprint": self.fingerprint, "dim": int(vecs.shape[1])})
                arrays = {"meta": np.array(meta), "keys": new_keys, "vecs": all_vecs, "ntok": all_ntok}
                buf = io.BytesIO()
                np.savez(buf, **{**arrays, "mac": np.array(self._mac(arrays))})  # type: ignore[arg-type]
                atomic_write(self.path, buf.getvalue())
            self._set(new_keys, all_vecs, all_ntok)
        except OSError as e:
            # A read-only or full cache folder costs speed next time, not this run's answer.
            self.warnings.append(f"cannot write the embedding cache {self.path}: {e}")


@dataclass
class Embedding:
    """What :func:`embed` returns: one row and one token count per text, in the order given."""

    vectors: np.ndarray
    token_counts: list[int]
    encoded: int  # texts the encoder was run on (the rest came from the cache)
    warnings: list[str]  # the cache's: unreadable, rebuilt, not writable
    path: Path  # the cache file


def text_key(text: str) -> bytes:
    """The cache key of a text: the sha256 hex of exactly the text embedded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest().encode("ascii")


def embed(
    encoder: Encoder,
    texts: Sequence[str],
    folder: Path,
    *,
    progress_factory: Callable[[int], Callable[[int], None] | None] | None = None,
) -> Embedding:
    """Vectors for ``texts``: from the cache in ``folder`` where present; the rest are encoded once
    each (the encoder batches them) and stored.

    ``progress_factory`` (default: the listener of :mod:`propeval.progress`) is told how many texts
    are to be encoded and returns a per-batch callback. The cache file is chosen by the encoder's
    fingerprint and engine; should the engine change
    while encoding (an ONNX export that fails falls back to torch), the new vectors are stored
    under the engine that made them. A cache that cannot be written costs only speed: this run's
    vectors are kept in memory.
    """
    cache = EmbeddingCache(folder, f"{encoder.fingerprint}-{encoder.engine}")
    cache.load()
    keys = [text_key(t) for t in texts]
    missing: dict[bytes, str] = {}
    for k, r, t in zip(keys, cache.rows(keys), texts, strict=True):
        if r is None:
            missing.setdefault(k, t)
    fresh: dict[bytes, tuple[np.ndarray, int]] = {}
    if missing:
        if progress_factory is None:
            from propeval.progress import current

            progress_factory = current()  # the command's bar, when it installed one
        if progress_factory is not None and hasattr(encoder, "progress"):
            encoder.progress = progress_factory(len(missing))
        vecs = np.asarray(encoder.encode(list(missing.values())), dtype=np.float32)
        ntok = encoder.token_counts(list(missing.values()))
        engine = f"{encoder.fingerprint}-{encoder.engine}"
        if engine != cache.fingerprint:
            warnings = cache.warnings
            cache = EmbeddingCache(folder, engine, warnings=warnings)
            cache.load()
        new_keys = list(missing)
        cache.add(new_keys, vecs, ntok)
        if cache.vectors is None or cache.rows(new_keys[:1])[0] is None:
            # The cache could not be written: keep this run's vectors in memory.
            fresh = {k: (v, int(n)) for k, v, n in zip(new_keys, vecs, ntok, strict=True)}
    rows = cache.rows(keys)
    dim = cache.dim or (next(iter(fresh.values()))[0].shape[0] if fresh else 0)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    counts: list[int] = []
    for n, (k, r) in enumerate(zip(keys, rows, strict=True)):
        if r is not None and cache.vectors is not None and cache.ntok is not None:
            out[n] = cache.vectors[r]
            counts.append(int(cache.ntok[r]))
        else:
            out[n], tok = fresh[k]
            counts.append(tok)
    return Embedding(out, counts, len(missing), cache.warnings, cache.path)
