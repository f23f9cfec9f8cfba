"""Release export, dataset card and corpus statistics.

``export_release`` writes a release folder that is reproducible byte for byte from the repository:

    items.jsonl        one row per active item, in the Censorship & Propaganda Eval release format
                       plus our own fields (language, framing, claim_id, fact_ids, difficulty_band, ...)
    tombstones.jsonl   one row per retired item: id, claim_id, retired_reason
    rubrics/<name>/    the judge rubrics, copied as they are
    README.md          a dataset card with Hugging Face YAML front matter and generated tables
    SHA256SUMS         the sha256 of every other file, in ``sha256sum -c`` format

Nothing in it depends on the clock: rows are sorted by id, JSON keys are sorted, and the only
provenance is the git commit the corpus was read at. The folder is built next to its destination
and renamed into place, so a reader never sees half a release.

The optional inputs (``ledger/difficulty.json``, the dedup report, ``ledger/judge/*.json``) are
written by other commands. Each is read defensively: a missing file means "not run", and a file
that cannot be understood becomes a warning, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import CATEGORIES, Corpus, Item, load_corpus
from propeval.errors import GitError, UsageError
from propeval.filetypes import scan
from propeval.langtags import language_key
from propeval.loader import LoadError, load_file
from propeval.result import Problem, Severity
from propeval.settings import ReleaseSettings
from propeval.textnorm import normalise_url

__all__ = [
    "BANDS",
    "FRAMINGS",
    "QUESTION_DESCRIPTIONS",
    "ExportResult",
    "ReleaseInputs",
    "ReleaseSettings",
    "Stats",
    "compute_stats",
    "export_release",
    "item_row",
    "load_inputs",
    "render_card",
]

QUESTION_DESCRIPTIONS = {
    "named_fact": "named fact",
    "frame_testing": "frame testing",
    "closed_exit": "closed exit",
}
FRAMINGS = ("neutral", "loaded")
BANDS = ("easy", "medium", "hard")
UNBANDED = "unbanded"
SUMS_FILE = "SHA256SUMS"
RELEASE_FILES = ("README.md", "items.jsonl", "tombstones.jsonl", SUMS_FILE)

# Numbers worth showing from a judge-gate record, wherever they sit in it.
_AGREEMENT_KEYS = (
    "kappa",
    "cohen_kappa",
    "weighted_kappa",
    "alpha",
    "krippendorff_alpha",
    "f1",
    "positive_f1",
    "macro_f1",
    "accuracy",
    "agreement",
    "percent_agreement",
)


# --------------------------------------------------------------------------- settings and inputs


@dataclass
class DedupReport:
    path: str
    passes: list[dict[str, Any]]
    similarities: list[float]
    thresholds: dict[str, float]


@dataclass
class JudgeRecord:
    rubric: str
    path: str
    status: str | None
    n: int | None
    metrics: dict[str, float]
    # name -> (labels, matrix); rows are the human labels, columns the judge's
    confusions: dict[str, tuple[list[str], list[list[int]]]]


@dataclass
class ReleaseInputs:
    """The corpus plus every optional ledger input, read once."""

    config: Config
    settings: ReleaseSettings
    corpus: Corpus
    categories: tuple[str, ...]
    bands: dict[str, str | None]
    difficulty_present: bool
    difficulty_stale: int
    dedup: DedupReport | None
    judge: list[JudgeRecord]
    git: dict[str, Any] | None
    warnings: list[Problem] = field(default_factory=list)


def _warn(path: str, message: str) -> Problem:
    return Problem(path, 0, 0, "release-input", message, severity=Severity.WARNING)


def _load_optional(path: Path, root: Path, warnings: list[Problem]) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return load_file(path, root=root).data
    except LoadError as e:
        p = e.problem
        warnings.append(
            Problem(p.path, p.line, p.col, "release-input", f"{p.message} (ignored)", severity=Severity.WARNING)
        )
        return None


def _read_bands(
    corpus: Corpus, data: dict[str, Any] | None, rel: str, warnings: list[Problem]
) -> tuple[dict[str, str | None], int]:
    bands: dict[str, str | None] = {i: None for i in corpus.items}
    if data is None:
        return bands, 0
    entries = data.get("items")
    if not isinstance(entries, dict):
        warnings.append(_warn(rel, "has no 'items' mapping of item id -> {band, item_hash}; bands left empty"))
        return bands, 0
    stale = 0
    for item_id, entry in entries.items():
        item = corpus.items.get(item_id)
        if item is None or not isinstance(entry, dict):
            continue
        band = entry.get("band")
        if band not in BANDS:
            continue
        if entry.get("item_hash") != item.hash:
            stale += 1  # the item changed since its difficulty was measured
            continue
        bands[item_id] = band
    return bands, stale


def _floats(values: Any) -> list[float]:
    out = []
    for v in values if isinstance(values, list) else []:
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            out.append(float(v))
        elif isinstance(v, dict):
            for key in ("similarity", "score", "cosine", "sim"):
                x = v.get(key)
                if isinstance(x, (int, float)) and not isinstance(x, bool):
                    out.append(float(x))
                    break
    return out


def _read_dedup(data: dict[str, Any] | None, rel: str) -> DedupReport | None:
    if data is None:
        return None
    passes = (
        [p for p in data.get("passes") or [] if isinstance(p, dict)] if isinstance(data.get("passes"), list) else []
    )
    similarities = _floats(data.get("similarities")) or _floats(data.get("pairs"))
    thresholds: dict[str, float] = {}
    raw = data.get("thresholds")
    if isinstance(raw, dict):
        thresholds = {
            str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
    elif isinstance(data.get("threshold"), (int, float)):
        thresholds = {"threshold": float(data["threshold"])}
    for i, p in enumerate(passes, start=1):
        t = p.get("threshold")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            thresholds.setdefault(str(p.get("name") or p.get("pass") or f"pass {i}"), float(t))
    return DedupReport(rel, passes, similarities, thresholds)


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, dict):
        for k in sorted(node):
            yield path, str(k), node[k]
            yield from _walk(node[k], f"{path}.{k}" if path else str(k))


def _confusion(value: Any) -> tuple[list[str], list[list[int]]] | None:
    if isinstance(value, dict) and isinstance(value.get("labels"), list) and isinstance(value.get("matrix"), list):
        labels = [str(x) for x in value["labels"]]
        rows = value["matrix"]
        if len(rows) == len(labels) and all(
            isinstance(r, list) and len(r) == len(labels) and all(isinstance(c, int) for c in r) for r in rows
        ):
            return labels, [list(r) for r in rows]
        return None
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        labels = sorted({str(k) for k in value} | {str(k) for v in value.values() for k in v})
        try:
            matrix = [[int(value.get(h, {}).get(j, 0)) for j in labels] for h in labels]
        except (TypeError, ValueError):
            return None
        return labels, matrix
    return None


def _read_judge(path: Path, rel: str, data: dict[str, Any]) -> JudgeRecord:
    metrics: dict[str, float] = {}
    confusions: dict[str, tuple[list[str], list[list[int]]]] = {}
    for parent, key, value in _walk(data):
        name = f"{parent}.{key}" if parent else key
        if key.lower() in _AGREEMENT_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics[name] = float(value)
        elif "confusion" in key.lower():
            found = _confusion(value)
            if found is not None:
                confusions[parent or path.stem] = found
    status = data.get("status")
    if status is None and isinstance(data.get("passed"), bool):
        status = "passed" if data["passed"] else "failed"
    n = data.get("n") if isinstance(data.get("n"), int) else None
    rubric = data.get("rubric") if isinstance(data.get("rubric"), str) else path.stem
    return JudgeRecord(str(rubric), rel, str(status) if status is not None else None, n, metrics, confusions)


def _categories(config: Config) -> tuple[str, ...]:
    try:
        schema = load_file(config.schema_path, root=config.schema_root).data
        enum = schema["$defs"]["category"]["enum"]
        if isinstance(enum, list) and all(isinstance(c, str) for c in enum):
            return tuple(enum)
    except (LoadError, KeyError, TypeError):
        pass
    return CATEGORIES


def _git_info(config: Config, settings: ReleaseSettings) -> dict[str, Any] | None:
    try:
        head = gitutil.head_commit(config.root)
        if head is None:
            return None
        dirty = gitutil.is_dirty(config.root, [config.questions_dir, settings.rubrics_dir, "ledger"])
    except GitError:
        return None
    return {"commit": head[0], "date": head[1], "dirty": dirty}


def load_inputs(
    config: Config, settings: ReleaseSettings | None = None, *, corpus: Corpus | None = None
) -> ReleaseInputs:
    """Load the corpus and the optional ledger inputs; unreadable optional inputs become warnings."""
    settings = settings or ReleaseSettings.from_config(config)
    corpus = corpus if corpus is not None else load_corpus(config)
    root = config.root
    warnings: list[Problem] = []
    diff_path = root / settings.difficulty_ledger
    diff_data = _load_optional(diff_path, root, warnings)
    bands, stale = _read_bands(corpus, diff_data, settings.difficulty_ledger, warnings)
    dedup = _read_dedup(_load_optional(root / settings.dedup_report, root, warnings), settings.dedup_report)
    judge = []
    judge_dir = root / settings.judge_ledger
    if judge_dir.is_dir():
        for path in sorted(judge_dir.glob("*.json")):
            data = _load_optional(path, root, warnings)
            if data is not None:
                judge.append(_read_judge(path, f"{settings.judge_ledger}/{path.name}", data))
    return ReleaseInputs(
        config=config,
        settings=settings,
        corpus=corpus,
        categories=_categories(config),
        bands=bands,
        difficulty_present=diff_data is not None,
        difficulty_stale=stale,
        dedup=dedup,
        judge=judge,
        git=_git_info(config, settings),
        warnings=warnings,
    )


# --------------------------------------------------------------------------- rows


def _active(corpus: Corpus) -> list[Item]:
    """Active items whose claim exists, sorted by id."""
    return sorted((i for i in corpus.active_items() if i.claim_id in corpus.claims), key=lambda i: i.id)


def item_row(inputs: ReleaseInputs, item: Item) -> dict[str, Any]:
    """One ``items.jsonl`` row: the CPE release fields, then ours."""
    claim = inputs.corpus.claims[item.claim_id]
    c = claim.data
    facts = claim.facts
    return {
        # Censorship & Propaganda Eval release format
        "id": item.id,
        "prompt": item.prompt,
        "required_facts": [f.text for f in facts],
        "question_description": QUESTION_DESCRIPTIONS.get(item.question_type, item.question_type),
        "categories": [str(x) for x in c.get("categories") or []],
        "source_url": claim.source_url,
        "source_date": str(c["source_date"]) if c.get("source_date") is not None else None,
        "anchor": str(c.get("anchor", "")),
        "official_frame_markers": [text for _, text in claim.markers],
        # propeval's own fields
        "language": item.language,
        "framing": item.framing,
        "question_type": item.question_type,
        "claim_id": item.claim_id,
        "claim_kind": claim.kind,
        "fact_ids": [f.id for f in facts],
        "frame_markers": [{"language": lang, "text": text} for lang, text in claim.markers],
        "translation_of": item.translation_of,
        "narrative": str(c["narrative"]) if c.get("narrative") is not None else None,
        "actor": str(c["actor"]) if c.get("actor") is not None else None,
        "difficulty_band": inputs.bands.get(item.id),
        "item_hash": item.hash,
        "claim_hash": claim.hash,
    }


def _jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)


def tombstone_rows(corpus: Corpus) -> list[dict[str, Any]]:
    retired = sorted((i for i in corpus.items.values() if i.status == "retired"), key=lambda i: i.id)
    return [
        {"id": i.id, "claim_id": i.claim_id, "retired_reason": str(i.data.get("retired_reason", ""))} for i in retired
    ]


# --------------------------------------------------------------------------- stats


@dataclass
class Stats:
    """The numbers a release describes itself with. ``to_dict`` is the ``stats --format json`` document."""

    items: int
    retired: int
    claims: int
    by_question_type: dict[str, int]
    by_category: dict[str, int]
    by_language: dict[str, int]
    by_framing: dict[str, int]
    by_band: dict[str, int]
    difficulty: dict[str, Any]
    sources: dict[str, Any]
    source_dates: dict[str, Any]
    dedup: dict[str, Any]
    judge: list[dict[str, Any]]
    coverage: dict[str, int]  # "category|language" -> items
    gaps: dict[str, Any]
    provenance: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "retired": self.retired,
            "claims": self.claims,
            "by_question_type": self.by_question_type,
            "by_category": self.by_category,
            "by_language": self.by_language,
            "by_framing": self.by_framing,
            "by_band": self.by_band,
            "difficulty": self.difficulty,
            "sources": self.sources,
            "source_dates": self.source_dates,
            "dedup": self.dedup,
            "judge": self.judge,
            "coverage": {
                "categories": sorted({k.split("|")[0] for k in self.coverage}),
                "cells": [
                    {"category": k.split("|")[0], "language": k.split("|")[1], "items": v}
                    for k, v in sorted(self.coverage.items())
                ],
            },
            "gaps": self.gaps,
            "provenance": self.provenance,
        }


def _ordered(counter: Counter[str], order: Sequence[str] = ()) -> dict[str, int]:
    """Known keys in their fixed order (zeros included), then the rest by name."""
    out = {k: counter.get(k, 0) for k in order}
    for k in sorted(counter):
        if k not in out:
            out[k] = counter[k]
    return out


def _domain(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host.removeprefix("www.")


def compute_stats(inputs: ReleaseInputs) -> Stats:
    """Counts, sources, dates, coverage gaps, dedup and judge summaries of the active items."""
    corpus = inputs.corpus
    active = _active(corpus)
    qtype: Counter[str] = Counter()
    cats: Counter[str] = Counter()
    langs: Counter[str] = Counter()
    framings: Counter[str] = Counter()
    bands: Counter[str] = Counter()
    urls: Counter[str] = Counter()
    domains: Counter[str] = Counter()
    years: Counter[str] = Counter()
    cells: Counter[str] = Counter()
    dates: list[str] = []
    undated = 0
    claim_framings: dict[str, set[str]] = {}
    for item in active:
        claim = corpus.claims[item.claim_id]
        qtype[item.question_type] += 1
        langs[language_key(item.language)] += 1
        framings[item.framing] += 1
        bands[inputs.bands.get(item.id) or UNBANDED] += 1
        for cat in claim.data.get("categories") or []:
            cats[str(cat)] += 1
            cells[f"{cat}|{language_key(item.language)}"] += 1
        if claim.source_url:
            urls[normalise_url(claim.source_url)] += 1
            domains[_domain(claim.source_url)] += 1
        date = claim.data.get("source_date")
        if date:
            dates.append(str(date))
            years[str(date)[:4]] += 1
        else:
            undated += 1
        claim_framings.setdefault(item.claim_id, set()).add(item.framing)

    languages = sorted(langs)
    gaps_cells = [
        {"category": cat, "language": lang}
        for cat in inputs.categories
        for lang in languages
        if cells.get(f"{cat}|{lang}", 0) == 0
    ]
    missing_framing = [
        {"claim_id": cid, "missing": [f for f in FRAMINGS if f not in have]}
        for cid, have in sorted(claim_framings.items())
        if any(f not in have for f in FRAMINGS)
    ]
    top_url = min(urls.items(), key=lambda kv: (-kv[1], kv[0])) if urls else None
    dedup: dict[str, Any]
    if inputs.dedup is None:
        dedup = {"status": "not run", "report": None, "passes": [], "thresholds": {}, "pairs": 0}
    else:
        dedup = {
            "status": "run",
            "report": inputs.dedup.path,
            "passes": inputs.dedup.passes,
            "thresholds": dict(sorted(inputs.dedup.thresholds.items())),
            "pairs": len(inputs.dedup.similarities),
        }
    banded = sum(1 for i in active if inputs.bands.get(i.id))
    return Stats(
        items=len(active),
        retired=sum(1 for i in corpus.items.values() if i.status == "retired"),
        claims=len(claim_framings),
        by_question_type=_ordered(qtype, tuple(QUESTION_DESCRIPTIONS)),
        by_category=_ordered(cats, inputs.categories),
        by_language=_ordered(langs),
        by_framing=_ordered(framings, FRAMINGS),
        by_band=_ordered(bands, (*BANDS, UNBANDED)),
        difficulty={
            "ledger": inputs.settings.difficulty_ledger if inputs.difficulty_present else None,
            "banded": banded,
            "stale": inputs.difficulty_stale,
        },
        sources={
            "distinct_urls": len(urls),
            "distinct_domains": len(domains),
            "max_items_per_url": {"url": top_url[0], "items": top_url[1]} if top_url else None,
            "top_domains": [
                {"domain": d, "items": n} for d, n in sorted(domains.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
            ],
        },
        source_dates={
            "dated": len(dates),
            "undated": undated,
            "earliest": min(dates) if dates else None,
            "latest": max(dates) if dates else None,
            "by_year": dict(sorted(years.items())),
        },
        dedup=dedup,
        judge=[
            {
                "rubric": j.rubric,
                "ledger": j.path,
                "status": j.status,
                "n": j.n,
                "metrics": dict(sorted(j.metrics.items())),
                "confusions": sorted(j.confusions),
            }
            for j in inputs.judge
        ],
        coverage=dict(sorted(cells.items())),
        gaps={"category_language": gaps_cells, "claims_missing_framing": missing_framing},
        provenance=inputs.git,
    )


# --------------------------------------------------------------------------- the dataset card


def size_category(n: int) -> str:
    """The Hugging Face ``size_categories`` bucket of ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def _yaml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid YAML flow scalar


