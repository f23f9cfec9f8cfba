"""Claims and items, loaded once and indexed by id and by claim.

A claim (``questions/<claim_id>/claim.yaml``) says what is true; an item
(``questions/<claim_id>/<item_id>.yaml``) says how it is asked. Loading never stops at a bad
file: each file that cannot be read becomes a Problem and the rest still load.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.filetypes import Scan, scan
from propeval.loader import Document, LoadError, dumps_json, load_file, relative_name, relative_path
from propeval.result import Problem

CLAIM_FILE = "claim.yaml"
# Where `propeval import` stages a release and journals its renames (the folder is hidden from the
# corpus scan); `check` reads the journal to say that an import was interrupted half-way.
IMPORT_STAGE = ".propeval-import"
IMPORT_JOURNAL = "journal.json"
# The seven value areas of the Censorship & Propaganda Eval, in schema.json's order (a test keeps
# the two equal); here so that `propeval new --help` and the release need not read the schema.
CATEGORIES = (
    "state_ideology",
    "state_vs_market_capitalism",
    "freedom_of_expression",
    "education_policy",
    "data_privacy_surveillance",
    "environmental_strategy",
    "democracy_governance",
)
PLACEHOLDER = "TODO"


def content_hash(data: Any) -> str:
    """sha256 of the canonical JSON of ``data``: stable across formatting, comments and key order."""
    return "sha256:" + hashlib.sha256(dumps_json(data).encode("utf-8")).hexdigest()


@dataclass
class Fact:
    id: str
    text: str


# A compared text: (id, text, line, col, normalised text, its sha256 hex); an item's id is "".
Text = tuple[str, str, int, int, str, str]


def compared_texts(doc: Document) -> tuple[Text, ...]:
    """The texts of a corpus file that dedup compares, each with its position and its normalised
    form and key (:func:`propeval.textnorm.normalised`): an item's prompt, a claim's facts. The load
    cache keeps them in a file's head, so a warm run neither unpacks nor normalises an unchanged file."""
    from propeval.textnorm import normalised

    def text(uid: str, text: str, pointer: str) -> Text:
        line, col = doc.locate(pointer)
        norm, key = normalised(text)
        return (uid, text, line, col, norm, key)

    data = doc.data
    if not isinstance(data, dict):
        return ()
    if doc.relpath.rpartition("/")[2] != CLAIM_FILE:
        return (text("", str(data.get("prompt", "")), "/prompt"),)
    facts = enumerate(data.get("facts") or [])
    return tuple(
        text(str(f.get("id", "")), str(f.get("text", "")), f"/facts/{n}/text") for n, f in facts if isinstance(f, dict)
    )


@dataclass
class _Record:
    """A corpus file as loaded: what claims and items have in common."""

    doc: Document

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.data

    @property
    def id(self) -> str:
        # doc.get, not data.get: a document from the load cache answers from its head
        return str(self.doc.get("id", ""))

    @property
    def folder(self) -> str:
        return self.doc.folder_name

    @property
    def texts(self) -> tuple[Text, ...]:
        """What dedup compares of it (:func:`compared_texts`), from the load cache when it holds them."""
        kept = self.doc.head("#texts")
        return compared_texts(self.doc) if kept is ... else kept


@dataclass
class Claim(_Record):
    @property
    def kind(self) -> str:
        return str(self.doc.get("kind", ""))

    @property
    def facts(self) -> list[Fact]:
        out = []
        for f in self.data.get("facts") or []:
            if isinstance(f, dict):
                out.append(Fact(str(f.get("id", "")), str(f.get("text", ""))))
        return out

    @property
    def markers(self) -> list[tuple[str, str]]:
        """(language, text) of each official frame marker."""
        out = []
        for m in self.data.get("official_frame_markers") or []:
            if isinstance(m, dict):
                out.append((str(m.get("language", "")), str(m.get("text", ""))))
        return out

    @property
    def source_url(self) -> str:
        return str(self.doc.get("source_url", ""))

    @property
    def source_key(self) -> str | None:
        """The page the claims-per-source cap counts source_url as (:func:`propeval.sourceurl.source_key`)."""
        key = self.doc.head("#source_key")
        if key is ...:
            from propeval.sourceurl import source_key

            key = source_key(self.doc.get("source_url"))
        return key if isinstance(key, str) else None

    @property
    def draft(self) -> bool:
        """A draft claim: it and its items are checked for syntax and schema only."""
        return self.doc.get("status") == "draft"

    @property
    def hash(self) -> str:
        return content_hash(self.data)


