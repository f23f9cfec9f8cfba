"""The strict loader's results for corpus files, kept between runs: a warm load parses nothing.

A pre-commit hook checks one new item against the whole corpus, and each hook is its own process:
at 10,000 items, parsing every file through the strict loader (:mod:`propeval.loader`) was most of
every hook's time. So :func:`propeval.corpus.load_corpus` keeps what the loader made of each file
(its data, its text and the position of every value) in one file in the user cache folder, and
uses an entry again only while the file is unchanged:

* An entry is keyed by the file's path and its ``lstat``: size, mtime_ns, inode and ctime_ns
  (as git's index is; a content change that kept all four would take a deliberate ``utime`` and
  a ctime no user can set). A file changed since is parsed again; a file that fails to load is
  never kept, so its problem is reported on every run.
* As in git's index, a file modified less than :data:`~propeval.memo.RACY_SECONDS` before the cache is written
  is not kept: an edit within the same clock tick could leave its stat unchanged.
* The cache is an input (DESIGN.md: a cached entry cannot silently change a result). It carries an
  HMAC-SHA256 under this user's cache key (:mod:`propeval.cachekey`), over the code that made it,
  the corpus root and the index, which holds the sha256 of each file's span of the blob (checked
  when the span is read); a file that does not check out, or that another version of
  propeval wrote, is not used (everything is parsed, as on a first run) and is replaced.
* Only the loader's own output is kept (mappings, lists, strings, numbers, booleans and None), in
  :mod:`marshal`'s format, read only after the MAC checks out. Data, text and positions are kept
  packed per file and unpacked when a rule asks for them: a commit's hook reads whole only the
  files it checks. What the cross-file rules read of every file (ids, claim_id, status, language,
  source_url, ...) is kept beside them unpacked, as the file's *head* (:data:`HEAD`): the scalar
  values of those keys, and values derived from them (the page the claims-per-source cap counts;
  the texts dedup compares, with their positions and normalised forms:
  :func:`propeval.corpus.compared_texts`).

A cache that cannot be read or written costs the next run a full parse, never a failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import time
from pathlib import Path
from typing import Any

from propeval import memo
from propeval.loader import Document

FORMAT = 3  # 3: the MAC covers the index; each span its sha256
MAGIC = b"propeval corpus cache\n"
# The most a cache file is read to: far above a corpus of 100,000 files (about 300 MB); a larger
# file (or no regular file: a FIFO, a link to a device) reads as empty, as a damaged one does.
MAX_BYTES = 1 << 31
# The cache folder keeps the files of at most this many corpus roots, none unused this long.
KEEP_FILES = 32
KEEP_DAYS = 60
Stamp = tuple[int, int, int, int]  # size, mtime_ns, inode, ctime_ns

# The keys of a corpus file's data that rules read of every file (Document.get answers them from
# the head), and "#"-named values derived from them (Document.head).
HEAD = (
    "id",
    "claim_id",
    "status",
    "language",
    "translation_of",
    "framing",
    "question_type",
    "kind",
    "source_url",
    "source_role",
    "anchor",
    "#source_key",
    "#texts",
)
HEAD_INDEX = {key: n for n, key in enumerate(HEAD)}
_SCALARS = (str, int, float, bool, type(None))


def head_of(data: Any, texts: Any = ...) -> tuple[Any, ...]:
    """The head of a file's data: each :data:`HEAD` key's value when it is a scalar other than
    None; None when the key is absent; else ``...`` (a null or a structure: read the data); and
    ``texts``, the file's compared texts (:func:`propeval.corpus.compared_texts`)."""
    from propeval.sourceurl import source_key

    if not isinstance(data, dict):
        return (...,) * len(HEAD)
    out: list[Any] = []
    for k in HEAD[:-2]:
        v = data.get(k, ...)
        out.append(None if v is ... else v if v is not None and isinstance(v, _SCALARS) else ...)
    out.append(source_key(data.get("source_url")))
    out.append(texts)
    return tuple(out)


