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
* As in git's index, a file modified less than :data:`RACY_SECONDS` before the cache is written
  is not kept: an edit within the same clock tick could leave its stat unchanged.
* The cache is an input (DESIGN.md: a cached entry cannot silently change a result). It carries an
  HMAC-SHA256 under this user's cache key (:mod:`propeval.cachekey`), over the code that made it,
  the corpus root and every byte; a file that does not check out, or that another version of
  propeval wrote, is not used (everything is parsed, as on a first run) and is replaced.
* Only the loader's own output is kept (mappings, lists, strings, numbers, booleans and None), in
  :mod:`marshal`'s format, read only after the MAC checks out. Data, text and positions are kept
  packed per file and unpacked when a rule asks for them: a commit's hook reads whole only the
  files it checks. What the cross-file rules read of every file (ids, claim_id, status, language,
  source_url, ...) is kept beside them unpacked, as the file's *head* (:data:`HEAD`): the scalar
  values of those keys, and values derived from them (the page the claims-per-source cap counts).

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

from propeval.loader import Document

FORMAT = 2
MAGIC = b"propeval corpus cache\n"
RACY_SECONDS = 2.0
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
    "#source_key",
)
HEAD_INDEX = {key: n for n, key in enumerate(HEAD)}
_SCALARS = (str, int, float, bool, type(None))


def head_of(data: Any) -> tuple[Any, ...]:
    """The head of a file's data: each :data:`HEAD` key's value when it is a scalar other than
    None; None when the key is absent; else ``...`` (a null or a structure: read the data)."""
    from propeval.sourceurl import source_key

    if not isinstance(data, dict):
        return (...,) * len(HEAD)
    out: list[Any] = []
    for k in HEAD[:-1]:
        v = data.get(k, ...)
        out.append(None if v is ... else v if v is not None and isinstance(v, _SCALARS) else ...)
    out.append(source_key(data.get("source_url")))
    return tuple(out)


class CachedDocument(Document):
    """A Document from the cache: its head at once; its data, text and positions on first use,
    unpacked from the cache file's bytes (``blob[at:mid]`` the data, ``blob[mid:end]`` the rest)."""

    def __init__(self, path: Path | str, relpath: str, head: tuple[Any, ...], blob: memoryview, span: Span) -> None:
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
        if name == "data" and "_blob" in d:
            at, mid, _ = self._span
            self.data = marshal.loads(self._blob[at:mid])
            return self.data
        if name in ("text", "values", "keys") and "_blob" in d:
            _, mid, end = self._span
            self.text, self.values, self.keys = marshal.loads(self._blob[mid:end])
            return getattr(self, name)
        if name == "path" and "_name" in d:
            self.path = Path(d.pop("_name"))
            return self.path
        raise AttributeError(name)


Span = tuple[int, int, int]  # where a file's marshalled data starts, where its text and positions do, and the end


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

    The file is :data:`MAGIC`, the MAC, then the index's length (8 bytes), the index (marshalled:
    path -> stamp, head and span) and the blob of every file's packed data, text and positions.
    A warm load unmarshals the index alone; a document slices its part of the blob when first read.
    """

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root
        name = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:24]
        self.path = (folder or default_folder()) / f"{name}.bin"
        self._key: bytes | None = None
        self._blob = memoryview(b"")
        # path -> (stamp, head, *span) of each file in the cache file read
        self._old: dict[str, tuple[Any, ...]] = {}
        # path -> (stamp, head, packed) of each file this load keeps; packed None: as in _old
        self._new: dict[str, tuple[Stamp, tuple[Any, ...], tuple[bytes, bytes] | None]] = {}
        self._dirty = False

    def _mac(self, payload: memoryview | bytes) -> bytes:
        import hmac

        assert self._key is not None
        mac = hmac.new(self._key, digestmod="sha256")
        mac.update(_code_stamp())
        mac.update(str(self.root.resolve()).encode("utf-8"))
        mac.update(payload)  # a view of the file read: 10,000 items are ~30 MB, not copied
        return mac.digest()

    def open(self) -> LoadCache:
        """Read the cache file; anything wrong with it (absent, damaged, foreign, forged) reads as empty."""
        from propeval import cachekey
        from propeval.errors import ConfigError

        try:
            self._key = cachekey.cache_key()
        except ConfigError:  # no usable key: no cache, and nothing cached is trusted
            self._key = None
            return self
        try:
            raw = memoryview(self.path.read_bytes())
        except OSError:
            return self
        head = len(MAGIC) + 32
        if raw[: len(MAGIC)] != MAGIC or len(raw) < head + 8:
            return self
        import hmac

        if not hmac.compare_digest(raw[len(MAGIC) : head], self._mac(raw[head:])):
            return self
        size = int.from_bytes(raw[head : head + 8], "little")
        try:
            files = marshal.loads(raw[head + 8 : head + 8 + size])
        except (EOFError, ValueError, TypeError):
            return self
        if isinstance(files, dict):
            self._old = files
            self._blob = raw[head + 8 + size :]
        return self

    def get(self, rel: str, stamp: Stamp, path: Path | str) -> CachedDocument | None:
        """The cached document of ``rel`` when its stat is still ``stamp``."""
        entry = self._old.get(rel)
        if entry is None or entry[0] != stamp:
            return None
        head = entry[1]
        self._new[rel] = (stamp, head, None)
        return CachedDocument(path, rel, head, self._blob, entry[2:])

    def put(self, rel: str, stamp: Stamp, doc: Document, now: float) -> None:
        """Keep what the loader made of ``rel``, unless it changed too recently to tell a later edit apart."""
        if now - stamp[1] / 1e9 < RACY_SECONDS:
            if rel in self._old:
                self._dirty = True  # the entry it replaces is gone
            return  # a new file too fresh to keep: nothing to write (a commit's new item must not rewrite the cache)
        self._new[rel] = (stamp, head_of(doc.data), pack(doc))
        self._dirty = True

    def save(self) -> None:
        """Write the entries of this load (atomically), when they differ from what was read."""
        if self._key is None or (not self._dirty and self._new.keys() == self._old.keys()):
            return
        import tempfile

        index: dict[str, tuple[Any, ...]] = {}
        chunks: list[bytes | memoryview] = []
        at = 0
        for rel, (stamp, head, packed) in self._new.items():
            if packed is None:  # kept: its bytes as they are in the file read
                _, _, old_at, old_mid, old_end = self._old[rel]
                chunks.append(self._blob[old_at:old_end])
                mid, end = at + old_mid - old_at, at + old_end - old_at
            else:
                chunks.extend(packed)
                mid, end = at + len(packed[0]), at + len(packed[0]) + len(packed[1])
            index[rel] = (stamp, head, at, mid, end)
            at = end
        table = marshal.dumps(index)
        payload = b"".join([len(table).to_bytes(8, "little"), table, *chunks])
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the next run a parse
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Renamed into place whole, not fsynced: a file cut short by a crash fails its MAC and
            # is rebuilt, so the cost of durability would buy nothing.
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".corpus-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + self._mac(payload))
                    fh.write(payload)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def now() -> float:
    return time.time()
