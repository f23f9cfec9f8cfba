"""What explains a flagged pair: the terms and source two texts share, its scores, its problem line."""

from __future__ import annotations

import functools
import re
from typing import Any

from propeval.dedup.units import Unit
from propeval.result import Problem, Severity
from propeval.textnorm import normalise_url

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NAME = re.compile(r"\b[^\W\d_][\w'’-]*", re.UNICODE)
_MONTHS = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
    "сентября", "октября", "ноября", "декабря",
}  # fmt: skip
_NOT_NAMES = {
    "what", "who", "when", "where", "why", "how", "which", "is", "are", "was", "were", "did", "does", "do",
    "the", "a", "an", "in", "on", "of", "and", "or", "to", "it", "has", "have", "had", "can", "could",
    "would", "should", "according", "describe", "explain", "tell", "give", "name", "list",
    "что", "кто", "как", "когда", "где", "почему", "какой", "какие", "правда", "ли", "в", "и",
}  # fmt: skip


@functools.lru_cache(maxsize=65536)
def terms(text: str) -> frozenset[str]:
    """Numbers, month names and capitalised names of a text, casefolded, for 'what they share'."""
    found = {m.group(0) for m in _NUMBER.finditer(text)}
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for i, m in enumerate(_NAME.finditer(sentence)):
            word = m.group(0).rstrip("'’-")
            low = word.casefold()
            if low in _MONTHS or (word[0].isupper() and low not in _NOT_NAMES and (i > 0 or len(word) > 1)):
                found.add(low)
    return frozenset(found)


def shared_terms(a: str, b: str) -> list[str]:
    return sorted(terms(a) & terms(b), key=lambda t: (not t[0].isdigit(), t))


def differing_terms(a: str, b: str, *, same_language: bool) -> list[str]:
    """What one text names and the other does not: numbers (and dates) always; names and months
    only within one language, as a translation spells names in another script."""
    ta, tb = terms(a), terms(b)
    if not same_language:
        ta = frozenset(t for t in ta if t[0].isdigit())
        tb = frozenset(t for t in tb if t[0].isdigit())
    return sorted(ta ^ tb, key=lambda t: (not t[0].isdigit(), t))


@functools.lru_cache(maxsize=65536)
def _url_key(url: str) -> str:
    return normalise_url(url) if url else ""


def shared_source(a: Unit, b: Unit) -> str:
    if a.source_url and _url_key(a.source_url) == _url_key(b.source_url):
        if a.anchor and a.anchor.casefold() == b.anchor.casefold():
            return f"{a.source_url} (anchor: {a.anchor})"
        return a.source_url
    return ""


def pair_scores(pair: Any) -> str:
    """The scores of a flagged pair, with the passes it stayed below in brackets."""
    parts = [f"{name} {score:.3f}" for name, score in pair.scores.items()]
    extra = []
    if "semantic" not in pair.scores and pair.semantic is not None:
        extra.append(f"semantic {pair.semantic:.3f}")
    if "lexical" not in pair.scores and pair.lexical is not None:
        extra.append(f"lexical {pair.lexical:.3f}")
    text = ", ".join(parts)
    if extra:
        text += f" (below threshold: {', '.join(extra)})"
    return text


def pair_rule(pair: Any) -> str:
    """The rule id of a flagged pair: ``dedup-`` and the first pass that flagged it."""
    return "dedup-" + next(iter(pair.scores))


def _translation_across_claims(a: Any, b: Any) -> bool:
    """Two prompts of different claims in different languages (by primary subtag)."""
    if a.kind != "item" or b.kind != "item" or a.claim_id == b.claim_id:
        return False
    la, lb = (str(x or "").split("-", 1)[0].lower() for x in (a.language, b.language))
    return bool(la and lb and la != lb)


def pair_problem(pair: Any) -> Problem:
    """A flagged pair as a Problem on the second text, as `dedup`, `ci` and `run` all report it."""
    a, b = pair.a, pair.b
    what = "facts" if a.kind == "fact" else "prompts"
    rank = f"; rank {pair.rank_b} among {b.id}'s neighbours, {pair.rank_a} among {a.id}'s" if pair.rank_a else ""
    shared = f"; shared: {', '.join(pair.shared_terms)}" if pair.shared_terms else ""
    if pair.differing_terms:
        shared += f"; only in one: {', '.join(pair.differing_terms)}"
    threshold = getattr(pair, "threshold", None)
    if threshold is not None and "semantic" in pair.scores:
        shared += f"; threshold {threshold:.3f} ({pair.threshold_source})"
    source = f"; same source {pair.shared_source}" if pair.shared_source else ""
    refused = getattr(pair, "review_refused", "")
    if refused:
        how = f"unreviewed: {refused}"
    else:
        how = (
            "retire or rewrite one, or if both belong, review and run "
            f"`propeval dedup allow {a.id} {b.id} --reason ...`"
        )
        if _translation_across_claims(a, b):
            # The same question in two languages under two claims is, most often, a translation
            # that landed in the wrong claim: its fix keeps the text and its id.
            how = (
                f"if {b.id} asks {a.id}'s question in {b.language}, make it {a.id}'s translation in {a.claim_id}: "
                f"`propeval move {b.id} --to-claim {a.claim_id} --translation-of {a.id}` (for new text, "
                f"`propeval new item --claim {a.claim_id} --language {b.language} --translation-of {a.id}`); "
                f"else {how}"
            )
    return Problem(
        b.path,
        b.line,
        b.col,
        pair_rule(pair),
        f"{b.id} ({b.claim_id}) and {a.id} ({a.claim_id}, {a.path}:{a.line}) are near-duplicate {what}: "
        f"{pair_scores(pair)}{rank}{shared}{source}; {how}",
        severity=Severity.ERROR,
    )
