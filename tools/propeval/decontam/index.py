"""What is searched for: the corpus's prompts, facts and frame markers as n-grams.

Each text of the corpus (an active item's prompt, a claim's fact, an official frame marker) is
tokenised (:mod:`propeval.decontam.ngrams`). A text of at least ``n`` tokens contributes its
n-grams; a text of ``min_tokens`` to ``n - 1`` tokens is searched whole (an exact match, at token
boundaries); a shorter text (most frame markers: two to five words that news text uses on its own)
is not searched, and the report counts those.

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

    @property
    def size(self) -> int:
        """Distinct windows in the index (what memory grows with)."""
        return sum(len(g) for g in self.grams.values())


def build(entries: Iterable[tuple[str, str, str, str]], n: int = 13, min_tokens: int = 8) -> Index:
    """The index of ``entries``: (label, kind, item id, text) each.

    Args:
        n: the n-gram length in tokens.
        min_tokens: texts with fewer tokens than this are not searched (and are listed).
    """
    index = Index(n=n, min_tokens=min_tokens)
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
        index.texts.append(Text(label, kind, item, len(toks), len(hashes), whole))
        seen.append((label, " ".join(toks)))
        collected.setdefault(width, []).append(hashes)
    index.hashes = {width: ngrams.Table(np.concatenate(parts)) for width, parts in sorted(collected.items())}
    payload = json.dumps([ngrams.VERSION, n, min_tokens, sorted(seen), sorted(index.too_short)], ensure_ascii=False)
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
