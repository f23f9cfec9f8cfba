"""Near-duplicate detection: three passes, explained pairs, a reviewed-pair allowlist, clusters.

What is compared:

* every active item's prompt against the prompts of other claims' items (items of one claim are
  framings and translations of each other, not duplicates);
* every claim fact against the facts of other claims (two claims with the same facts are one
  claim written twice).

The passes, each reported on its own, all on :func:`propeval.textnorm.normalise`'d text:

* ``exact``: equal normalised-text hashes;
* ``lexical``: rapidfuzz ``token_sort_ratio`` / 100 over candidate pairs that share a rare word
  bigram or are semantic neighbours;
* ``semantic``: cosine of the configured encoder's embeddings, via faiss k nearest neighbours.

A pair at or above a pass's threshold is *flagged*. A flagged pair in the allowlist
(``dedup-allowlist.yaml``) whose two texts are unchanged since review is *reviewed*; any other is
*unreviewed* and makes the run exit 1.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval import gitutil, textnorm
from propeval.config import Config
from propeval.errors import UsageError
from propeval.loader import LoadError, load_file
from propeval.result import Problem, Severity
from propeval.settings import DedupSettings as Settings

PASSES = ("exact", "lexical", "semantic")
ALLOWLIST_FIELDS = ("a", "a_hash", "b", "b_hash", "reviewer", "reason", "date")


# --------------------------------------------------------------------------- units and pairs


@dataclass(frozen=True)
class Unit:
    """One text that takes part in the comparison: an item's prompt or one claim fact."""

    id: str  # item id, or "<claim_id>/<fact_id>"
    kind: str  # "item" | "fact"
    claim_id: str
    text: str
    path: str
    line: int
    col: int
    language: str
    source_url: str
    anchor: str
    norm: str
    key: str  # sha256 hex of the normalised text

    @property
    def hash(self) -> str:
        return f"sha256:{self.key}"


@dataclass
class AllowEntry:
    a: str
    a_hash: str
    b: str
    b_hash: str
    reviewer: str
    reason: str
    date: str
    line: int = 0


@dataclass
class Pair:
    """A flagged pair and everything that explains it."""

    a: Unit
    b: Unit
    scores: dict[str, float]  # pass -> score, for the passes that flagged it
    semantic: float | None = None  # cosine, whether or not it flagged
    lexical: float | None = None
    rank_a: int = 0  # b's rank among a's other-claim neighbours (1 = nearest)
    rank_b: int = 0
    shared_terms: list[str] = field(default_factory=list)
    shared_source: str = ""
    allowed: AllowEntry | None = None

    @property
    def ids(self) -> tuple[str, str]:
        return (self.a.id, self.b.id)

    @property
    def reviewed(self) -> bool:
        return self.allowed is not None

    def to_dict(self) -> dict[str, Any]:
        def unit(u: Unit) -> dict[str, Any]:
            return {
                "id": u.id,
                "kind": u.kind,
                "claim_id": u.claim_id,
                "path": u.path,
                "line": u.line,
                "language": u.language,
                "text": u.text,
                "hash": u.hash,
            }

        return {
            "a": unit(self.a),
            "b": unit(self.b),
            "passes": dict(self.scores),
            "semantic": self.semantic,
            "lexical": self.lexical,
            "rank": {self.a.id: self.rank_a, self.b.id: self.rank_b},
            "shared_terms": self.shared_terms,
            "shared_source": self.shared_source or None,
            "reviewed": self.reviewed,
            "review": None
            if self.allowed is None
            else {"reviewer": self.allowed.reviewer, "reason": self.allowed.reason, "date": self.allowed.date},
        }


@dataclass
class DedupResult:
    pairs: list[Pair] = field(default_factory=list)
    clusters: list[list[str]] = field(default_factory=list)  # of unreviewed pairs
    counts: dict[str, int] = field(default_factory=dict)  # pass -> flagged pairs
    problems: list[Problem] = field(default_factory=list)  # loading, allowlist, truncation, stale reviews
    notes: list[str] = field(default_factory=list)
    units: int = 0
    encoded: int = 0
    settings: Settings = field(default_factory=Settings)

    @property
    def unreviewed(self) -> list[Pair]:
        return [p for p in self.pairs if not p.reviewed]

    @property
    def reviewed(self) -> list[Pair]:
        return [p for p in self.pairs if p.reviewed]

    @property
    def exit_code(self) -> int:
        bad = any(p.severity is Severity.ERROR for p in self.problems)
        return 1 if self.unreviewed or bad else 0


