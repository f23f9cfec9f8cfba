"""The review app's one view of dedup: flagged pairs from :func:`propeval.dedup.find_duplicates`.

Dedup's scoring is its own (passes, thresholds per language pair and scoring model, explanations);
this module never recomputes any of it. It reads the public result (``DedupResult.pairs``, each
:class:`propeval.dedup.Pair` through its ``to_dict()``) into what a page shows, so a change in
dedup's result objects is adapted here, in one place. A field of ``to_dict()`` this module does not
know is shown as it is, under its own name.

Three lists: the **queue** (unreviewed pairs), pairs **waiting** for a maintainer's signature (an
allowlist entry for their exact texts exists but does not count yet: unsigned, or not by a listed
key) and the **reviewed** ones. The two texts of a pair are diffed word by word (:mod:`difflib`;
character by character in scripts written without spaces).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from propeval.config import Config
    from propeval.embed.protocol import Encoder

# Fields of Pair.to_dict() shown in their own place on the page; any other non-empty one is listed.
_KNOWN = {
    "a",
    "b",
    "passes",
    "semantic",
    "lexical",
    "rank",
    "shared_terms",
    "differing_terms",
    "threshold",
    "shared_source",
    "reviewed",
    "review_refused",
    "review",
}
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Side:
    id: str
    kind: str  # "item" | "fact"
    claim_id: str
    path: str
    line: int
    language: str
    text: str


@dataclass
class PairView:
    a: Side
    b: Side
    passes: dict[str, float]
    semantic: float | None
    lexical: float | None
    threshold: float | None
    threshold_source: str
    languages: str
    details: list[tuple[str, str]] = field(default_factory=list)  # (what, value) explaining the pair
    refused: str = ""  # why an allowlist entry for these texts does not count yet
    review: dict[str, Any] | None = None
    advice: str = ""  # what `propeval dedup` advises for the pair, in its own words
    recommended: str = ""  # the action that advice names first: "move", or "" (retire, rewrite or keep)

    @property
    def key(self) -> str:
        return f"{self.a.id}|{self.b.id}"

    @property
    def ids(self) -> tuple[str, str]:
        return (self.a.id, self.b.id)

    def diff(self) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]] | None:
        """Each text as segments (text, differs); None when the two are in different languages."""
        if self.a.language.split("-")[0] != self.b.language.split("-")[0]:
            return None
        return diff_segments(self.a.text, self.b.text)


def pair_text(pair: PairView) -> str:
    """What the queue's text search looks in: both ids, claims, languages and texts."""
    return "\n".join((pair.a.id, pair.b.id, pair.a.claim_id, pair.b.claim_id, pair.languages, pair.a.text, pair.b.text))


@dataclass
class Queue:
    """What a dedup run flagged, as the review app lists it."""

    pairs: list[PairView] = field(default_factory=list)  # unreviewed
    waiting: list[PairView] = field(default_factory=list)  # kept, waiting for a maintainer's signature
    reviewed: list[PairView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    units: int = 0

    def find(self, a: str, b: str) -> PairView | None:
        for p in (*self.pairs, *self.waiting, *self.reviewed):
            if {p.a.id, p.b.id} == {a, b}:
                return p
        return None


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for tok in _TOKEN.findall(text):
        if _UNSPACED.search(tok):
            out.extend(tok)  # one character a token
        else:
            out.append(tok)
    return out


def diff_segments(a: str, b: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """The two texts as runs of (text, differs from the other), word by word."""
    ta, tb = _tokens(a), _tokens(b)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        same = op == "equal"
        if i2 > i1:
            left.append(("".join(ta[i1:i2]), not same))
        if j2 > j1:
            right.append(("".join(tb[j1:j2]), not same))
    return left, right


def _side(u: dict[str, Any]) -> Side:
    return Side(
        str(u.get("id", "")),
        str(u.get("kind", "")),
        str(u.get("claim_id", "")),
        str(u.get("path", "")),
        int(u.get("line") or 0),
        str(u.get("language", "")),
        str(u.get("text", "")),
    )


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_shown(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_shown(v) for v in value)
    return str(value)


def pair_view(pair: Any) -> PairView:
    """A :class:`propeval.dedup.Pair` as the page shows it."""
    d: dict[str, Any] = pair.to_dict()
    a, b = _side(d["a"]), _side(d["b"])
    threshold = d.get("threshold") or {}
    details: list[tuple[str, str]] = []
    rank = d.get("rank") or {}
    if any(rank.values()):
        details.append(
            ("neighbour rank", f"{b.id} is {a.id}'s #{rank.get(a.id, '-')}, {a.id} is {b.id}'s #{rank.get(b.id, '-')}")
        )
    if d.get("shared_terms"):
        details.append(("shared terms", _shown(d["shared_terms"])))
    if d.get("differing_terms"):
        details.append(("in one text only", _shown(d["differing_terms"])))
    if d.get("shared_source"):
        details.append(("shared source", str(d["shared_source"])))
    for key, value in d.items():
        if key not in _KNOWN and value not in (None, "", [], {}):
            details.append((key.replace("_", " "), _shown(value)))
    return PairView(
        a=a,
        b=b,
        passes={str(k): float(v) for k, v in (d.get("passes") or {}).items()},
        semantic=d.get("semantic"),
        lexical=d.get("lexical"),
        threshold=threshold.get("value"),
        threshold_source=str(threshold.get("source") or ""),
        languages=f"{a.language or '?'}-{b.language or '?'}",
        details=details,
        refused=str(d.get("review_refused") or ""),
        review=d.get("review"),
        advice=_advice(pair),
        recommended="move" if f"propeval move {b.id}" in _advice(pair) else "",
    )


_HOW = re.compile(r"; ((?:if \S+ asks |retire or rewrite |unreviewed: ).*)$", re.DOTALL)


def _advice(pair: Any) -> str:
    """The advice `propeval dedup` prints for ``pair`` (the end of its finding)."""
    from propeval.dedup.explain import pair_problem

    try:
        found = _HOW.search(pair_problem(pair).message)
    except (AttributeError, TypeError, KeyError, StopIteration):  # a pair dedup explains another way
        return ""
    return found.group(1) if found else ""


_STALE = re.compile(r"\[dedup-stale-review\] the review of (\S+) / (\S+) no longer applies: (.*?); review the pair")


def stale_entries(queue: Queue) -> list[tuple[str, str, str]]:
    """The allowlist entries dedup found stale: (a, b, why), from its ``dedup-stale-review`` findings."""
    return [(m.group(1), m.group(2), m.group(3)) for p in (*queue.problems, *queue.notes) if (m := _STALE.search(p))]


def load_queue(
    config: Config,
    *,
    encoder: Encoder | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Queue:
    """Run dedup over the corpus (its own settings, cache and allowlist) and list what it flagged.

    ``progress(done, total)`` counts the texts embedded.
    """
    from propeval.dedup import find_duplicates

    def factory(total: int) -> Callable[[int], None] | None:
        if progress is None:
            return None
        done = 0
        progress(0, total)

        def step(n: int) -> None:
            nonlocal done
            done += n
            progress(done, total)

        return step

    result = find_duplicates(config, encoder=encoder, progress_factory=factory)
    queue = Queue(units=result.units, notes=list(result.notes))
    queue.problems = [f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}" for p in result.problems]
    for pair in result.pairs:
        view = pair_view(pair)
        if pair.reviewed:
            queue.reviewed.append(view)
        elif view.refused:
            queue.waiting.append(view)
        else:
            queue.pairs.append(view)
    return queue