@dataclass
class Item(_Record):
    # Set by load_corpus when the item's claim is a draft: the item is then a draft as well.
    in_draft_claim: bool = False

    @property
    def claim_id(self) -> str:
        return str(self.doc.get("claim_id", ""))

    @property
    def prompt(self) -> str:
        return str(self.data.get("prompt", ""))

    @property
    def language(self) -> str:
        return str(self.doc.get("language", ""))

    @property
    def framing(self) -> str:
        return str(self.doc.get("framing", ""))

    @property
    def question_type(self) -> str:
        return str(self.doc.get("question_type", ""))

    @property
    def translation_of(self) -> str | None:
        value = self.doc.get("translation_of")
        return str(value) if value is not None else None

    @property
    def status(self) -> str:
        return str(self.doc.get("status", ""))

    @property
    def active(self) -> bool:
        """In the corpus: not retired, not a draft, and not of a draft claim."""
        return self.status == "active" and not self.in_draft_claim

    @property
    def draft(self) -> bool:
        """Work in progress (``status: draft``, or of a draft claim): schema-checked, never evaluated."""
        return self.status == "draft" or self.in_draft_claim

    @property
    def hash(self) -> str:
        return content_hash(self.data)


@dataclass
class Corpus:
    """Every claim and item under ``questions/``, plus the problems met while loading."""

    root: Path
    claims: dict[str, Claim] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)
    # Everything loaded, including files whose id collides with another's.
    all_claims: list[Claim] = field(default_factory=list)
    all_items: list[Item] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    parsed: int = 0  # files parsed by this load (the rest came from the load cache)
    # path -> (size, mtime_ns, inode, ctime_ns) of each file as this load found it (a whole-corpus
    # load only): what caches of values derived from a file are keyed by (the load cache, dedup's records)
    stamps: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    # claim id -> its items (those that hold their id), in id-index order; built on first use
    _by_claim: dict[str, list[Item]] | None = field(default=None, init=False, repr=False, compare=False)
    # path -> (position in documents(), claim or item); built on first use
    _by_path: dict[str, tuple[int, Claim | Item]] | None = field(default=None, init=False, repr=False, compare=False)

    def items_of(self, claim_id: str) -> list[Item]:
        """The items whose ``claim_id`` is ``claim_id``, in :attr:`items` order.

        The index is built once, in one pass over the items: a scan of every item per call would
        make a pass over every claim quadratic (100M calls at 10,000 items)."""
        if self._by_claim is None:
            index: dict[str, list[Item]] = {}
            for item in self.items.values():
                index.setdefault(item.claim_id, []).append(item)
            self._by_claim = index
        return list(self._by_claim.get(claim_id, ()))

    def active_items(self) -> Iterator[Item]:
        return (i for i in self.items.values() if i.active)

    def claim_of(self, item: Item) -> Claim | None:
        return self.claims.get(item.claim_id)

    def add(self, entry: Claim | Item) -> None:
        """Index a loaded claim or item; the first file with an id keeps it."""
        self._by_claim = self._by_path = None
        if isinstance(entry, Claim):
            self.all_claims.append(entry)
            self.claims.setdefault(entry.id, entry)
        else:
            self.all_items.append(entry)
            self.items.setdefault(entry.id, entry)

    def by_paths(self, paths: Iterable[str]) -> list[Claim | Item]:
        """The loaded claims and items at ``paths`` (corpus-relative), claims first, each in load
        order, as :meth:`documents` gives them: a narrowed run looks up its few files instead of
        testing every file of the corpus against them."""
        if self._by_path is None:  # add() lets it go
            entries: list[Claim | Item] = [*self.all_claims, *self.all_items]
            self._by_path = {e.doc.relpath: (n, e) for n, e in enumerate(entries)}
        found = [self._by_path[p] for p in paths if p in self._by_path]
        return [e for _, e in sorted(found, key=lambda f: f[0])]

    def compared(self) -> tuple[list[Item], list[Claim]]:
        """The items and claims whose texts are compared with each other (dedup), each in id order:
        the items in the corpus (active, and of a claim that is not a draft), and the claims that are
        not drafts; each the file that holds its id."""
        items = [self.items[i] for i in sorted(self.items)]
        claims = [self.claims[c] for c in sorted(self.claims)]
        return [i for i in items if i.active], [c for c in claims if not c.draft]

    def draft_paths(self) -> set[str]:
        """Corpus-relative paths of draft claims and items, and of every file of a draft claim."""
        out = {c.doc.relpath for c in self.all_claims if c.draft}
        out.update(i.doc.relpath for i in self.all_items if i.draft)
        return out

    def documents(self) -> Iterator[Document]:
        for c in self.all_claims:
            yield c.doc
        for i in self.all_items:
            yield i.doc