def load_units(config: Config, settings: Settings, *, facts: bool = True) -> tuple[list[Unit], list[Problem]]:
    """Active items' prompts, then (optionally) every claim fact, in a stable order, plus the
    problems of files that did not load. Unchanged files come from the record cache
    (:mod:`propeval.dedup_records`) in the dedup cache folder."""
    from propeval.dedup_records import load_records

    records = load_records(config.root, config.questions, settings.cache_folder(config.root))
    return units_of_records(records.claims, records.items, facts=facts), records.problems


def units_of_records(
    claims: Sequence[dict[str, Any]], items: Sequence[dict[str, Any]], *, facts: bool = True
) -> list[Unit]:
    """Units from :func:`propeval.dedup_records.record_of` records; the first file with an id
    keeps it, as in :class:`propeval.corpus.Corpus`."""
    claim_by_id: dict[str, dict[str, Any]] = {}
    for c in claims:
        claim_by_id.setdefault(c["id"], c)
    item_by_id: dict[str, dict[str, Any]] = {}
    for i in items:
        item_by_id.setdefault(i["id"], i)
    out: list[Unit] = []
    for iid in sorted(item_by_id):
        item = item_by_id[iid]
        if not item["active"] or not item["prompt"].strip():
            continue
        claim = claim_by_id.get(item["claim_id"])
        out.append(
            _unit(
                iid,
                "item",
                item["claim_id"],
                item["prompt"],
                item["path"],
                item["line"],
                item["col"],
                item["language"],
                claim["source_url"] if claim else "",
                claim["anchor"] if claim else "",
            )
        )
    if facts:
        for cid in sorted(claim_by_id):
            claim = claim_by_id[cid]
            for fid, text, line, col in claim["facts"]:
                if not text.strip():
                    continue
                out.append(
                    _unit(
                        f"{cid}/{fid}",
                        "fact",
                        cid,
                        text,
                        claim["path"],
                        line,
                        col,
                        "",
                        claim["source_url"],
                        claim["anchor"],
                    )
                )
    return out


def _unit(
    uid: str,
    kind: str,
    claim_id: str,
    text: str,
    path: str,
    line: int,
    col: int,
    language: str,
    source_url: str,
    anchor: str,
) -> Unit:
    norm = textnorm.normalise(text)
    import hashlib

    key = hashlib.sha256(norm.encode("utf-8")).hexdigest()
    return Unit(uid, kind, claim_id, text, path, line, col, language, source_url, anchor, norm, key)


# --------------------------------------------------------------------------- explanations

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NAME = re.compile(r"\b[^\W\d_][\w'’-]*", re.UNICODE)
_MONTHS = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
    "сентября", "октября", "ноября", "декабря",
}  # fmt: skip
_NOT_NAMES = {
    "what", "who", "when", "where", "why", "how", "which", "is", "are", "was", "were", "did", "does", "do",
    "the", "a", "an", "in", "on", "of", "and", "or", "to", "it", "has", "have", "had", "can", "could",
    "would", "should", "according", "describe", "explain", "tell", "give", "name", "list",
    "что", "кто", "как", "когда", "где", "почему", "какой", "какие", "правда", "ли", "в", "и",
}  # fmt: skip


@functools.lru_cache(maxsize=65536)
def terms(text: str) -> frozenset[str]:
    """Numbers, month names and capitalised names of a text, casefolded, for 'what they share'."""
    found = {m.group(0) for m in _NUMBER.finditer(text)}
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for i, m in enumerate(_NAME.finditer(sentence)):
            word = m.group(0).rstrip("'’-")
            low = word.casefold()
            if low in _MONTHS or (word[0].isupper() and low not in _NOT_NAMES and (i > 0 or len(word) > 1)):
                found.add(low)
    return frozenset(found)


