"""The exact and lexical passes' candidates and scores, and the lexical decision.

* exact: equal normalised-text hashes, grouped (:func:`exact_groups`);
* lexical: rapidfuzz over pairs that share a rare word bigram, plus the semantic neighbours. In
  scripts written without spaces (Chinese, Japanese) every character is a word (:func:`words`), so a
  Chinese rewording meets its original through a rare character bigram.

Pairs are ``(i, j)`` with ``i < j``, indices into the run's list of units; a pair of one claim, or
of an item and a fact, is never a candidate.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from propeval.dedup.units import Unit
from propeval.langtags import language_key
from propeval.settings import DedupSettings

PairIndex = tuple[int, int]


_LANGUAGE_KEYS: dict[str, str] = {}  # tag -> language_key(tag): asked of every text, several times a run


def lang(u: Unit) -> str:
    key = _LANGUAGE_KEYS.get(u.language)
    if key is None:
        key = _LANGUAGE_KEYS[u.language] = language_key(u.language)
    return key


def comparable(a: Unit, b: Unit) -> bool:
    return a.kind == b.kind and a.claim_id != b.claim_id


def exact_groups(units: Sequence[Unit], focus: set[int] | None) -> list[list[int]]:
    """Groups of units of one kind whose normalised texts are identical, spanning two or more
    claims (with a ``focus``: those that hold a changed text), each in the run's order.

    A group is one finding however large: an import of 4,000 rows that repeat one fact is one group,
    not 8 million pairs, so memory and output grow with the number of texts, not its square."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    # With a focus only the changed texts' keys can make a group worth reporting: building every
    # text's group on each commit is work in proportion to the corpus, not the change.
    keys = None if focus is None else {units[i].key for i in focus}
    for i, u in enumerate(units):
        if keys is None or u.key in keys:
            groups[(u.kind, u.key)].append(i)
    out = []
    for members in groups.values():
        if len(members) < 2 or len({units[i].claim_id for i in members}) < 2:
            continue
        if focus is None or any(i in focus for i in members):
            out.append(members)
    return out


# Scripts written without spaces between words: Han (CJK ideographs and their extensions), Hiragana,
# Katakana. ``\w+`` makes a whole Chinese sentence one "word", so blocking on word bigrams found no
# pair in them; in these scripts each character is a token (character n-grams are the usual unit of
# Chinese and Japanese retrieval, e.g. Lucene's CJKAnalyzer bigrams).
_UNSPACED = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD = re.compile(rf"[{_UNSPACED}]|[^\W{_UNSPACED}]+")


def words(norm: str) -> list[str]:
    """The words of a normalised text: ``\\w+`` runs, and each character of a script written without
    spaces (Han, Hiragana, Katakana) on its own.

    >>> words("the 2020 一个男人正在切黄瓜 talks")
    ['the', '2020', '一', '个', '男', '人', '正', '在', '切', '黄', '瓜', 'talks']
    """
    return _WORD.findall(norm)


def bigram_candidates(units: Sequence[Unit], focus: set[int] | None, max_df: int) -> set[PairIndex]:
    """Pairs that share a word bigram used by at most ``max_df`` texts (blocking for rapidfuzz)."""
    postings: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    # With a focus only the changed texts' bigrams can pair a text with one of them: a prefix
    # that every templated question shares would otherwise put all their bigrams into postings.
    wanted = None
    if focus is not None:
        wanted = {(units[i].kind, a, b) for i in focus for a, b in itertools.pairwise(words(units[i].norm))}
    for i, u in enumerate(units) if focus is None else _sharing_a_bigram(units, focus):
        ws = words(u.norm)
        for bg in {(u.kind, ws[n], ws[n + 1]) for n in range(len(ws) - 1)}:
            if wanted is None or bg in wanted:
                postings[bg].append(i)
    out: set[PairIndex] = set()
    for members in postings.values():
        if len(members) < 2 or len(members) > max_df:
            continue
        if focus is not None:  # only the changed texts' pairs: work in proportion to the change
            for i in members:
                if i in focus:
                    out.update((min(i, j), max(i, j)) for j in members if j != i and comparable(units[i], units[j]))
            continue
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                if comparable(units[i], units[j]):
                    out.add((i, j))
    return out