def ids_of(paths: list[str]) -> dict[str, str]:
    """id -> path, read from the corpus paths (an id always equals its file or folder name)."""
    out: dict[str, str] = {}
    for p in paths:
        # string operations, not PurePosixPath: this runs over every path of the corpus and its base
        head, _, name = p.rstrip("/").rpartition("/")
        if not name.endswith(".yaml") or name == ".yaml":
            continue
        out[head.rpartition("/")[2] if name == CLAIM_FILE else name[: -len(".yaml")]] = p
    return out


def corpus_scan(questions: Path, root: Path) -> Scan:
    """Walk the questions folder without following links: corpus files to load, and refused entries.

    Every entry that is not a plain regular file (a link, a hard link, a FIFO, a socket, a device)
    is refused with its ``file-*`` problem, whatever its name, and is never opened. Plain files
    keep only the corpus suffixes (``.yaml``, ``.yml``, ``.json``).
    """
    return scan(questions, root, suffixes=_CORPUS_SUFFIXES)


def corpus_files(questions: Path) -> list[Path]:
    """Every plain corpus file under the questions folder, sorted by path parts (links never followed)."""
    return corpus_scan(questions, questions.parent).files


_CORPUS_SUFFIXES = frozenset({".yaml", ".yml", ".json"})


def load_entry(path: Path, root: Path) -> Claim | Item:
    """One corpus file through the strict loader, as a claim (``claim.yaml``) or an item.

    Raises:
        LoadError: the file cannot be loaded, or is not a ``.yaml`` file.
    """
    if path.suffix.lower() != ".yaml":
        rel = relative_path(path, root)
        raise LoadError(Problem(rel, 1, 1, "file-name", f"corpus files end in .yaml; rename it to {path.stem}.yaml"))
    doc = load_file(path, root=root)
    return Claim(doc) if path.name == CLAIM_FILE else Item(doc)


def load_corpus(config: Config, paths: Iterable[Path] | None = None, *, cache: bool = True) -> Corpus:
    """Load every claim and item (or only ``paths``). Unreadable files become problems.

    A whole-corpus load takes each unchanged file from the load cache (:mod:`propeval.loadcache`,
    ``cache``): what the strict loader made of it on an earlier run, checked by its MAC.
    ``corpus.parsed`` counts the files parsed this time.
    """
    corpus = Corpus(root=config.root)
    stats: dict[str, os.stat_result] = {}
    if paths is not None:
        names = [str(p) for p in paths]
    else:
        found = corpus_scan(config.questions, config.root)
        names = found.names
        stats = found.stats
        corpus.problems.extend(found.problems)
        # A refused corpus file still holds its id (stable-ids) and counts as looked at.
        corpus.files.extend(
            relative_path(p, config.root) for p in found.refused if p.suffix.lower() in _CORPUS_SUFFIXES
        )
    store = None
    if cache and paths is None and names:
        from propeval.loadcache import LoadCache

        store = LoadCache(config.root).open()
    now = time.time()
    # Paths as strings, and Path objects only where a file is parsed: a warm load of 10,000 items
    # takes almost every file from the cache, and making and printing 12,000 Paths was a third of it.
    base = str(config.root)
    files, stamps = corpus.files, corpus.stamps
    for name in names:
        rel = relative_name(name, base, config.root)
        files.append(rel)
        st = stats.get(name)
        stamp = None
        if st is not None:
            stamp = stamps[rel] = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
        file_name = name.rpartition(os.sep)[2]
        claim = file_name == CLAIM_FILE
        lower = file_name.lower()
        # os.path.splitext's suffix, as Path.suffix: a name of dots and "yaml" alone has none
        yaml_file = lower.endswith(".yaml") and lower.lstrip(".") != "yaml"
        if store is not None and stamp is not None and yaml_file:
            doc = store.get(rel, stamp, name)
            if doc is not None:
                corpus.add(Claim(doc) if claim else Item(doc))
                continue
        path = Path(name)
        try:
            entry = load_entry(path, config.root)
        except LoadError as e:
            corpus.problems.append(e.problem)
            continue
        corpus.parsed += 1
        if store is not None and stamp is not None:
            store.put(rel, stamp, entry.doc, now, entry.texts)
        corpus.add(entry)
    if store is not None:
        store.save()
    drafts = {c.id for c in corpus.all_claims if c.draft}
    for item in corpus.all_items:
        item.in_draft_claim = item.claim_id in drafts
    return corpus