def shared_terms(a: str, b: str) -> list[str]:
    return sorted(terms(a) & terms(b), key=lambda t: (not t[0].isdigit(), t))


@functools.lru_cache(maxsize=65536)
def _url_key(url: str) -> str:
    from propeval.checks.sources import normalise

    return normalise(url) if url else ""


def shared_source(a: Unit, b: Unit) -> str:
    if a.source_url and _url_key(a.source_url) == _url_key(b.source_url):
        if a.anchor and a.anchor.casefold() == b.anchor.casefold():
            return f"{a.source_url} (anchor: {a.anchor})"
        return a.source_url
    return ""


# --------------------------------------------------------------------------- allowlist


def load_allowlist(path: Path, root: Path) -> tuple[list[AllowEntry], list[Problem]]:
    """Entries of the allowlist file (missing file: none). Bad entries are problems, not crashes."""
    if not path.is_file():
        return [], []
    try:
        doc = load_file(path, root=root)
    except LoadError as e:
        return [], [e.problem]
    entries: list[AllowEntry] = []
    problems: list[Problem] = []
    pairs = doc.data.get("pairs")
    unknown = sorted(set(doc.data) - {"pairs"})
    if unknown:
        problems.append(
            doc.problem(f"/{unknown[0]}", "dedup-allowlist", f"unknown key {unknown[0]!r}; keep only 'pairs'", key=True)
        )
    if pairs is None:
        return entries, problems
    if not isinstance(pairs, list):
        problems.append(doc.problem("/pairs", "dedup-allowlist", "'pairs' must be a list of reviewed pairs"))
        return entries, problems
    for n, raw in enumerate(pairs):
        ptr = f"/pairs/{n}"
        if not isinstance(raw, dict):
            problems.append(
                doc.problem(ptr, "dedup-allowlist", "each entry must be a mapping with " + ", ".join(ALLOWLIST_FIELDS))
            )
            continue
        missing = [k for k in ALLOWLIST_FIELDS if not isinstance(raw.get(k), str) or not raw.get(k, "").strip()]
        extra = sorted(set(raw) - set(ALLOWLIST_FIELDS))
        if missing or extra:
            what = []
            if missing:
                what.append(f"missing or empty: {', '.join(missing)}")
            if extra:
                what.append(f"unknown: {', '.join(extra)}")
            problems.append(
                doc.problem(
                    ptr,
                    "dedup-allowlist",
                    f"allowlist entry {'; '.join(what)}; write entries with `propeval dedup allow A B --reason ...`",
                )
            )
            continue
        line, _ = doc.locate(ptr)
        entries.append(AllowEntry(**{k: str(raw[k]) for k in ALLOWLIST_FIELDS}, line=line))
    return entries, problems


