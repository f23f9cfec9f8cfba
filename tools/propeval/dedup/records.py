"""What dedup reads from each corpus file, kept between runs so that a warm run skips parsing.

The pre-commit hook compares one new prompt with the whole corpus, and loading 12,000 YAML files
through the strict loader is most of its time (~1.5 s of ~2.4 s at 10k items). Each file that loads
cleanly is reduced to a small record (ids, texts, their line and column, the claim's source) and
kept in one file in the dedup cache folder, keyed by the file's path, size, mtime_ns, inode and ctime_ns, with
each text's normalised form and key (a warm run normalises only the texts of changed files). The
Workspace's corpus (``propeval hook``, ``ci``, ``run``) is served from the same records.

* Only plain regular files are looked at (:func:`corpus.corpus_scan`): a link, hard link or special
  file is a problem on every run and never enters the cache.
* A file whose stat changed is loaded again through the strict loader (:func:`corpus.load_entry`).
* A file that fails to load is never kept, so its problem is reported on every run.
* As in git's index, a file modified less than :data:`~propeval.memo.RACY_SECONDS` before the cache is written is
  not kept: an edit within the same clock tick could leave its stat unchanged.
* The cache is bound to the code that makes records (:func:`_code_stamp`) and to the corpus root,
  and carries an HMAC-SHA256 under this user's cache key (:mod:`propeval.cachekey`), read with
  :mod:`marshal` only after it checks out (as :mod:`propeval.loadcache`). A missing, corrupt,
  forged or foreign cache file is simply rebuilt; a cache that cannot be written only costs the
  next run a full load.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from propeval import memo
from propeval.corpus import Claim, Corpus, Item, corpus_scan, load_entry
from propeval.loader import LoadError, relative_path
from propeval.result import Problem

# 2: items carry translation_of; 3: each text its normalised form and key; 4: stamps as tuples,
# with ctime_ns (as the load cache's)
FORMAT = 4


@dataclass
class Records:
    """Every corpus file's record, in path order, and the problems of files that did not load."""

    claims: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    loaded: int = 0  # files parsed this run (the rest came from the cache)
    files: int = 0


def record_of(entry: Claim | Item) -> dict[str, Any]:
    """The fields dedup uses, with positions, as plain JSON values; each text with its normalised
    form and that form's key (:func:`propeval.textnorm.normalised`), so that a warm run
    normalises and hashes only the texts of files that changed."""
    from propeval.textnorm import normalised

    rel = entry.doc.relpath
    if isinstance(entry, Claim):
        facts = []
        for n, fact in enumerate(entry.facts):
            line, col = entry.doc.locate(f"/facts/{n}/text")
            facts.append([fact.id, fact.text, line, col, *normalised(fact.text)])
        return {
            "kind": "claim",
            "path": rel,
            "id": entry.id,
            "source_url": entry.source_url,
            "anchor": str(entry.data.get("anchor", "")),
            "claim_kind": str(entry.data.get("kind", "")),
            "facts": facts,
            "draft": entry.draft,
        }
    line, col = entry.doc.locate("/prompt")
    return {
        "kind": "item",
        "path": rel,
        "id": entry.id,
        "claim_id": entry.claim_id,
        "language": entry.language,
        "translation_of": entry.translation_of or "",
        "prompt": entry.prompt,
        "active": entry.active,
        "line": line,
        "col": col,
        "norm": normalised(entry.prompt),
    }


def load_records(root: Path, questions: Path, cache_folder: Path | None) -> Records:
    """Records of every corpus file under ``questions``, from the cache where a file is unchanged."""
    out = Records()
    path = _cache_path(cache_folder, root) if cache_folder is not None else None
    old = _read(path) if path is not None else {}
    new: dict[str, tuple[Any, ...]] = {}
    now = time.time()
    found = corpus_scan(questions, root)
    out.problems.extend(found.problems)  # links and special files: never read, never cached
    for file in found.files:
        out.files += 1
        rel = relative_path(file, root)
        st = found.stats.get(str(file))
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) if st is not None else None
        cached = old.get(rel)
        if stamp is not None and _usable(cached) and cached[0] == stamp:
            record = cached[1]
        else:
            try:
                entry = load_entry(file, root)
            except LoadError as e:
                out.problems.append(e.problem)
                continue
            out.loaded += 1
            record = record_of(entry)
        (out.claims if record["kind"] == "claim" else out.items).append(record)
        if stamp is not None and now - stamp[1] / 1e9 >= memo.RACY_SECONDS:
            new[rel] = (stamp, record)
    if path is not None and new != old:
        _write(path, new)
    return out