class CachedDocument(Document):
    """A Document from the cache: its head at once; its data, text and positions on first use, read
    from its span of the cache file's blob and checked against the span's digest (the MAC covers
    the index, which holds the digests). A span that does not check out is never used: the file
    itself is parsed instead."""

    def __init__(self, path: Path | str, relpath: str, head: tuple[Any, ...], blob: _Blob, span: Span) -> None:
        # Document's fields, but data, text, values and keys come from ``blob`` when first read,
        # and the path (given as a string) is made a Path when first asked for.
        if isinstance(path, Path):
            self.path = path
        else:
            self._name = path
        self.relpath = relpath
        self._head = head
        self._blob = blob
        self._span = span

    def get(self, key: str, default: Any = None) -> Any:
        n = HEAD_INDEX.get(key)
        if n is not None and "data" not in self.__dict__:
            value = self._head[n]
            if value is None:
                return default  # absent
            if value is not ...:
                return value
        return super().get(key, default)

    def head(self, key: str) -> Any:
        return self._head[HEAD_INDEX[key]]

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if name in ("data", "text", "values", "keys") and "_blob" in d:
            self._unpack()
            return getattr(self, name)
        if name == "path" and "_name" in d:
            self.path = Path(d.pop("_name"))
            return self.path
        raise AttributeError(name)

    def _unpack(self) -> None:
        at, mid, end, digest = self._span
        blob = self.__dict__.pop("_blob")
        raw = blob.read(at, end)
        blob.done()
        if raw is not None and hashlib.sha256(raw).digest() == digest:
            self.data = marshal.loads(raw[: mid - at])
            self.text, self.values, self.keys = marshal.loads(raw[mid - at :])
            return
        from propeval.loader import load_file

        parsed = load_file(self.path, root=blob.root)  # the cache is wrong about it: the file says
        self.data, self.text, self.values, self.keys = parsed.data, parsed.text, parsed.values, parsed.keys


class _Blob:
    """The packed files of a cache file: a span is read from the file when a document first asks
    for it; past :data:`SPAN_READS` spans (a whole-corpus run) the blob is read whole, once. A file
    replaced meanwhile gives bytes that fail their digest, and the document parses its own file."""

    def __init__(self, root: Path, path: Path | None = None, offset: int = 0, size: int = 0) -> None:
        self.root, self._path, self._offset, self.size = root, path, offset, size
        self._reads = 0
        self._whole: bytes | None = None
        self.pending = 0  # documents that have not read their span yet: at 0 the blob read whole is let go

    def done(self) -> None:
        """A document has read its span (a whole-corpus run's last one lets the blob's bytes go)."""
        self.pending -= 1
        if self.pending <= 0:
            self._whole = None

    def read(self, at: int, end: int) -> bytes | None:
        if self._path is None or not 0 <= at <= end <= self.size:
            return None
        if self._whole is None and self._reads >= SPAN_READS:
            self._whole = self._pread(0, self.size) or b""
        if self._whole:
            return self._whole[at:end]
        self._reads += 1
        return self._pread(at, end)

    def keep(self, whole: bytes | None) -> None:
        """Serve every read from ``whole`` (the blob as read), as the file is about to be replaced."""
        if whole is not None and len(whole) == self.size:
            self._whole = whole

    def _pread(self, at: int, end: int) -> bytes | None:
        assert self._path is not None
        from propeval.fsutil import open_regular

        try:
            with open_regular(self._path, MAX_BYTES) as fh:
                got = os.pread(fh.fileno(), end - at, self._offset + at)
        except OSError:
            return None
        return got if len(got) == end - at else None


SPAN_READS = 64  # spans read one by one before the whole blob is read


# where a file's marshalled data starts in the blob, where its text and positions do, the end,
# and the sha256 of those bytes
Span = tuple[int, int, int, bytes]


def pack(doc: Document) -> tuple[bytes, bytes]:
    """A file's data, and its text and positions, marshalled: the two parts of its span of the blob."""
    return marshal.dumps(doc.data), marshal.dumps((doc.text, doc.values, doc.keys))


def _code_stamp() -> bytes:
    """What made the entries: this module, the loader and the corpus model, and the Python that
    reads marshal's format."""
    # By file, not by import: the corpus module imports this one.
    here = Path(__file__)
    h = hashlib.sha256(f"{FORMAT} {sys.version}".encode())
    for source in (
        here.with_name("loader.py"),
        here.with_name("corpus.py"),
        here.with_name("sourceurl.py"),  # the head's #source_key
        here.with_name("textnorm.py"),
        here,
    ):
        with contextlib.suppress(OSError):
            h.update(source.read_bytes())
    return h.digest()


def default_folder() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "corpus"