def _pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def add_allow_entry(
    config: Config, a: str, b: str, *, reason: str, reviewer: str, date: str | None = None
) -> tuple[Path, AllowEntry, bool]:
    """Write (or refresh) the allowlist entry for ``a`` and ``b`` with their current text hashes.

    The file is edited round-trip (comments and order kept) and replaced atomically.
    Returns (path, entry, replaced_an_existing_entry).
    """
    from ruamel.yaml import YAML

    from propeval.fsutil import atomic_write

    settings = Settings.from_config(config)
    if a == b:
        raise UsageError("a pair needs two different ids")
    if not reason.strip():
        raise UsageError("--reason must say why the pair is kept")
    units = {u.id: u for u in load_units(config, settings, facts=True)[0]}
    for uid in (a, b):
        if uid not in units:
            raise UsageError(f"{uid!r} is neither an active item id nor a fact id like c0001/f1")
    ua, ub = units[a], units[b]
    if ua.claim_id == ub.claim_id:
        raise UsageError(f"{a} and {b} belong to the same claim {ua.claim_id}; such pairs are never flagged")
    path = config.root / settings.allowlist
    _, problems = load_allowlist(path, config.root)
    if problems:
        p = problems[0]
        raise UsageError(f"{p.path}:{p.line}:{p.col} {p.message}; fix the allowlist first")
    first, second = sorted((ua, ub), key=lambda u: u.id)
    entry = AllowEntry(
        a=first.id,
        a_hash=first.hash,
        b=second.id,
        b_hash=second.hash,
        reviewer=reviewer,
        reason=reason.strip(),
        date=date or _dt.date.today().isoformat(),
    )
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    data = yaml.load(path.read_text(encoding="utf-8")) if path.is_file() else None
    if data is None:
        from ruamel.yaml.comments import CommentedMap

        data = CommentedMap()
        data.yaml_set_start_comment(
            "Near-duplicate pairs reviewed and kept. Written by `propeval dedup allow A B --reason ...`.\n"
            "An entry stops applying when either text changes (its hash no longer matches)."
        )
    if data.get("pairs") is None:
        data["pairs"] = []
    replaced = False
    record = {k: getattr(entry, k) for k in ALLOWLIST_FIELDS}
    for n, old in enumerate(data["pairs"]):
        if _pair_key(str(old.get("a")), str(old.get("b"))) == (first.id, second.id):
            data["pairs"][n] = record
            replaced = True
            break
    else:
        data["pairs"].append(record)
    import io

    buf = io.StringIO()
    yaml.dump(data, buf)
    atomic_write(path, buf.getvalue())
    return path, entry, replaced


# --------------------------------------------------------------------------- the run


@dataclass
class Options:
    changed_since: str | None = None
    passes: tuple[str, ...] = PASSES


Progress = Callable[[int], None]