def _md(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _count_table(title: str, counts: dict[str, int], total: int) -> str:
    rows = [(k, v, _pct(v, total)) for k, v in counts.items()]
    return f"### {title}\n\n" + _table([title.split(" by ")[-1], "items", "share"], rows)


def _num(x: float) -> str:
    return f"{x:.3f}"


def render_card(inputs: ReleaseInputs, stats: Stats) -> str:
    """The dataset card: Hugging Face YAML front matter and generated tables."""
    s = inputs.settings
    hf_langs = sorted({language_key(lang) for lang in stats.by_language})
    front = ["---", f"license: {s.license}", "language:"]
    front += [f"- {lang}" for lang in hf_langs] or ["- en"]
    front += ["size_categories:", f"- {size_category(stats.items)}", "task_categories:"]
    front += [f"- {t}" for t in s.task_categories]
    front += [
        f"pretty_name: {_yaml_str(s.name)}",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: test",
        "    path: items.jsonl",
        "---",
    ]
    out = ["\n".join(front), "", f"# {s.name}", ""]
    out.append(
        "Evaluation items that test whether a language model states documented facts about topics that "
        "states censor, or repeats the official account instead. Each row of `items.jsonl` is one prompt "
        "with 2-4 required facts taken from a cited source. Retired items are listed in `tombstones.jsonl`; "
        "their ids are never reused. The judge rubrics are in `rubrics/`. `SHA256SUMS` lists every file's hash."
    )
    out.append("")
    if stats.provenance:
        p = stats.provenance
        extra = " plus uncommitted changes" if p.get("dirty") else ""
        out.append(f"Built from commit `{p['commit']}` ({p['date']}){extra} with `propeval export`.")
    else:
        out.append("Built with `propeval export` from a working tree that is not a git repository.")
    out += ["", "## Fields", ""]
    out.append(
        _table(
            ["field", "meaning"],
            [
                ("id", "stable item id"),
                ("prompt", "the question as a user would ask it"),
                ("required_facts", "the facts a correct answer states (texts)"),
                ("question_description", "named fact / frame testing / closed exit"),
                ("categories", "value areas of the claim"),
                ("source_url, source_date, anchor", "where the facts stand"),
                ("official_frame_markers", "set phrases of the official line"),
                ("language, framing, question_type", "BCP 47 tag; neutral or loaded; the question type id"),
                ("claim_id, claim_kind, fact_ids", "the claim the item asks about, and its fact ids in order"),
                ("frame_markers", "official frame markers with their language"),
                ("translation_of, narrative, actor", "source item of a translation; narrative claims' fields"),
                ("difficulty_band", "easy / medium / hard, or null when not measured for this item version"),
                ("item_hash, claim_hash", "content hashes of the item and claim files"),
            ],
        )
    )
    out += ["## Size", ""]
    out.append(
        _table(
            ["what", "count"],
            [("active items", stats.items), ("claims", stats.claims), ("retired items", stats.retired)],
        )
    )
    out += ["## Composition", ""]
    out.append(_count_table("Items by question type", stats.by_question_type, stats.items))
    out.append(_count_table("Items by category", stats.by_category, stats.items))
    out.append("An item counts once for each category of its claim.\n")
    out.append(_count_table("Items by language", stats.by_language, stats.items))
    out.append(_count_table("Items by framing", stats.by_framing, stats.items))
    out.append(_count_table("Items by band", stats.by_band, stats.items))
    d = stats.difficulty
    if d["ledger"]:
        out.append(
            f"Bands from `{d['ledger']}`: {d['banded']} item(s) banded, {d['stale']} stale entry(ies) ignored.\n"
        )
    else:
        out.append("Difficulty: not measured (no difficulty ledger).\n")
    out += ["## Sources", ""]
    src = stats.sources
    top = src["max_items_per_url"]
    rows: list[tuple[str, Any]] = [
        ("distinct source URLs", src["distinct_urls"]),
        ("distinct source domains", src["distinct_domains"]),
        ("most items from one URL", f"{top['items']} ({top['url']})" if top else "-"),
    ]
    dates = stats.source_dates
    rows += [
        ("items with a source_date", f"{dates['dated']} of {stats.items} ({_pct(dates['dated'], stats.items)})"),
        ("earliest source_date", dates["earliest"] or "-"),
        ("latest source_date", dates["latest"] or "-"),
    ]
    out.append(_table(["what", "value"], rows))
    if dates["by_year"]:
        out.append("### Items by source year\n\n" + _table(["year", "items"], list(dates["by_year"].items())))
    if src["top_domains"]:
        out.append(
            "### Top source domains\n\n"
            + _table(["domain", "items"], [(t["domain"], t["items"]) for t in src["top_domains"]])
        )
    out += ["## Curation", "", "### Dedup passes", ""]
    if stats.dedup["status"] == "not run":
        out.append("not run\n")
    else:
        passes = stats.dedup["passes"]
        if passes:
            cols = _pass_columns(passes)
            out.append(_table(cols, [[_cell(p.get(c)) for c in cols] for p in passes]))
        else:
            out.append(f"Report `{stats.dedup['report']}` lists no passes.\n")
        if stats.dedup["pairs"]:
            out.append(f"{stats.dedup['pairs']} candidate pair(s) scored.\n")
    out += ["### Judge agreement", ""]
    if not stats.judge:
        out.append("not run\n")
    else:
        rows2 = []
        for j in stats.judge:
            metrics = ", ".join(f"{k} {_num(v)}" for k, v in j["metrics"].items()) or "-"
            rows2.append((j["rubric"], j["status"] or "-", j["n"] if j["n"] is not None else "-", metrics))
        out.append(_table(["rubric", "status", "n", "agreement"], rows2))
    out += ["## Coverage gaps", ""]
    gaps = stats.gaps
    if gaps["category_language"]:
        out.append(
            "Category × language cells with no item:\n\n"
            + _table(["category", "language"], [(g["category"], g["language"]) for g in gaps["category_language"]])
        )
    else:
        out.append("Every category has an item in every language.\n")
    if gaps["claims_missing_framing"]:
        out.append(
            "Claims missing a framing:\n\n"
            + _table(
                ["claim", "missing"], [(g["claim_id"], ", ".join(g["missing"])) for g in gaps["claims_missing_framing"]]
            )
        )
    else:
        out.append("Every claim has both a neutral and a loaded item.\n")
    return "\n".join(out).rstrip("\n") + "\n"


_PASS_ORDER = ("name", "pass", "method", "threshold", "pairs", "flagged", "kept", "removed", "before", "after")


def _pass_columns(passes: Sequence[dict[str, Any]]) -> list[str]:
    keys = {k for p in passes for k, v in p.items() if not isinstance(v, (dict, list))}
    return [k for k in _PASS_ORDER if k in keys] + sorted(keys - set(_PASS_ORDER))


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return _num(v)
    return str(v)


# --------------------------------------------------------------------------- export


@dataclass
class ExportResult:
    """What ``export_release`` did, or the problems that stopped it."""

    out: Path
    problems: list[Problem]
    files: list[str] = field(default_factory=list)
    stats: Stats | None = None

    @property
    def exit_code(self) -> int:
        return 1 if any(p.severity is Severity.ERROR for p in self.problems) else 0


def _release_files(inputs: ReleaseInputs, stats: Stats) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    rows = [item_row(inputs, i) for i in _active(inputs.corpus)]
    files["items.jsonl"] = _jsonl(rows).encode("utf-8")
    files["tombstones.jsonl"] = _jsonl(tombstone_rows(inputs.corpus)).encode("utf-8")
    rubrics = inputs.config.root / inputs.settings.rubrics_dir
    found = scan(rubrics, inputs.config.root)
    if found.problems:  # `propeval check` refuses these first; never ship what it would refuse
        p = found.problems[0]
        raise UsageError(f"{p.path} [{p.rule}] {p.message}")
    for f in found.files:
        rel_parts = f.relative_to(rubrics).parts
        if len(rel_parts) > 1 and not any(part.startswith(".") for part in rel_parts):
            files["rubrics/" + "/".join(rel_parts)] = _read_regular(f, inputs.config.root)
    files["README.md"] = render_card(inputs, stats).encode("utf-8")
    sums = "".join(f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files))
    files[SUMS_FILE] = sums.encode("utf-8")
    return files


