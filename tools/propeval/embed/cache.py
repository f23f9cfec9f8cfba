"""The one embedding cache, and :func:`embed`, the one way dedup and groups get vectors.

Per model and runtime (``<fingerprint>-<engine>``), a base file ``<name>.npz`` and an append-only
log ``<name>.log``; together they hold one entry per sha256 of the text embedded (dedup embeds
normalised text; the drift rule embeds prompts as written). Each entry keeps the vector and the
text's token count (for truncation warnings on warm runs).

* A commit adds a vector or two: they are appended to the log as one record, so the base (22 MB
  at 10,000 items) is not rewritten for one vector. When the log grows past a quarter of the
  base (at least :data:`COMPACT_BYTES`) or :data:`COMPACT_RECORDS` records, the next write compacts
  both into a new base and starts an empty log: each entry is rewritten a bounded number of times,
  so writing stays linear, and a run reads at most that many records.
* Writes hold an exclusive lock (:func:`propeval.fsutil.locked`, filelock's own ``flock``); an
  append re-reads the log under it, so two processes writing at once both keep their entries. The
  base is replaced atomically; a record is appended with one write and read only when whole, so a
  reader never sees half a write (a record cut short is one being written, or one a crashed writer
  left: the next writer cuts it off).
* A corrupt base, a base of another fingerprint or of the wrong dimension, or a damaged log is set
  aside with a warning (the damaged log is kept beside it as ``<name>.log.damaged``) and rebuilt by
  the next write; it never crashes a run.
* A model change changes the fingerprint, so old entries are simply never read.
* The base carries a MAC (HMAC-SHA256 under this user's cache key, :mod:`propeval.cachekey`) over
  all of it: the header (fingerprint, dimension), the texts' keys, the vectors and the token
  counts; each log record carries its own over the fingerprint and every byte of the record. A
  file or record whose MAC does not check out (a vector changed in it, or one written by another
  user or machine) is set aside with a warning and its texts are embedded again: a cached vector
  never decides a result unless this user's propeval wrote it.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import struct
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from propeval import cachekey
from propeval.embed.folders import default_cache_dir as default_cache_dir
from propeval.embed.protocol import Encoder

FORMAT = 2  # 2: the file carries a MAC
RECORD = b"PEL1"  # a log record: RECORD, entries (u32), dimension (u32), keys, vectors, token counts, MAC
_HEAD = struct.Struct(">4sII")
_KEY = 64  # a key is the sha256 hex of the text
MAX_BYTES = 1 << 32  # a base or log file past this (2.6 million vectors of 384) is not read: a miss
COMPACT_BYTES = 4 << 20  # the log is compacted into the base past max(this, a quarter of the base)
# ... or past this many records: every run reads and authenticates each record, and a commit appends
# one (at 10k items a quarter of the base was ~2,500 commits' records, 0.15 CPU-s of every hook)
COMPACT_RECORDS = 128

Arrays = tuple[np.ndarray, np.ndarray | None, np.ndarray | None]  # keys, vectors, token counts


@dataclass
class _Log:
    """What a read of the log found: its good records' entries, where they end, and what is wrong."""

    keys: list[np.ndarray] = field(default_factory=list)
    vecs: list[np.ndarray] = field(default_factory=list)
    ntok: list[np.ndarray] = field(default_factory=list)
    end: int = 0  # the byte where the last whole, authentic record ends
    size: int = 0  # the file's size (more than ``end``: a record cut short, or damage)
    damage: str = ""  # why a record was refused (not for a record merely cut short)

    @property
    def entries(self) -> int:
        return sum(k.shape[0] for k in self.keys)