def find_duplicates(
    config: Config,
    options: Options | None = None,
    *,
    encoder: Any = None,
    progress_factory: Callable[[int], Progress | None] | None = None,
    announce: Callable[[str], None] | None = None,
) -> DedupResult:
    """Run the passes over the corpus and explain every flagged pair.

    Args:
        config: the corpus configuration (``[tool.propeval.dedup]`` is read from it).
        options: ``changed_since`` limits pairs to those touching a claim or item changed since
            the merge base with that ref; ``passes`` picks passes.
        encoder: an :class:`propeval.embed.Encoder`; default: the configured model.
        progress_factory: called with the number of texts to embed; returns a per-batch callback.
        announce: told about slow one-off work as it starts (the model's ONNX export).
    """
    options = options or Options()
    settings = Settings.from_config(config)
    result = DedupResult(settings=settings)
    units, problems = load_units(config, settings, facts=settings.compare_facts)
    result.problems.extend(problems)
    result.units = len(units)

    focus: set[int] | None = None
    if options.changed_since is not None:
        base = gitutil.merge_base(config.root, options.changed_since)
        changed = set(gitutil.changed_paths(config.root, base))
        if settings.allowlist in changed:
            result.notes.append(f"{settings.allowlist} changed since {options.changed_since}")
        focus = {i for i, u in enumerate(units) if u.path in changed}
        result.notes.append(f"{len(focus)} text(s) changed since {options.changed_since}, compared with the corpus")

    flagged: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    if "exact" in options.passes:
        for i, j in _exact_pairs(units, focus):
            flagged[(i, j)]["exact"] = 1.0

    vectors: np.ndarray | None = None
    langs = settings.languages()
    sem = [i for i, u in enumerate(units) if u.kind == "fact" or not langs or u.language.split("-")[0].lower() in langs]
    sem_units = [units[i] for i in sem]
    neighbour_pairs: set[tuple[int, int]] = set()
    knn_rank: dict[tuple[int, int], int] = {}  # (query row, neighbour row) -> 1-based rank
    sem_focus = [n for n, i in enumerate(sem) if focus is None or i in focus]
    if ("semantic" in options.passes or "lexical" in options.passes) and sem_focus:
        vectors = embed_units(
            sem_units,
            settings,
            config.root,
            result,
            encoder=encoder,
            progress_factory=progress_factory,
            announce=announce,
        )
        from propeval.embed.index import IndexSettings, neighbours

        idx_settings = IndexSettings(
            settings.exact_index_below,
            settings.hnsw_m,
            ef_search=settings.ef_search,
            approximate=settings.approximate_index,
            ivf_nprobe=settings.ivf_nprobe,
        )
        # Ask for extra neighbours: same-claim ones are dropped afterwards.
        k = settings.neighbours + max(len(v) for v in _by_claim(sem_units).values())
        scores, ids = neighbours(vectors, vectors[sem_focus], k, idx_settings)
        for row, qn in enumerate(sem_focus):
            kept = 0
            for s_, jn in zip(scores[row], ids[row], strict=True):
                if jn < 0 or jn == qn or not _comparable(sem_units[qn], sem_units[int(jn)]):
                    continue
                kept += 1
                if kept > settings.neighbours:
                    break
                knn_rank[(qn, int(jn))] = kept
                qi, j = sem[qn], sem[int(jn)]
                pair = (min(qi, j), max(qi, j))
                neighbour_pairs.add(pair)
                q_unit, n_unit = sem_units[qn], sem_units[int(jn)]
                limit = settings.semantic_limit(_lang(q_unit) == _lang(n_unit), q_unit.kind)
                if "semantic" in options.passes and s_ >= limit:
                    flagged[pair]["semantic"] = float(s_)
    row_of = {i: n for n, i in enumerate(sem)}
    codes = _claim_codes(sem_units)

    lexical_scores: dict[tuple[int, int], float] = {}
    if "lexical" in options.passes:
        from rapidfuzz import fuzz

        candidates = _bigram_candidates(units, focus, settings.max_bigram_df) | neighbour_pairs
        for i, j in candidates:
            score = fuzz.token_sort_ratio(units[i].norm, units[j].norm) / 100.0
            lexical_scores[(i, j)] = score
            if score >= settings.lexical_threshold:
                flagged[(i, j)]["lexical"] = score

    entries, allow_problems = load_allowlist(config.root / settings.allowlist, config.root)
    result.problems.extend(allow_problems)
    allow = {_pair_key(e.a, e.b): e for e in entries}
    by_id = {u.id: u for u in units}
    index_of = {u.id: n for n, u in enumerate(units)}

    for (i, j), passes in sorted(flagged.items(), key=lambda kv: (units[kv[0][0]].id, units[kv[0][1]].id)):
        a, b = sorted((units[i], units[j]), key=lambda u: u.id)
        ia, ib = (i, j) if a is units[i] else (j, i)
        flag = Pair(a=a, b=b, scores={p: passes[p] for p in PASSES if p in passes})
        if vectors is not None and ia in row_of and ib in row_of:
            ra, rb = row_of[ia], row_of[ib]
            flag.semantic = float(vectors[ra] @ vectors[rb])
            flag.rank_a = knn_rank.get((ra, rb)) or _rank(vectors, sem_units, ra, rb, codes)
            flag.rank_b = knn_rank.get((rb, ra)) or _rank(vectors, sem_units, rb, ra, codes)
        if "lexical" in options.passes:
            from rapidfuzz import fuzz

            flag.lexical = lexical_scores.get((min(i, j), max(i, j)), fuzz.token_sort_ratio(a.norm, b.norm) / 100.0)
        flag.shared_terms = shared_terms(a.text, b.text)
        flag.shared_source = shared_source(a, b)
        entry = allow.get((a.id, b.id))
        if entry is not None and entry.a_hash == a.hash and entry.b_hash == b.hash:
            flag.allowed = entry
        result.pairs.append(flag)

    # Entries that no longer apply: a text changed, or an id is gone.
    allow_path = settings.allowlist
    for key, e in allow.items():
        if focus is not None and not any(uid in index_of and index_of[uid] in focus for uid in key):
            continue
        changed_ids = [uid for uid, h in ((e.a, e.a_hash), (e.b, e.b_hash)) if uid in by_id and by_id[uid].hash != h]
        gone = [uid for uid in key if uid not in by_id]
        if changed_ids or gone:
            why = []
            if changed_ids:
                why.append(f"the text of {' and '.join(changed_ids)} changed since the review on {e.date}")
            if gone:
                why.append(f"{' and '.join(gone)} is no longer an active item or fact")
            result.problems.append(
                Problem(
                    allow_path,
                    e.line,
                    1,
                    "dedup-stale-review",
                    f"the review of {e.a} / {e.b} no longer applies: {'; '.join(why)}; review the pair again "
                    f"and run `propeval dedup allow {e.a} {e.b} --reason ...`, or delete the entry",
                    severity=Severity.WARNING,
                )
            )

    for name in PASSES:
        result.counts[name] = sum(name in p.scores for p in result.pairs)
    result.clusters = clusters((p.a.id, p.b.id) for p in result.unreviewed)
    return result