class LoadCache:
    """The cached documents of one corpus root (read once, written once, at the end of a load).

    The file is :data:`MAGIC`, the MAC, the index's length (8 bytes), the index (marshalled: path
    -> stamp, head and span with its sha256) and the blob of every file's packed data, text and
    positions. The MAC covers the index: a warm load reads and unmarshals the index alone (3 MB at
    10,000 items, not 30), and a document reads its span when first asked and checks its digest.
    """

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root
        name = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:24]
        self.path = (folder or default_folder()) / f"{name}.bin"
        self._key: bytes | None = None
        self._blob = _Blob(root)
        # path -> (stamp, head, *span) of each file in the cache file read
        self._old: dict[str, tuple[Any, ...]] = {}
        # path -> (stamp, head, packed) of each file this load keeps; packed None: as in _old
        self._new: dict[str, tuple[Stamp, tuple[Any, ...], tuple[bytes, bytes] | None]] = {}
        self._dirty = False

    def _mac(self, table: memoryview | bytes) -> bytes:
        import hmac

        assert self._key is not None
        mac = hmac.new(self._key, digestmod="sha256")
        mac.update(_code_stamp())
        mac.update(str(self.root.resolve()).encode("utf-8") + b"\0")
        mac.update(len(table).to_bytes(8, "little"))
        mac.update(table)
        return mac.digest()

    def open(self) -> LoadCache:
        """Read the cache file's index; anything wrong with it (absent, damaged, foreign, forged)
        reads as empty."""
        from propeval import cachekey
        from propeval.errors import ConfigError

        try:
            self._key = cachekey.cache_key()
        except ConfigError:  # no usable key: no cache, and nothing cached is trusted
            self._key = None
            return self
        from propeval.fsutil import open_regular

        head = len(MAGIC) + 32
        try:
            with open_regular(self.path, MAX_BYTES) as fh:
                start = fh.read(head + 8)
                size = int.from_bytes(start[head:], "little") if len(start) == head + 8 else -1
                total = os.fstat(fh.fileno()).st_size
                if start[: len(MAGIC)] != MAGIC or not 0 <= size <= total - head - 8:
                    return self
                table = fh.read(size)
        except OSError:
            return self
        import hmac

        if len(table) != size or not hmac.compare_digest(start[len(MAGIC) : head], self._mac(table)):
            return self
        try:
            files = marshal.loads(table)
        except (EOFError, ValueError, TypeError):
            return self
        if isinstance(files, dict):
            self._old = files
            self._blob = _Blob(self.root, self.path, head + 8 + size, total - head - 8 - size)
        return self

    def get(self, rel: str, stamp: Stamp, path: Path | str) -> CachedDocument | None:
        """The cached document of ``rel`` when its stat is still ``stamp``."""
        entry = self._old.get(rel)
        if entry is None or entry[0] != stamp:
            return None
        head = entry[1]
        self._new[rel] = (stamp, head, None)
        self._blob.pending += 1
        return CachedDocument(path, rel, head, self._blob, entry[2:])

    def put(self, rel: str, stamp: Stamp, doc: Document, now: float, texts: Any = ...) -> None:
        """Keep what the loader made of ``rel``, unless it changed too recently to tell a later edit apart."""
        if now - stamp[1] / 1e9 < memo.RACY_SECONDS:
            if rel in self._old:
                self._dirty = True  # the entry it replaces is gone
            return  # a new file too fresh to keep: nothing to write (a commit's new item must not rewrite the cache)
        self._new[rel] = (stamp, head_of(doc.data, texts), pack(doc))
        self._dirty = True

    def save(self) -> None:
        """Write the entries of this load (atomically), when they differ from what was read. A kept
        entry whose span no longer reads back as its digest says is left out (parsed next time)."""
        if self._key is None or (not self._dirty and self._new.keys() == self._old.keys()):
            return
        import tempfile

        old_blob = self._blob.read(0, self._blob.size) if any(p is None for _, _, p in self._new.values()) else b""
        # The file is replaced below: this load's documents read their spans from these bytes instead
        self._blob.keep(old_blob)
        index: dict[str, tuple[Any, ...]] = {}
        chunks: list[bytes] = []
        at = 0
        for rel, (stamp, head, packed) in self._new.items():
            if packed is None:  # kept: its bytes as they are in the file read
                _, _, old_at, old_mid, old_end, digest = self._old[rel]
                chunk = old_blob[old_at:old_end] if old_blob is not None else b""
                if len(chunk) != old_end - old_at or hashlib.sha256(chunk).digest() != digest:
                    continue
                chunks.append(chunk)
                mid, end = at + old_mid - old_at, at + old_end - old_at
            else:
                chunk = packed[0] + packed[1]
                chunks.append(chunk)
                digest = hashlib.sha256(chunk).digest()
                mid, end = at + len(packed[0]), at + len(chunk)
            index[rel] = (stamp, head, at, mid, end, digest)
            at = end
        table = marshal.dumps(index)
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the next run a parse
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Renamed into place whole, not fsynced: a file cut short by a crash fails its MAC (or
            # a span its digest) and is rebuilt, so the cost of durability would buy nothing.
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".corpus-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + self._mac(table) + len(table).to_bytes(8, "little"))
                    fh.write(table)
                    for chunk in chunks:
                        fh.write(chunk)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            from propeval.fsutil import prune

            # One file per corpus root: checkouts come and go (worktrees, CI, temporary clones).
            prune(self.path.parent, "*.bin", keep=KEEP_FILES, max_age_days=KEEP_DAYS, spare=self.path)


def now() -> float:
    return time.time()