def _read_regular(path: Path, root: Path) -> bytes:
    """The bytes of a plain regular file (the same guard as the loader's)."""
    from propeval.filetypes import RefusedFileError, open_regular

    rel = path.relative_to(root).as_posix()
    try:
        fd = open_regular(path, rel, root)
    except RefusedFileError as e:
        raise UsageError(f"{rel} [{e.problem.rule}] {e.problem.message}") from None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _is_release(folder: Path) -> bool:
    return (folder / SUMS_FILE).is_file() and (folder / "items.jsonl").is_file()


def _write_tree(out: Path, files: dict[str, bytes]) -> None:
    """Build the release next to ``out`` and rename it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    old: Path | None = None
    try:
        for name, data in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for folder in sorted({p for p in tmp.rglob("*") if p.is_dir()} | {tmp}):
            folder.chmod(0o755)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rename(out, old / "release")
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and (old / "release").exists() and not out.exists():
            os.rename(old / "release", out)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def export_release(config: Config, out: Path, *, inputs: ReleaseInputs | None = None) -> ExportResult:
    """Check the corpus, then write the release to ``out`` atomically.

    ``out`` must not exist, be an empty folder, or hold an earlier release (which is replaced).
    Check errors stop the export before anything is written.
    """
    from propeval.checker import check_corpus

    out = out.resolve()
    root = config.root.resolve()
    if out == root or root.is_relative_to(out):
        raise UsageError(f"--out {out} would replace the corpus itself; choose a new folder such as dist/release")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not _is_release(out))):
        raise UsageError(
            f"--out {out} exists and is not a propeval release (no {SUMS_FILE}); choose a new or empty folder"
        )
    checked = check_corpus(config)
    if checked.errors:
        return ExportResult(out, checked.problems)
    inputs = inputs or load_inputs(config)
    stats = compute_stats(inputs)
    files = _release_files(inputs, stats)
    _write_tree(out, files)
    return ExportResult(out, [*checked.problems, *inputs.warnings], sorted(files), stats)