def _lang(u: Unit) -> str:
    return u.language.split("-")[0].lower()


def _comparable(a: Unit, b: Unit) -> bool:
    return a.kind == b.kind and a.claim_id != b.claim_id


def _by_claim(units: Sequence[Unit]) -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        out[(u.kind, u.claim_id)].append(i)
    return out


def _exact_pairs(units: Sequence[Unit], focus: set[int] | None) -> Iterable[tuple[int, int]]:
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        groups[(u.kind, u.key)].append(i)
    for members in groups.values():
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                if _comparable(units[i], units[j]) and (focus is None or i in focus or j in focus):
                    yield (i, j)


def _bigram_candidates(units: Sequence[Unit], focus: set[int] | None, max_df: int) -> set[tuple[int, int]]:
    """Pairs that share a word bigram used by at most ``max_df`` texts (blocking for rapidfuzz)."""
    postings: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, u in enumerate(units):
        words = re.findall(r"\w+", u.norm)
        for bg in {(u.kind, words[n], words[n + 1]) for n in range(len(words) - 1)}:
            postings[bg].append(i)
    out: set[tuple[int, int]] = set()
    for members in postings.values():
        if len(members) < 2 or len(members) > max_df:
            continue
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                if _comparable(units[i], units[j]) and (focus is None or i in focus or j in focus):
                    out.add((i, j))
    return out


def _claim_codes(units: Sequence[Unit]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of each unit's kind and claim, for vectorised comparability masks."""
    kinds: dict[str, int] = {}
    claims: dict[str, int] = {}
    k = np.array([kinds.setdefault(u.kind, len(kinds)) for u in units], dtype=np.int32)
    c = np.array([claims.setdefault(u.claim_id, len(claims)) for u in units], dtype=np.int32)
    return k, c


def _rank(vectors: np.ndarray, units: Sequence[Unit], q: int, other: int, codes: tuple[np.ndarray, np.ndarray]) -> int:
    """1-based rank of ``other`` among ``q``'s neighbours from other claims (same kind)."""
    kind, claim = codes
    sims = vectors @ vectors[q]
    comparable = (kind == kind[q]) & (claim != claim[q])
    return int(np.count_nonzero((sims > sims[other]) & comparable)) + 1


def clusters(pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Connected components of the pair graph, each sorted, largest first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = defaultdict(list)
    for x in parent:
        groups[find(x)].append(x)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))


# --------------------------------------------------------------------------- embeddings


