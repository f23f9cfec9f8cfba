"""What a dedup run returns: flagged pairs with their explanations, clusters, problems, notes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from propeval.dedup.allowlist import AllowEntry
from propeval.dedup.units import Unit
from propeval.result import Problem, Severity
from propeval.settings import DedupSettings

# The passes a dedup run can make, in order (``--passes``).
PASSES = ("exact", "lexical", "semantic")

GROUP_LISTED = 100  # ids of a group of identical texts listed in json (the rest are counted)


@dataclass
class Options:
    changed_since: str | None = None
    passes: tuple[str, ...] = PASSES


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
    differing_terms: list[str] = field(default_factory=list)  # numbers, dates, names in one text only
    shared_source: str = ""
    allowed: AllowEntry | None = None
    threshold: float | None = None  # the semantic threshold of this pair's kind and languages
    threshold_source: str = ""  # which setting it came from ("pair_thresholds en-zh", ...)
    group: list[Unit] = field(default_factory=list)  # identical texts: every member of the group (a and b among them)
    cosine: float | None = None  # score = "margin": the cosine the semantic score was made from
    means: tuple[float, float] | None = None  # ... and each text's mean cosine to its nearest in the other's language
    veto: str = ""  # evidence that kept a pair above its threshold from being flagged ("numbers 1991 / 1993")
    # An allowlist entry for these exact texts that does not count (unsigned, or not by a listed
    # maintainer), and why: the pair is unreviewed, and says so.
    review_refused: str = ""
    # "duplicate": flagged, blocks; "review": just under its threshold (by at most review_width) or vetoed
    # above it, shown and never blocking
    band: str = "duplicate"
    review_width: float = 0.0  # a review pair just under its threshold: how far below it the band reaches

    def edges(self) -> list[tuple[str, str]]:
        """The pair's links for clusters: a group of identical texts links its first text to each other."""
        if not self.group:
            return [(self.a.id, self.b.id)]
        first = self.group[0].id
        return [(first, u.id) for u in self.group[1:]]

    @property
    def score(self) -> float:
        """The highest score among the passes that flagged it (the report's sort key)."""
        return max(self.scores.values(), default=0.0)

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
            "band": self.band,
            "a": unit(self.a),
            "b": unit(self.b),
            "passes": dict(self.scores),
            "semantic": self.semantic,
            "cosine": self.cosine,
            "neighbourhood_means": None if self.means is None else {self.a.id: self.means[0], self.b.id: self.means[1]},
            "lexical": self.lexical,
            "rank": {self.a.id: self.rank_a, self.b.id: self.rank_b},
            "shared_terms": self.shared_terms,
            "differing_terms": self.differing_terms,
            "veto": self.veto or None,
            "group": None
            if not self.group
            else {
                "size": len(self.group),
                "claims": len({u.claim_id for u in self.group}),
                "ids": [u.id for u in self.group[:GROUP_LISTED]],
                "more": max(0, len(self.group) - GROUP_LISTED),
            },
            "threshold": None if self.threshold is None else {"value": self.threshold, "source": self.threshold_source},
            "shared_source": self.shared_source or None,
            "reviewed": self.reviewed,
            "review_refused": self.review_refused or None,
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
    vetoed: list[Pair] = field(default_factory=list)  # above a threshold, kept from flagging by differing numbers/names
    review: list[Pair] = field(default_factory=list)  # the review band: just under a threshold, and the vetoed pairs
    uncalibrated: list[str] = field(default_factory=list)  # language pairs compared with a fallback threshold
    notes: list[str] = field(default_factory=list)
    units: int = 0
    encoded: int = 0  # texts the encoder ran on in this run (the rest came from the cache)
    embedded: dict[str, int] = field(default_factory=dict)  # language -> texts the semantic pass compared
    not_embedded: dict[str, int] = field(default_factory=dict)  # language -> texts it left out
    not_embedded_reason: str = ""
    thresholds_provenance: str = ""
    settings: DedupSettings = field(default_factory=DedupSettings)

    @property
    def unreviewed(self) -> list[Pair]:
        return [p for p in self.pairs if not p.reviewed]

    @property
    def reviewed(self) -> list[Pair]:
        return [p for p in self.pairs if p.reviewed]

    def bands(self) -> dict[str, dict[str, int]]:
        """Per language pair ("en-zh"; "facts" for facts), the pairs in each band ("duplicate", "review")."""
        out: dict[str, dict[str, int]] = {}
        for band, pairs in (("duplicate", self.pairs), ("review", self.review)):
            for p in pairs:
                key = band_key(p)
                counts = out.setdefault(key, {"duplicate": 0, "review": 0})
                counts[band] += 1
        return dict(sorted(out.items()))

    @property
    def exit_code(self) -> int:
        bad = any(p.severity is Severity.ERROR for p in self.problems)
        return 1 if self.unreviewed or bad else 0


def band_key(pair: Pair) -> str:
    """The language pair a pair is counted under in the band summary."""
    from propeval.settings import language_pair

    if pair.a.kind == "fact":
        return "facts"
    return language_pair(pair.a.language or "und", pair.b.language or "und")


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
