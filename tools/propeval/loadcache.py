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
  :mod:`marshal`'s format, read only after the MAC checks out. Positions and text are kept packed
  per file and unpacked when a rule asks for them: most files of a run are never located.

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

FORMAT = 1
MAGIC = b"propeval corpus cache\n"
RACY_SECONDS = 2.0
Stamp = tuple[int, int, int, int]  # size, mtime_ns, inode, ctime_ns


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


class CachedDocument(Document):
    """A Document from the cache: its data at once, its text and positions on first use."""

    def __init__(self, path: Path | str, relpath: str, data: dict[str, Any], packed: bytes) -> None:
        # Document's fields, but text, values and keys come from ``packed`` when first read, and
        # the path (given as a string) is made a Path when first asked for.
        if isinstance(path, Path):
            self.path = path
        else:
            self._name = path
        self.relpath = relpath
        self.data = data
        self._packed = packed

    def __getattr__(self, name: str) -> Any:
        if name in ("text", "values", "keys") and "_packed" in self.__dict__:
            text, values, keys = marshal.loads(self.__dict__.pop("_packed"))
            self.text, self.values, self.keys = text, values, keys
            return getattr(self, name)
        if name == "path" and "_name" in self.__dict__:
            self.path = Path(self.__dict__.pop("_name"))
            return self.path
        raise AttributeError(name)

    @property
    def packed(self) -> bytes:
        """Text and positions as kept in the cache (without unpacking them)."""
        packed = self.__dict__.get("_packed")
        return packed if isinstance(packed, bytes) else pack(self)


def pack(doc: Document) -> bytes:
    return marshal.dumps((doc.text, doc.values, doc.keys))


def _code_stamp() -> bytes:
    """What made the entries: this module, the loader and the corpus model, and the Python that
    reads marshal's format."""
    # By file, not by import: the corpus module imports this one.
    here = Path(__file__)
    h = hashlib.sha256(f"{FORMAT} {sys.version}".encode())
    for source in (here.with_name("loader.py"), here.with_name("corpus.py"), here):
        with contextlib.suppress(OSError):
            h.update(source.read_bytes())
    return h.digest()


def default_folder() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "corpus"


class LoadCache:
    """The cached documents of one corpus root (read once, written once, at the end of a load)."""

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root
        name = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:24]
        self.path = (folder or default_folder()) / f"{name}.bin"
        self._key: bytes | None = None
        self._old: dict[str, tuple[Stamp, dict[str, Any], bytes]] = {}
        self._new: dict[str, tuple[Stamp, dict[str, Any], bytes]] = {}
        self._dirty = False
        self.hits = 0

    def _mac(self, payload: bytes) -> bytes:
        import hmac

        assert self._key is not None
        return hmac.digest(self._key, _code_stamp() + str(self.root.resolve()).encode("utf-8") + payload, "sha256")

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
            raw = self.path.read_bytes()
        except OSError:
            return self
        head = len(MAGIC) + 32
        if not raw.startswith(MAGIC) or len(raw) < head:
            return self
        import hmac

        payload = raw[head:]
        if not hmac.compare_digest(raw[len(MAGIC) : head], self._mac(payload)):
            return self
        try:
            files = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return self
        if isinstance(files, dict):
            self._old = files
        return self

    def get(self, rel: str, stamp: Stamp, path: Path | str) -> CachedDocument | None:
        """The cached document of ``rel`` when its stat is still ``stamp``."""
        entry = self._old.get(rel)
        if entry is None or entry[0] != stamp:
            return None
        self.hits += 1
        self._new[rel] = entry
        return CachedDocument(path, rel, entry[1], entry[2])

    def put(self, rel: str, stamp: Stamp, doc: Document, now: float) -> None:
        """Keep what the loader made of ``rel``, unless it changed too recently to tell a later edit apart."""
        if now - stamp[1] / 1e9 < RACY_SECONDS:
            if rel in self._old:
                self._dirty = True  # the entry it replaces is gone
            return  # a new file too fresh to keep: nothing to write (a commit's new item must not rewrite the cache)
        self._new[rel] = (stamp, doc.data, pack(doc))
        self._dirty = True

    def save(self) -> None:
        """Write the entries of this load (atomically), when they differ from what was read."""
        if self._key is None or (not self._dirty and self._new.keys() == self._old.keys()):
            return
        import tempfile

        payload = marshal.dumps(self._new)
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the next run a parse
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Renamed into place whole, not fsynced: a file cut short by a crash fails its MAC and
            # is rebuilt, so the cost of durability would buy nothing.
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".corpus-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + self._mac(payload) + payload)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def now() -> float:
    return time.time()