def embed_units(
    units: Sequence[Unit],
    settings: Settings,
    root: Path,
    result: DedupResult,
    *,
    encoder: Any = None,
    progress_factory: Callable[[int], Progress | None] | None = None,
    announce: Callable[[str], None] | None = None,
) -> np.ndarray:
    """Vectors for ``units`` (one row each), from the cache where present; the rest are encoded
    and stored. Adds truncation warnings to ``result``."""
    from propeval.embed.cache import EmbeddingCache

    folder = settings.cache_folder(root)
    if encoder is None:
        encoder = settings.encoder(root, announce=announce)
    cache = EmbeddingCache(folder, encoder.fingerprint)
    cache.load()
    keys = [u.key.encode("ascii") for u in units]
    rows = cache.rows(keys)
    missing_keys: list[bytes] = []
    missing_texts: list[str] = []
    seen: set[bytes] = set()
    for k, r, u in zip(keys, rows, units, strict=True):
        if r is None and k not in seen:
            seen.add(k)
            missing_keys.append(k)
            missing_texts.append(u.norm)
    if missing_texts:
        if progress_factory is not None and hasattr(encoder, "progress"):
            encoder.progress = progress_factory(len(missing_texts))
        vecs = np.asarray(encoder.encode(missing_texts), dtype=np.float32)
        for note in getattr(encoder, "notes", ()):
            result.problems.append(Problem("pyproject.toml", 0, 0, "dedup-encoder", note, severity=Severity.WARNING))
        ntok = encoder.token_counts(missing_texts)
        cache.add(missing_keys, vecs, ntok)
        result.encoded = len(missing_texts)
        if cache.vectors is None or cache.rows(missing_keys)[0] is None:
            # The cache could not be written: keep this run's vectors in memory.
            fresh = dict(zip(missing_keys, vecs, strict=True))
            fresh_tok = dict(zip(missing_keys, ntok, strict=True))
        else:
            fresh, fresh_tok = {}, {}
    else:
        fresh, fresh_tok = {}, {}
    for w in cache.warnings:
        result.problems.append(Problem(str(cache.path), 0, 0, "dedup-cache", w, severity=Severity.WARNING))
    rows = cache.rows(keys)
    dim = cache.dim or (next(iter(fresh.values())).shape[0] if fresh else 0)
    out = np.zeros((len(units), dim), dtype=np.float32)
    cached_tok: list[int] = []
    for n, (k, r) in enumerate(zip(keys, rows, strict=True)):
        if r is not None and cache.vectors is not None and cache.ntok is not None:
            out[n] = cache.vectors[r]
            cached_tok.append(int(cache.ntok[r]))
        else:
            out[n] = fresh[k]
            cached_tok.append(int(fresh_tok[k]))
    limit = encoder.max_seq_length
    for u, n in zip(units, cached_tok, strict=True):
        if n > limit:
            result.problems.append(
                Problem(
                    u.path,
                    u.line,
                    u.col,
                    "dedup-truncated",
                    f"{u.id} is {n} tokens long, over the embedding model's max_seq_length {limit}: the model "
                    "reads only the start, so duplicates beyond it go unseen; shorten the text",
                    severity=Severity.WARNING,
                )
            )
    return out


# --------------------------------------------------------------------------- problems


def pair_scores(pair: Any) -> str:
    """The scores of a flagged pair, with the passes it stayed below in brackets."""
    parts = [f"{name} {score:.3f}" for name, score in pair.scores.items()]
    extra = []
    if "semantic" not in pair.scores and pair.semantic is not None:
        extra.append(f"semantic {pair.semantic:.3f}")
    if "lexical" not in pair.scores and pair.lexical is not None:
        extra.append(f"lexical {pair.lexical:.3f}")
    text = ", ".join(parts)
    if extra:
        text += f" (below threshold: {', '.join(extra)})"
    return text


def pair_rule(pair: Any) -> str:
    """The rule id of a flagged pair: ``dedup-`` and the first pass that flagged it."""
    return "dedup-" + next(iter(pair.scores))


def pair_problem(pair: Any) -> Problem:
    """A flagged pair as a Problem on the second text, as `dedup`, `ci` and `run` all report it."""
    a, b = pair.a, pair.b
    what = "facts" if a.kind == "fact" else "prompts"
    rank = f"; rank {pair.rank_b} among {b.id}'s neighbours, {pair.rank_a} among {a.id}'s" if pair.rank_a else ""
    shared = f"; shared: {', '.join(pair.shared_terms)}" if pair.shared_terms else ""
    source = f"; same source {pair.shared_source}" if pair.shared_source else ""
    return Problem(
        b.path,
        b.line,
        b.col,
        pair_rule(pair),
        f"{b.id} ({b.claim_id}) and {a.id} ({a.claim_id}, {a.path}:{a.line}) are near-duplicate {what}: "
        f"{pair_scores(pair)}{rank}{shared}{source}; retire or rewrite one, or if both belong, "
        f"review and run `propeval dedup allow {a.id} {b.id} --reason ...`",
        severity=Severity.ERROR,
    )