@dataclass
class EmbeddingCache:
    folder: Path
    fingerprint: str
    warnings: list[str] = field(default_factory=list)
    _index: dict[bytes, int] = field(default_factory=dict)
    _vecs: np.ndarray | None = None
    _ntok: np.ndarray | None = None
    _base: tuple[tuple[int, int, int], Arrays] | None = None  # the base as read, by its stat
    # The base and the log as read, joined into one matrix on first use of the vectors: a commit's
    # run looks its texts up, appends a few, and joins (copies) the 10k-row matrix once, not three times
    _parts: tuple[Arrays, _Log] | None = None

    @property
    def path(self) -> Path:
        """The base file."""
        return self.folder / f"{self.fingerprint}.npz"

    @property
    def log_path(self) -> Path:
        return self.folder / f"{self.fingerprint}.log"

    def load(self) -> None:
        """Read the base and the log (missing is empty; broken is a warning and empty)."""
        keys, vecs, ntok = self._read()
        log = self._read_log(vecs.shape[1] if vecs is not None else None)
        self._warn_log(log)
        self._set_parts((keys, vecs, ntok), log)

    def _set(self, keys: np.ndarray, vecs: np.ndarray | None, ntok: np.ndarray | None) -> None:
        self._index = {bytes(k): i for i, k in enumerate(keys)}
        self._vecs = vecs
        self._ntok = ntok
        self._parts = None

    def _set_parts(self, base: Arrays, log: _Log) -> None:
        """The base's entries, then the log's, as :meth:`_set` would have them, joined when first used.

        When ``base`` is the base indexed now and ``log`` holds the log indexed now, then more (a
        write appended to it), only the new entries are indexed: a commit's run adds a few texts to
        a 30k-entry index, not 30k again."""
        start = self._indexed_part(base, log)
        if start is None:
            keys = np.concatenate([base[0], *log.keys]) if log.keys else base[0]
            self._index = {bytes(k): i for i, k in enumerate(keys)}
        else:
            at = base[0].shape[0] + sum(k.shape[0] for k in log.keys[:start])
            for part in log.keys[start:]:
                for k in part:
                    self._index[bytes(k)] = at
                    at += 1
        self._vecs = self._ntok = None
        self._parts = (base, log)

    def _indexed_part(self, base: Arrays, log: _Log) -> int | None:
        """How many of ``log``'s records the index holds already, when it indexes ``base`` and the
        start of ``log`` (None: index everything)."""
        if self._parts is None:
            return None
        (old_keys, _, _), old_log = self._parts
        if old_keys is not base[0] or len(old_log.keys) > len(log.keys):
            return None
        for mine, theirs in zip(old_log.keys, log.keys, strict=False):
            if mine is not theirs and not np.array_equal(mine, theirs):
                return None
        return len(old_log.keys)

    def _known(self, base: Arrays, log: _Log) -> Callable[[bytes], bool]:
        """Whether a key is in ``base`` or ``log`` (as :meth:`_add_locked` read them under the lock):
        from the index when it holds them, else from a set of every key."""
        start = self._indexed_part(base, log)
        if start is not None:
            newer = {bytes(k) for part in log.keys[start:] for k in part}
            return lambda k: k in self._index or k in newer
        every = {bytes(k) for part in (base[0], *log.keys) for k in part}
        return every.__contains__

    def _joined_now(self) -> None:
        if self._parts is not None:
            _, self._vecs, self._ntok = _joined(*self._parts)
            self._parts = None

    def _read(self) -> Arrays:
        empty = np.zeros((0,), dtype="S64")
        path = self.path
        try:
            st = path.stat()
        except OSError:
            return empty, None, None
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        if self._base is not None and self._base[0] == stamp:
            return self._base[1]  # read and authenticated already, and replaced by nobody since
        from propeval.fsutil import open_regular

        try:
            with open_regular(path, MAX_BYTES) as fh, np.load(fh, allow_pickle=False) as npz:
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
        from propeval import memo

        # The MAC over every vector is the cost of a warm read: once it checked out for this file as
        # it is (its stat stamp, taken before the read), it is not computed again
        fact = memo.file_fact(path, self.fingerprint, mac, st=st)
        slot = f"embedding cache {self.fingerprint}"
        if fact is None or not memo.remembered(slot, fact, self.folder):
            if not cachekey.same(self._mac(arrays), mac):
                self.warnings.append(
                    f"embedding cache {path} failed authentication (its MAC does not match this user's cache key: it "
                    "was written by another user, machine or CI runner, which is the usual reason, or changed since); "
                    f"none of its {keys.shape[0]} entries is used, and their texts are embedded again"
                )
                return empty, None, None
            if fact is not None:
                memo.remember(slot, fact, self.folder)
        out = keys, vecs.astype(np.float32, copy=False), ntok
        self._base = stamp, out
        return out

    def _mac(self, arrays: dict[str, np.ndarray]) -> str:
        """The MAC of a base file: every array in it (the header, the keys, the vectors, the token
        counts, and any array a later format adds), by name, dtype, shape and bytes. One MAC per
        file, not per entry: one HMAC over its bytes costs a tenth of ten thousand small ones."""
        h = hmac.new(cachekey.cache_key(), b"propeval embedding cache v2\0", hashlib.sha256)
        for name in sorted(arrays):
            a = np.ascontiguousarray(arrays[name])
            head = f"{name}\0{a.dtype.str}\0{a.shape}\0{a.nbytes}\0".encode()
            h.update(len(head).to_bytes(8, "big") + head)
            h.update(a.tobytes())
        return h.hexdigest()

    def _record_mac(self, record: bytes) -> bytes:
        """The MAC of one log record: its bytes, under this cache's fingerprint (a record copied from
        another model's log does not check out)."""
        h = hmac.new(cachekey.cache_key(), b"propeval embedding cache log v1\0", hashlib.sha256)
        h.update(self.fingerprint.encode("utf-8") + b"\0")
        h.update(record)
        return h.digest()

    def _read_log(self, dim: int | None) -> _Log:
        """The log's whole, authentic records, in order; reading stops at the first record that is
        cut short (being written, or left by a crash) or refused (damaged, forged, another dimension)."""
        from propeval.fsutil import read_regular

        out = _Log()
        try:
            data = read_regular(self.log_path, MAX_BYTES)
        except FileNotFoundError:
            return out
        except OSError as e:
            out.damage = f"cannot be read ({e})"
            return out
        out.size = len(data)
        pos = 0
        while pos < len(data):
            if len(data) - pos < _HEAD.size:
                break  # cut short
            magic, n, d = _HEAD.unpack_from(data, pos)
            if magic != RECORD or n == 0 or d == 0 or d > 65536:
                out.damage = f"holds no valid record at byte {pos}"
                break
            size = _HEAD.size + n * (_KEY + 4 * d + 4)
            if len(data) - pos < size + 32:
                break  # cut short
            record = data[pos : pos + size]
            if not hmac.compare_digest(self._record_mac(record), data[pos + size : pos + size + 32]):
                out.damage = (
                    f"failed authentication at byte {pos} (a record's MAC does not match this user's cache key: it "
                    "was written by another user, machine or CI runner, which is the usual reason, or changed since)"
                )
                break
            if dim is not None and d != dim:
                out.damage = f"holds vectors of dimension {d} at byte {pos}, the base {dim}"
                break
            dim = d
            at = pos + _HEAD.size
            out.keys.append(np.frombuffer(data, dtype="S64", count=n, offset=at))
            at += n * _KEY
            out.vecs.append(np.frombuffer(data, dtype="<f4", count=n * d, offset=at).reshape(n, d))
            at += 4 * n * d
            out.ntok.append(np.frombuffer(data, dtype="<i4", count=n, offset=at))
            pos += size + 32
            out.end = pos
        return out

    def _warn_log(self, log: _Log) -> None:
        if log.damage:
            self.warnings.append(
                f"embedding cache log {self.log_path} {log.damage}; none of its entries from there is used, and "
                "their texts are embedded again (the log is set aside and rebuilt on the next write)"
            )

    def lookup(self, keys: Sequence[bytes]) -> tuple[dict[bytes, np.ndarray], dict[bytes, int]]:
        """Vectors and token counts for the keys present."""
        vecs: dict[bytes, np.ndarray] = {}
        ntok: dict[bytes, int] = {}
        self._joined_now()
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

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The vectors and token counts of ``rows`` (positions in the base, then the log), or None
        when the cache holds no vectors. Taken from the base and the log as they were read, without
        joining them first: a commit's run gathers its 30k rows, and the join was a second copy of
        every vector."""
        if self._parts is None:
            if self._vecs is None or self._ntok is None:
                return None
            return self._vecs[rows], self._ntok[rows]
        (_, base_vecs, base_ntok), log = self._parts
        if base_vecs is None or base_ntok is None or not log.vecs:
            self._joined_now()
            return self.gather(rows)
        n = base_vecs.shape[0]
        in_log = np.flatnonzero(rows >= n)
        # One gather from the base (a log row reads the base's last row for now), then the few log rows
        vecs = base_vecs.take(np.minimum(rows, n - 1), axis=0)
        ntok = base_ntok.take(np.minimum(rows, n - 1)).astype(np.int32)
        if in_log.size:
            log_vecs, log_ntok = np.concatenate(log.vecs), np.concatenate(log.ntok)
            vecs[in_log], ntok[in_log] = log_vecs[rows[in_log] - n], log_ntok[rows[in_log] - n]
        return vecs, ntok

    @property
    def has_vectors(self) -> bool:
        """Whether the cache holds vectors (without joining the base and the log)."""
        if self._parts is None:
            return self._vecs is not None
        (_, base_vecs, _), log = self._parts
        return base_vecs is not None or bool(log.vecs)

    @property
    def vectors(self) -> np.ndarray | None:
        self._joined_now()
        return self._vecs

    @property
    def ntok(self) -> np.ndarray | None:
        self._joined_now()
        return self._ntok

    @property
    def dim(self) -> int | None:
        vecs = self.vectors
        return None if vecs is None else int(vecs.shape[1])

    def add(self, keys: Sequence[bytes], vecs: np.ndarray, ntok: Sequence[int]) -> None:
        """Store new entries under a lock: appended to the log, or (no usable base, a damaged log,
        a log grown past its bound, another dimension) compacted with the rest into a new base.
        The in-memory view is refreshed too."""
        from propeval.fsutil import locked

        if not keys:
            return
        vecs = np.asarray(vecs, dtype=np.float32)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with locked(Path(str(self.path) + ".lock"), timeout=60):
                self._add_locked(keys, vecs, ntok)
        except OSError as e:
            # A read-only or full cache folder costs speed next time, not this run's answer.
            self.warnings.append(f"cannot write the embedding cache {self.path}: {e}")

    def _add_locked(self, keys: Sequence[bytes], vecs: np.ndarray, ntok: Sequence[int]) -> None:
        warned = len(self.warnings)
        base = self._read()
        base_broken = len(self.warnings) > warned or (base[1] is None and self.path.exists())
        log = self._read_log(base[1].shape[1] if base[1] is not None else None)
        old_dim = base[1].shape[1] if base[1] is not None else (log.vecs[0].shape[1] if log.vecs else None)
        emptied = old_dim is not None and old_dim != vecs.shape[1]
        if emptied:
            self.warnings.append(
                f"embedding cache {self.path} has dimension {old_dim}, the model gives {vecs.shape[1]}; rebuilding it"
            )
            base_broken = True
        known = (lambda k: False) if emptied else self._known(base, log)
        fresh = [i for i, k in enumerate(keys) if not known(k)]
        new_keys = np.array([keys[i] for i in fresh], dtype="S64")
        new_vecs = vecs[fresh]
        new_ntok = np.asarray([ntok[i] for i in fresh], dtype=np.int32)
        base_bytes = self.path.stat().st_size if base[1] is not None else 0
        grown = (
            log.end + _record_size(len(fresh), vecs.shape[1]) > max(COMPACT_BYTES, base_bytes // 4)
            or len(log.keys) >= COMPACT_RECORDS
        )
        if base[1] is None or base_broken or log.damage or grown:
            if log.damage:
                self._warn_log(log)
                os.replace(self.log_path, self.log_path.with_name(self.log_path.name + ".damaged"))
            old = (np.zeros((0,), dtype="S64"), None, None) if emptied else _joined(base, log)
            keys_all = np.concatenate([old[0], new_keys])
            vecs_all = new_vecs if old[1] is None else np.concatenate([old[1], new_vecs]).astype(np.float32)
            ntok_all = new_ntok if old[2] is None else np.concatenate([old[2].astype(np.int32), new_ntok])
            self._write_base(keys_all, vecs_all, ntok_all)
            # The base now holds the log's entries. A reader that read the old base and then finds no
            # log misses them and embeds those texts again: a cost, never a wrong vector.
            if self.log_path.exists():
                self.log_path.unlink()
            self._set(keys_all, vecs_all, ntok_all)
            return
        if fresh:
            if log.size > log.end:  # a record a crashed writer cut short: nobody else writes under the lock
                os.truncate(self.log_path, log.end)
            record = _HEAD.pack(RECORD, len(fresh), vecs.shape[1])
            record += new_keys.tobytes() + new_vecs.astype("<f4").tobytes() + new_ntok.astype("<i4").tobytes()
            with self.log_path.open("ab") as fh:
                fh.write(record + self._record_mac(record))
            log.keys.append(new_keys)
            log.vecs.append(new_vecs)
            log.ntok.append(new_ntok)
        self._set_parts(base, log)

    def _write_base(self, keys: np.ndarray, vecs: np.ndarray, ntok: np.ndarray) -> None:
        from propeval.fsutil import atomic_write

        meta = json.dumps({"format": FORMAT, "fingerprint": self.fingerprint, "dim": int(vecs.shape[1])})
        arrays = {"meta": np.array(meta), "keys": keys, "vecs": vecs, "ntok": ntok}
        buf = io.BytesIO()
        np.savez(buf, **{**arrays, "mac": np.array(self._mac(arrays))})  # type: ignore[arg-type]
        atomic_write(self.path, buf.getvalue(), cache=True)
        st = self.path.stat()
        self._base = (st.st_size, st.st_mtime_ns, st.st_ino), (keys, vecs, ntok)


def _record_size(n: int, dim: int) -> int:
    return _HEAD.size + n * (_KEY + 4 * dim + 4) + 32


def _joined(base: Arrays, log: _Log) -> Arrays:
    """The base's entries, then the log's (a key the log repeats keeps its first row)."""
    if not log.keys:
        return base
    keys = np.concatenate([base[0], *log.keys])
    vecs = np.concatenate(log.vecs if base[1] is None else [base[1], *log.vecs]).astype(np.float32, copy=False)
    ntok = np.concatenate(log.ntok if base[2] is None else [base[2], *log.ntok]).astype(np.int32, copy=False)
    return keys, vecs, ntok


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
    text_keys: Sequence[str] | None = None,
) -> Embedding:
    """Vectors for ``texts``: from the cache in ``folder`` where present; the rest are encoded once
    each (the encoder batches them) and stored.

    ``progress_factory`` (default: the listener of :mod:`propeval.progress`) is told how many texts
    are to be encoded and returns a per-batch callback. The cache file is chosen by the encoder's
    fingerprint and engine; should the engine change
    while encoding (an ONNX export that fails falls back to torch), the new vectors are stored
    under the engine that made them. A cache that cannot be written costs only speed: this run's
    vectors are kept in memory.

    ``text_keys``: each text's :func:`text_key` as hex, when the caller has them (dedup's units carry
    the sha256 of their normalised text: 30k hashes a commit need not make again).
    """
    cache = EmbeddingCache(folder, f"{encoder.fingerprint}-{encoder.engine}")
    cache.load()
    keys = [text_key(t) for t in texts] if text_keys is None else [k.encode("ascii") for k in text_keys]
    missing: dict[bytes, str] = {}
    for k, r, t in zip(keys, cache.rows(keys), texts, strict=True):
        if r is None:
            missing.setdefault(k, t)
    fresh: dict[bytes, tuple[np.ndarray, int]] = {}
    if missing:
        if progress_factory is None:
            from propeval.progress import current

            progress_factory = current()  # the command's bar, when it installed one
        bar = progress_factory is not None and hasattr(encoder, "progress")
        before = getattr(encoder, "progress", None)
        if bar:
            assert progress_factory is not None
            setattr(encoder, "progress", progress_factory(len(missing)))  # noqa: B010
        try:
            vecs = np.asarray(encoder.encode(list(missing.values())), dtype=np.float32)
        finally:
            if bar:  # this call's bar ends with it: a later call on the same encoder drives its own
                setattr(encoder, "progress", before)  # noqa: B010
        ntok = encoder.token_counts(list(missing.values()))
        engine = f"{encoder.fingerprint}-{encoder.engine}"
        if engine != cache.fingerprint:
            warnings = cache.warnings
            cache = EmbeddingCache(folder, engine, warnings=warnings)
            cache.load()
        new_keys = list(missing)
        cache.add(new_keys, vecs, ntok)
        if not cache.has_vectors or cache.rows(new_keys[:1])[0] is None:
            # The cache could not be written: keep this run's vectors in memory.
            fresh = {k: (v, int(n)) for k, v, n in zip(new_keys, vecs, ntok, strict=True)}
    rows = cache.rows(keys)
    if keys and not fresh and None not in rows:
        # every text in the cache: one gather, not a row at a time
        got = cache.gather(np.asarray(rows, dtype=np.int64))
        if got is not None:
            vectors, ntoks = got
            return Embedding(vectors, ntoks.astype(int).tolist(), len(missing), cache.warnings, cache.path)
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
