"""Corpus statistics: counts, sources, dates, coverage gaps, and the dedup and judge summaries.

``Stats.to_dict`` is the ``propeval stats --format json`` document; the dataset card and the
report are drawn from the same numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from propeval.checks.sources import OFFICIAL
from propeval.difficulty.bands import BANDS
from propeval.langtags import language_key
from propeval.release.inputs import ReleaseInputs
from propeval.release.rows import FRAMINGS, QUESTION_DESCRIPTIONS, active_items
from propeval.sourceurl import unwrap
from propeval.textnorm import normalise_url

UNBANDED = "unbanded"


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
    answerability: dict[str, Any]
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
            "answerability": self.answerability,
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
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:  # not a URL urlsplit can read: no domain (check reports the URL)
        host = ""
    return host.removeprefix("www.")


@dataclass
class _Tally:
    """Counts over the active items, one pass."""

    qtype: Counter[str] = field(default_factory=Counter)
    cats: Counter[str] = field(default_factory=Counter)
    langs: Counter[str] = field(default_factory=Counter)
    framings: Counter[str] = field(default_factory=Counter)
    bands: Counter[str] = field(default_factory=Counter)
    urls: Counter[str] = field(default_factory=Counter)
    domains: Counter[str] = field(default_factory=Counter)
    years: Counter[str] = field(default_factory=Counter)
    cells: Counter[str] = field(default_factory=Counter)  # "category|language" -> items
    dates: list[str] = field(default_factory=list)
    undated: int = 0
    claim_framings: dict[str, set[str]] = field(default_factory=dict)
    # Claims (with an active item) citing an official statement's primary record (source_role), and
    # those whose source URL is an archive or mirror copy.
    official: dict[str, str] = field(default_factory=dict)  # claim id -> domain of the page judged
    archived: set[str] = field(default_factory=set)


def _tally(inputs: ReleaseInputs) -> _Tally:
    corpus = inputs.corpus
    t = _Tally()
    for item in active_items(corpus):
        claim = corpus.claims[item.claim_id]
        t.qtype[item.question_type] += 1
        t.langs[language_key(item.language)] += 1
        t.framings[item.framing] += 1
        t.bands[inputs.bands.get(item.id) or UNBANDED] += 1
        for cat in claim.data.get("categories") or []:
            t.cats[str(cat)] += 1
            t.cells[f"{cat}|{language_key(item.language)}"] += 1
        if claim.source_url:
            # An archived copy counts as the page it holds (propeval.sourceurl).
            src = unwrap(claim.source_url)
            t.urls[normalise_url(src.original)] += 1
            t.domains[_domain(src.original)] += 1
            if src.wrappers or src.opaque:
                t.archived.add(claim.id)
            if claim.data.get("source_role") == OFFICIAL:
                t.official[claim.id] = _domain(src.original)
        date = claim.data.get("source_date")
        if date:
            t.dates.append(str(date))
            t.years[str(date)[:4]] += 1
        else:
            t.undated += 1
        t.claim_framings.setdefault(item.claim_id, set()).add(item.framing)
    return t


def _gaps(t: _Tally, categories: Sequence[str]) -> dict[str, Any]:
    """Category x language cells with no item, and claims without a neutral or a loaded item."""
    languages = sorted(t.langs)
    gaps_cells = [
        {"category": cat, "language": lang}
        for cat in categories
        for lang in languages
        if t.cells.get(f"{cat}|{lang}", 0) == 0
    ]
    missing_framing = [
        {"claim_id": cid, "missing": [f for f in FRAMINGS if f not in have]}
        for cid, have in sorted(t.claim_framings.items())
        if any(f not in have for f in FRAMINGS)
    ]
    return {"category_language": gaps_cells, "claims_missing_framing": missing_framing}


def _sources(t: _Tally) -> dict[str, Any]:
    top_url = min(t.urls.items(), key=lambda kv: (-kv[1], kv[0])) if t.urls else None
    return {
        "distinct_urls": len(t.urls),
        "distinct_domains": len(t.domains),
        "max_items_per_url": {"url": top_url[0], "items": top_url[1]} if top_url else None,
        "top_domains": [
            {"domain": d, "items": n} for d, n in sorted(t.domains.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        ],
        # Claims that cite a state body's own record of its statement (source_role:
        # official_statement), each approved by a maintainer where the outlet is blocklisted.
        "official_statements": {
            "claims": len(t.official),
            "domains": dict(sorted(Counter(t.official.values()).items())),
        },
        "archived_claims": len(t.archived),
    }


def _dedup(inputs: ReleaseInputs) -> dict[str, Any]:
    return inputs.dedup.to_dict()


def _judge(inputs: ReleaseInputs) -> list[dict[str, Any]]:
    return [j.to_dict() for j in inputs.judge]


def _cutoffs(inputs: ReleaseInputs, dates: Sequence[str], undated: int) -> list[dict[str, Any]]:
    """For each endpoint that declares its model's knowledge cutoff, how many active items'
    sources predate it (compared at the cutoff's precision, as `score` splits them)."""

    out = []
    for name, ep in sorted(inputs.config.settings.judge.endpoints.items()):
        if not ep.knowledge_cutoff:
            continue
        cut = ep.knowledge_cutoff
        before = sum(1 for d in dates if d[: len(cut)] < cut)
        out.append(
            {
                "endpoint": name,
                "model": ep.model,
                "knowledge_cutoff": cut,
                "before": before,
                "after": len(dates) - before,
                "undated": undated,
            }
        )
    return out


def compute_stats(inputs: ReleaseInputs) -> Stats:
    """Counts, sources, dates, coverage gaps, dedup and judge summaries of the active items."""
    corpus = inputs.corpus
    active = active_items(corpus)
    t = _tally(inputs)
    return Stats(
        items=len(active),
        retired=sum(1 for i in corpus.items.values() if i.status == "retired"),
        claims=len(t.claim_framings),
        by_question_type=_ordered(t.qtype, tuple(QUESTION_DESCRIPTIONS)),
        by_category=_ordered(t.cats, inputs.categories),
        by_language=_ordered(t.langs),
        by_framing=_ordered(t.framings, FRAMINGS),
        by_band=_ordered(t.bands, (*BANDS, UNBANDED)),
        difficulty={
            "ledger": inputs.difficulty_ledger if inputs.difficulty_present else None,
            "banded": sum(1 for i in active if inputs.bands.get(i.id)),
            "stale": inputs.difficulty_stale,
        },
        sources=_sources(t),
        source_dates={
            "dated": len(t.dates),
            "undated": t.undated,
            "earliest": min(t.dates) if t.dates else None,
            "latest": max(t.dates) if t.dates else None,
            "by_year": dict(sorted(t.years.items())),
            "knowledge_cutoffs": _cutoffs(inputs, t.dates, t.undated),
        },
        dedup=_dedup(inputs),
        judge=_judge(inputs),
        answerability=inputs.answerability.to_dict(),
        coverage=dict(sorted(t.cells.items())),
        gaps=_gaps(t, inputs.categories),
        provenance=inputs.git,
    )