PARALLEL_PAIRS = 100_000  # lexical pairs from which rapidfuzz scores on every core
PROBE_LIMIT = 512  # bigrams of a change looked for by one regular expression; above, every text is split


def _sharing_a_bigram(units: Sequence[Unit], focus: set[int]) -> list[tuple[int, Unit]]:
    """The units that may share a word bigram with a text of ``focus`` (and those texts): a text
    holds a bigram only where its two words stand in it with nothing but non-word characters
    between them, so one regular expression of the focus's bigrams finds every such text (and
    perhaps a few more, which the exact count drops). A commit's few texts then split the
    words of a handful of the corpus's, not of every text."""
    pairs: set[tuple[str, str]] = set()
    for i in focus:
        ws = words(units[i].norm)
        pairs.update(itertools.pairwise(ws))
    if not pairs:
        return []
    if len(pairs) > PROBE_LIMIT:  # an import's thousands of texts: one pass over every text is cheaper
        return list(enumerate(units))
    probe = re.compile("|".join(re.escape(a) + r"\W*" + re.escape(b) for a, b in sorted(pairs)))
    return [(i, u) for i, u in enumerate(units) if i in focus or probe.search(u.norm)]


def lexical_scores(
    units: Sequence[Unit], candidates: Iterable[PairIndex], cutoff: float | None = None
) -> dict[PairIndex, float]:
    """rapidfuzz ``token_sort_ratio`` / 100 of each candidate pair's normalised texts, all pairs in
    one call of rapidfuzz's element-wise ``cpdist`` (a warm run on 10k texts meets about 400k pairs;
    a Python loop over ``fuzz.token_sort_ratio`` spent 5.5 s on them). With a ``cutoff``, only the
    pairs that reach it (each with its exact score): rapidfuzz gives up on a pair as soon as it
    cannot reach the cutoff, and the lexical decision looks at no other (a whole run's
    neighbour pairs are almost all far below it)."""
    from rapidfuzz import fuzz, process

    pairs = list(candidates)
    if not pairs:
        return {}
    # A hair below the cutoff: rapidfuzz compares in its own arithmetic; the caller's decision is exact.
    limit = 0 if cutoff is None else max(0.0, cutoff * 100.0 - 1e-6)
    norms = [u.norm for u in units]  # a list index per pair, not an attribute: millions in a whole run
    scores = process.cpdist(
        [norms[i] for i, _ in pairs],
        [norms[j] for _, j in pairs],
        scorer=fuzz.token_sort_ratio,
        score_cutoff=limit,
        # a whole run's hundreds of thousands of pairs on every core (the same scores, in order);
        # a commit's few on one, without starting threads
        workers=-1 if len(pairs) >= PARALLEL_PAIRS else 1,
    )
    if cutoff is None:
        return {pair: float(s_) / 100.0 for pair, s_ in zip(pairs, scores.tolist(), strict=True)}
    import numpy as np

    return {pairs[n]: float(scores[n]) / 100.0 for n in np.flatnonzero(scores >= limit).tolist()}


@dataclass
class LexicalDecisions:
    """What the lexical pass made of its scored pairs: those flagged (pair -> score) and those at or
    above the threshold that the evidence vetoed (pair -> why)."""

    flagged: dict[PairIndex, float] = field(default_factory=dict)
    vetoed: dict[PairIndex, str] = field(default_factory=dict)


def decide_lexical(
    units: Sequence[Unit], scores: Mapping[PairIndex, float], settings: DedupSettings
) -> LexicalDecisions:
    """The lexical pass's one decision, which ``dedup``, ``overlap`` and ``dedup calibrate`` all
    take: a pair whose score reaches ``lexical_threshold`` is flagged unless the texts write
    different numbers or (in one language) name different people or places
    (:func:`propeval.dedup.explain.conflict`): two texts that differ in a number or a name are two
    questions, however many words they share, as in the semantic pass (:meth:`SemanticSpace.decide`)."""
    from propeval.dedup.explain import conflict

    out = LexicalDecisions()
    for pair, score in scores.items():
        if score < settings.lexical_threshold:
            continue
        a, b = units[pair[0]], units[pair[1]]
        veto = conflict(a.text, b.text, same_language=lang(a) == lang(b), language=lang(a))
        if veto:
            out.vetoed[pair] = veto
        else:
            out.flagged[pair] = score
    return out
