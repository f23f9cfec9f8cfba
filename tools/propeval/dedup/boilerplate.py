"""Facts that many claims require in near-identical words: boilerplate that prompts reward.

A fact such as "the party leads all state organs" required by forty statute prompts rewards an
answer that recites it, whatever the question. This stage of a dedup run looks at the fact
vectors the semantic pass already embedded (dedup's encoder and cache), within each group of
claims of one kind and one source domain, and links two facts of different claims at or above
the fact threshold (``fact_semantic_threshold``). A connected set of linked facts that spans at
least ``boilerplate_min_claims`` claims is one warning (``dedup-boilerplate``) at its first fact,
listing every fact, so a maintainer can decide. A set whose facts are all on the allowlist's
``boilerplate:`` list, with their current text hashes, is kept silently (the run notes it).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from propeval.dedup.allowlist import BoilerplateEntry
from propeval.dedup.units import Unit
from propeval.result import Problem, Severity
from propeval.settings import DedupSettings

RULE = "dedup-boilerplate"


# A URL whose host is letters, digits, dots and hyphens alone, right after its scheme: urlsplit's
# hostname is that host, lower-cased (no user, port, brackets, or characters urlsplit would strip).
_PLAIN_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9.-]+)(?:[/?#]|$)")


@functools.lru_cache(maxsize=65536)  # a claim's facts share its URL
def source_family(url: str) -> str:
    """The source family of a claim: its source URL's host, without ``www.``."""
    plain = _PLAIN_HOST.match(url)
    if plain is not None:  # most URLs: the host without urlsplit's parse (20k facts on every commit)
        host = plain.group(1).lower()
    else:
        try:
            host = (urlsplit(url).hostname or "").lower()
        except ValueError:
            host = ""
    return host.rstrip(".").removeprefix("www.") or "(no source)"


def find_boilerplate(
    units: Sequence[Unit],
    vectors: Any,
    row_of: Mapping[int, int],
    settings: DedupSettings,
    allowed: Mapping[str, BoilerplateEntry],
    focus: set[int] | None = None,
    nearest: Any = None,
) -> tuple[list[Problem], list[str]]:
    """Warnings for boilerplate fact sets, and notes (allowlisted sets). ``vectors`` are the
    semantic pass's unit-normalised rows, ``row_of`` maps a unit's index to its row; with a
    ``focus`` (changed texts), only sets touching it are reported. ``nearest`` (by row, optional):
    each fact's highest cosine to a fact of another claim, from an exact neighbour search (inf where
    unknown): a fact below the threshold there links to none, and is left out of the comparisons."""

    min_claims = settings.boilerplate_min_claims
    if not min_claims or vectors is None:
        return [], []
    threshold = settings.cosine_limit(kind="fact")
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    # With a focus only the sets of a changed fact's family are reported. A URL whose host is one of
    # them holds it as written (urlsplit's hostname is a lower-cased slice of the URL), so a URL that
    # holds none of them is passed over without parsing it (a commit need not parse 20k facts' URLs).
    families = None
    if focus is not None:
        families = {source_family(units[i].source_url) for i in focus if units[i].kind == "fact"}
        if not families:
            return [], []
        if "(no source)" in families:
            families = None
    family_of: dict[str, str | None] = {}  # source URL -> its family (None: not one of ``families``)
    for i, u in enumerate(units):
        if u.kind == "fact" and i in row_of:
            url = u.source_url
            if url in family_of:
                family = family_of[url]
            elif families is not None and not any(f in url.lower() for f in families):
                family = family_of[url] = None
            else:
                family = family_of[url] = source_family(url)
            if family is not None:
                groups[(u.claim_kind or "?", family)].append(i)
    problems: list[Problem] = []
    notes: list[str] = []
    for (kind, family), idx in sorted(groups.items()):
        if len({units[i].claim_id for i in idx}) < min_claims:
            continue
        # With a focus, only the sets that hold a changed fact are reported, so only they are
        # searched: the work grows with the corpus, not its square.
        seeds = None if focus is None else [k for k, i in enumerate(idx) if i in focus]
        if seeds is not None and not seeds:
            continue
        for local in _linked_sets(units, idx, vectors, row_of, threshold, seeds, nearest):
            members = [idx[k] for k in local]
            claims = sorted({units[i].claim_id for i in members})
            if len(claims) < min_claims or (focus is not None and not focus.intersection(members)):
                continue
            facts = sorted((units[i] for i in members), key=lambda u: u.id)
            reviewed = [allowed.get(u.id) for u in facts]
            if all(e is not None and e.fact_hash == u.hash for e, u in zip(reviewed, facts, strict=True)):
                notes.append(f"boilerplate facts kept by review: {', '.join(u.id for u in facts)}")
                continue
            lead = facts[0]
            text = lead.text if len(lead.text) <= 80 else lead.text[:77] + "..."
            problems.append(
                Problem(
                    lead.path,
                    lead.line,
                    lead.col,
                    RULE,
                    f"fact {lead.id} {text!r} is required, in near-identical words (cosine >= {threshold:.2f}), by "
                    f"{len(claims)} claims of kind {kind} from {family}: {', '.join(u.id for u in facts)}; a fact "
                    "this many prompts require rewards boilerplate answers: keep it only where the question asks "
                    "for it, or list each fact with its fact_hash and a reason under boilerplate: in "
                    + settings.allowlist,
                    severity=Severity.WARNING,
                )
            )
    return problems, notes


