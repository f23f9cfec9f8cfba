"""What is searched for: the corpus's prompts, facts and frame markers as n-grams.

Each text of the corpus (an active item's prompt, a claim's fact, an official frame marker) is
tokenised (:mod:`propeval.decontam.ngrams`). A text of at least ``n`` tokens contributes its
n-grams; a text of ``min_tokens`` to ``n - 1`` tokens is searched whole (an exact match, at token
boundaries); a shorter text (most frame markers: two to five words that news text uses on its own)
is not searched, and the report counts those.

**Near matches.** A word replaced in the middle of a text of fewer than ``2n + 1`` tokens leaves
no n-gram of it whole, so each text of at least :func:`near_min_tokens` tokens also gives *anchors*:
all its windows of :func:`anchor_width` tokens, short enough that one survives any single edit.
An anchor found in a document is only a candidate: the document's tokens around it are aligned
with the text's (:mod:`propeval.decontam.scan`), and a finding needs a similarity of at least
``near`` (0.9: one word in ten may differ).

**Probe windows.** Every window of :data:`PROBE` tokens of every searched text is in the probe
table: a window of the index of any width begins with one (an n-gram, a short text's first
``min_tokens`` tokens, an anchor), so the scan hashes the longer windows only where a probe
window is found, and the near pass looks up anchors only there.

The index is small (the corpus's texts), so it is built once and shipped to every worker; the
shards are searched *for* its n-grams, never turned into n-grams of their own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from propeval.decontam import ngrams


@dataclass(frozen=True)
class Text:
    """One searched text: ``label`` names it in the report (``i0003 prompt``, ``c0001/f2 fact``)."""

    label: str
    kind: str  # prompt | fact | marker
    item: str  # the item id, or the claim id for a fact or marker
    tokens: int
    ngrams: int  # how many n-grams (1 for a text searched whole)
    whole: str = ""  # a text searched whole: its tokens joined by spaces
    words: tuple[bytes, ...] = ()  # a text with anchors: its tokens, for the near alignment


@dataclass
class Index:
    """The searched texts, their windows' exact strings and the sorted hashes of each width."""

    n: int
    min_tokens: int
    texts: list[Text] = field(default_factory=list)
    # width -> exact window string -> [(text index, position of the window in the text)]
    grams: dict[int, dict[str, list[tuple[int, int]]]] = field(default_factory=dict)
    hashes: dict[int, ngrams.Table] = field(default_factory=dict)
    too_short: list[str] = field(default_factory=list)
    digest: str = ""
    near: float = 0.0  # the near pass's similarity threshold (0: no near pass)
    anchor: int = 0  # the anchors' width in tokens
    anchors: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # hash -> [(text, position)]
    anchor_table: ngrams.Table | None = None
    # Every window of ``probe`` tokens of every searched text: a window of any width that is in the
    # index begins with one of them, so only the tokens where one begins are hashed further.
    probe: int = 0
    probe_table: ngrams.Table | None = None
    format_chars: str = ""  # :func:`ngrams.format_chars`, listed once for every worker

    @property
    def size(self) -> int:
        """Distinct windows in the index (what memory grows with)."""
        return sum(len(g) for g in self.grams.values())


PROBE = 5  # the probe windows' width in tokens (fewer if --min-tokens or --ngram is smaller)


def near_min_tokens(near: float) -> int:
    """The fewest tokens a text needs for one replaced token to keep it at similarity ``near``
    ((L - 1) / L >= near: 10 tokens at 0.9); shorter texts get no anchors."""
    length = 2
    while (length - 1) / length < near - 1e-9:
        length += 1
    return length


def anchor_width(near: float) -> int:
    """Anchors short enough that any text of :func:`near_min_tokens` tokens with one token
    replaced keeps one whole (the longer side of the edit: ceil((L - 1) / 2), 5 at 0.9)."""
    return max(1, near_min_tokens(near) // 2)


def build(entries: Iterable[tuple[str, str, str, str]], n: int = 13, min_tokens: int = 8, near: float = 0.9) -> Index:
    """The index of ``entries``: (label, kind, item id, text) each.

    Args:
        n: the n-gram length in tokens.
        min_tokens: texts with fewer tokens than this are not searched (and are listed).
        near: the near pass's similarity threshold (0 or 1: no near pass).
    """
    near = near if 0 < near < 1 else 0.0
    index = Index(n=n, min_tokens=min_tokens, near=near, format_chars=ngrams.format_chars())
    ngrams.use_format_chars(index.format_chars)
    anchored = near_min_tokens(near) if near else 0
    index.anchor = anchor_width(near) if near else 0
    anchor_hashes: list[np.ndarray] = []
    index.probe = min(PROBE, min_tokens, n)
    probe_hashes: list[np.ndarray] = []
    seen: list[tuple[str, str]] = []
    collected: dict[int, list[np.ndarray]] = {}
    for label, kind, item, text in entries:
        toks = ngrams.tokens(text)
        if len(toks) < min_tokens:
            index.too_short.append(label)
            continue
        # A shorter text is found by its first min_tokens tokens, then compared whole: one pass
        # over the shards for every short text, whatever their lengths.
        short = len(toks) < n
        width = min_tokens if short else n
        tok = ngrams.tokenise(" ".join(toks).encode("utf-8"))
        hashes = ngrams.windows(tok, width)[: 1 if short else None]
        table = index.grams.setdefault(width, {})
        number = len(index.texts)
        for pos in range(len(hashes)):
            table.setdefault(" ".join(toks[pos : pos + width]), []).append((number, pos))
        whole = " ".join(toks) if short else ""
        words: tuple[bytes, ...] = ()
        if near and len(toks) >= max(anchored, index.anchor):
            words = tuple(t.encode("utf-8") for t in toks)
            anchor = ngrams.windows(tok, index.anchor)
            for pos, h in enumerate(anchor.tolist()):
                index.anchors.setdefault(h, []).append((number, pos))
            anchor_hashes.append(anchor)
        probe_hashes.append(ngrams.windows(tok, index.probe))
        index.texts.append(Text(label, kind, item, len(toks), len(hashes), whole, words))
        seen.append((label, " ".join(toks)))
        collected.setdefault(width, []).append(hashes)
    index.hashes = {width: ngrams.Table(np.concatenate(parts)) for width, parts in sorted(collected.items())}
    if anchor_hashes:
        index.anchor_table = ngrams.Table(np.concatenate(anchor_hashes))
    if probe_hashes:
        index.probe_table = ngrams.Table(np.concatenate(probe_hashes))
    payload = json.dumps(
        [ngrams.VERSION, n, min_tokens, near, sorted(seen), sorted(index.too_short)], ensure_ascii=False
    )
    index.digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    return index


def corpus_entries(corpus: object) -> list[tuple[str, str, str, str]]:
    """(label, kind, item, text) of every active item's prompt and every claim's facts and markers
    (claims with at least one active item)."""
    from propeval.corpus import Corpus

    assert isinstance(corpus, Corpus)
    out: list[tuple[str, str, str, str]] = []
    live: set[str] = set()
    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        out.append((f"{item.id} prompt", "prompt", item.id, item.prompt))
        live.add(item.claim_id)
    for cid in sorted(live):
        claim = corpus.claims.get(cid)
        if claim is None:
            continue
        for fact in claim.facts:
            out.append((f"{cid}/{fact.id} fact", "fact", cid, fact.text))
        for number, (language, text) in enumerate(claim.markers, start=1):
            out.append((f"{cid} marker {number} ({language})", "marker", cid, text))
    return out
