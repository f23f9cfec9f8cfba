"""The on-disk embedding cache: one ``.npz`` file per model fingerprint.

Key: the model fingerprint (file name and a field inside) plus the sha256 of the normalised text.
Each entry keeps the vector and the text's token count (for truncation warnings on warm runs).

* Writes hold a :mod:`filelock` lock, re-read the file, merge, and replace it atomically, so two
  processes writing at once both keep their entries and a reader never sees half a file.
* A corrupt file, a file of another fingerprint or of the wrong dimension is set aside with a
  warning and rebuilt; it never crashes a run.
* A model change changes the fingerprint, so old entries are simply never read.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FORMAT = 1


def default_cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "embeddings"


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
                meta = json.loads(str(npz["meta"]))
                keys = npz["keys"]
                vecs = npz["vecs"]
                ntok = npz["ntok"]
            if meta.get("fingerprint") != self.fingerprint or meta.get("format") != FORMAT:
                raise ValueError("it belongs to another model fingerprint")
            if vecs.ndim != 2 or vecs.shape[0] != keys.shape[0] or ntok.shape[0] != keys.shape[0]:
                raise ValueError(f"its arrays disagree (keys {keys.shape}, vectors {vecs.shape})")
            if meta.get("dim") != vecs.shape[1]:
                raise ValueError(f"its vectors have dimension {vecs.shape[1]}, its header says {meta.get('dim')}")
            return keys, vecs.astype(np.float32, copy=False), ntok
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as e:
            self.warnings.append(f"embedding cache {path} is unreadable ({e}); rebuilding it")
            return empty, None, None

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
                buf = io.BytesIO()
                np.savez(buf, meta=np.array(meta), keys=new_keys, vecs=all_vecs, ntok=all_ntok)
                atomic_write(self.path, buf.getvalue())
            self._set(new_keys, all_vecs, all_ntok)
        except OSError as e:
            # A read-only or full cache folder costs speed next time, not this run's answer.
            self.warnings.append(f"cannot write the embedding cache {self.path}: {e}")