def records_of_corpus(corpus: Corpus, cache_folder: Path | None) -> Records:
    """Records of a loaded corpus's claims and items (every file read already, by the Workspace):
    a file whose stat is the one the record cache holds keeps its record (and its texts' normalised
    forms), the rest are made from the loaded documents. Files that did not load are the corpus's
    problems."""
    out = Records(problems=list(corpus.problems))
    path = _cache_path(cache_folder, corpus.root) if cache_folder is not None else None
    old = _read(path) if path is not None else {}
    new: dict[str, tuple[Any, ...]] = {}
    kept = 0  # entries of ``old`` kept as they were: when all are, the cache is not written again
    settled = time.time_ns() - int(memo.RACY_SECONDS * 1e9)  # a file modified after this is not kept
    stamps = corpus.stamps
    claims, items = out.claims, out.items
    entries: list[Claim | Item] = [*corpus.all_claims, *corpus.all_items]
    for entry in entries:
        rel = entry.doc.relpath
        stamp = stamps.get(rel)
        cached = old.get(rel)
        # an entry is (stamp, record) as this code wrote it: the file's MAC says so
        if stamp is not None and cached is not None and cached[0] == stamp:
            kept += 1
            record = cached[1]
            entry_now = cached
        else:
            out.loaded += 1
            record = record_of(entry)
            entry_now = (stamp, record)
        (claims if record["kind"] == "claim" else items).append(record)
        if stamp is not None and stamp[1] <= settled:
            new[rel] = entry_now
    out.files = len(claims) + len(items)
    # ``new`` equals ``old`` exactly when it holds each of old's entries, as kept (a kept entry is old
    # enough to be in ``new``: its stamp matched one written no sooner than RACY_SECONDS after it);
    # comparing the two dictionaries of 10,000 records cost a commit's hook 10-20 ms
    if path is not None and not (kept == len(new) == len(old)):
        _write(path, new)
    return out


def _usable(cached: Any) -> TypeGuard[tuple[Any, ...]]:
    return (
        isinstance(cached, tuple)
        and len(cached) == 2
        and isinstance(cached[1], dict)
        and cached[1].get("kind") in ("claim", "item")
    )


def _code_stamp() -> str:
    """A hash of the modules whose code shapes a record: a changed loader invalidates the cache."""
    import propeval.corpus
    import propeval.loader
    import propeval.textnorm

    h = hashlib.sha256(f"{FORMAT}".encode())
    for module in (propeval.loader, propeval.corpus, propeval.textnorm):
        with contextlib.suppress(OSError, TypeError):
            h.update(Path(str(module.__file__)).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:32]


def _cache_path(folder: Path, root: Path) -> Path:
    name = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:24]
    return folder / "corpus" / f"{name}.records"


MAGIC = b"propeval dedup records\n"


def _mac(key: bytes, payload: bytes | memoryview) -> bytes:
    import hmac

    mac = hmac.new(key, _code_stamp().encode("ascii") + b"\0", "sha256")
    mac.update(payload)  # a view of the file read: 10 MB at 10k items, not copied
    return mac.digest()


def _read(path: Path) -> dict[str, tuple[Any, ...]]:
    """The cache's records; anything wrong with the file (absent, damaged, made by other code, not
    authenticated under this user's cache key) reads as empty."""
    import hmac
    import marshal

    from propeval import cachekey
    from propeval.errors import ConfigError

    try:
        raw = memoryview(path.read_bytes())
        key = cachekey.cache_key()
    except (OSError, ConfigError):
        return {}
    head = len(MAGIC) + 32
    if raw[: len(MAGIC)] != MAGIC or not hmac.compare_digest(raw[len(MAGIC) : head], _mac(key, raw[head:])):
        return {}
    try:
        files = marshal.loads(raw[head:])
    except (EOFError, ValueError, TypeError):
        return {}
    return files if isinstance(files, dict) else {}


def _write(path: Path, files: dict[str, tuple[Any, ...]]) -> None:
    import marshal

    from propeval import cachekey
    from propeval.errors import ConfigError
    from propeval.fsutil import atomic_write

    # A read-only or full cache folder, or no cache key, costs only the next run's parse time.
    with contextlib.suppress(OSError, ConfigError):
        payload = marshal.dumps(files)
        atomic_write(path, MAGIC + _mac(cachekey.cache_key(), payload) + payload)