CHUNK = 1024  # rows of the similarity matrix held at once


def similar(rows: Any, vectors: Any, threshold: float) -> Any:
    """Which of ``vectors`` each of ``rows`` reaches (cosine at least ``threshold``): a boolean
    matrix. Every comparison of the boilerplate stage goes through here, so the linear-work guard
    (``tests/test_linear_work.py``) counts them."""
    return rows @ vectors.T >= threshold - 1e-6


def _linked_sets(
    units: Sequence[Unit],
    idx: Sequence[int],
    vectors: Any,
    row_of: Mapping[int, int],
    threshold: float,
    seeds: Sequence[int] | None = None,
    nearest: Any = None,
) -> list[list[int]]:
    """The connected sets (two or more members, of two or more claims' links) of facts ``idx``
    (positions into it), linking two facts of different claims whose cosine reaches ``threshold``.
    With ``seeds`` (positions), only the sets that hold a seed: each is grown outwards from its seeds,
    one similarity row per fact reached, so a commit's few facts cost a few rows, not the matrix.

    Identical texts are one vector: a fact that 4,000 claims repeat is compared once, and the
    similarity matrix is built in row chunks, so memory grows with the number of distinct facts, not
    its square.

    Without seeds and with ``nearest`` (each row's highest cosine to another claim's fact), only the
    texts whose nearest reaches the threshold can link, so only they are compared, with each other:
    a corpus of 20k distinct facts would be 400M comparisons for the few that repeat one another."""
    import numpy as np

    parent = list(range(len(idx)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_text: dict[str, list[int]] = defaultdict(list)
    for k, i in enumerate(idx):
        by_text[units[i].key].append(k)
    texts = list(by_text.values())  # positions of each distinct text
    linked = [False] * len(idx)
    for same in texts:  # identical facts of two claims are linked
        if len({units[idx[k]].claim_id for k in same}) > 1:
            for k in same:
                union(same[0], k)
                linked[k] = True
    v = vectors[[row_of[idx[same[0]]] for same in texts]]
    claims = [{units[idx[k]].claim_id for k in same} for same in texts]

    def link(rows: Sequence[int], among: Sequence[int] | None = None) -> set[int]:
        """Link each text of ``rows`` (text positions) to the texts it reaches (of ``among``, or of
        all); the texts reached."""
        reached: set[int] = set()
        cols = v if among is None else v[list(among)]
        for start in range(0, len(rows), CHUNK):
            chunk = list(rows[start : start + CHUNK])
            block = similar(v[chunk], cols, threshold)
            for a, b in zip(*np.nonzero(block), strict=True):
                ta, tb = chunk[int(a)], int(b) if among is None else among[int(b)]
                if ta == tb or (seeds is None and tb <= ta) or (claims[ta] == claims[tb] and len(claims[ta]) == 1):
                    continue  # facts of one claim never count for each other
                union(texts[ta][0], texts[tb][0])
                for k in (*texts[ta], *texts[tb]):
                    linked[k] = True
                for k in texts[ta][1:]:
                    union(texts[ta][0], k)
                for k in texts[tb][1:]:
                    union(texts[tb][0], k)
                reached.add(tb)
        return reached

    if seeds is None:
        if nearest is None:
            link(range(len(texts)))
        else:
            # a hair under the threshold: the search's cosines and these may differ in the last bits
            near = [max(float(nearest[row_of[idx[k]]]) for k in same) for same in texts]
            able = [t for t, best in enumerate(near) if best >= threshold - 1e-4]
            link(able, able)
        wanted: Sequence[int] = range(len(idx))
    else:
        text_of = {k: t for t, same in enumerate(texts) for k in same}
        seen = {text_of[k] for k in seeds}
        frontier = sorted(seen)
        while frontier:  # breadth first: every text of a seed's set is a row once
            frontier = sorted(link(frontier) - seen)
            seen.update(frontier)
        wanted = sorted(k for t in seen for k in texts[t])
    sets: dict[int, list[int]] = defaultdict(list)
    for k in wanted:
        if linked[k]:
            sets[find(k)].append(k)
    return list(sets.values())
