"""What explains a flagged pair: the terms and source two texts share, its scores, its problem line."""

from __future__ import annotations

import functools
import re
from typing import Any

from propeval.dedup.units import Unit
from propeval.result import Problem, Severity
from propeval.textnorm import normalise_url

_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W_][\w'’-]*", re.UNICODE)
# Where a sentence starts: the text's start, or after . ! ? : ; and spaces, quotes or brackets.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;。！？]\s*)[\s\"'“”«»„(\[¿¡-]*$")
_MONTHS = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
    "сентября", "октября", "ноября", "декабря", "січня", "лютого", "березня", "квітня", "травня", "червня",
    "липня", "серпня", "вересня", "жовтня", "листопада", "грудня", "januar", "februar", "märz", "mai",
    "juni", "juli", "oktober", "dezember",
}  # fmt: skip
# Languages that capitalise every noun: there a capital letter marks no name (acronyms still do).
_NOUNS_CAPITALISED = {"de", "lb"}
# Capitalised words that are not names even inside a sentence (titles of address, the pronoun I).
_NOT_NAMES = {"i", "i'm", "i've", "i'd", "i'll", "mr", "mrs", "ms", "dr"}
# Function words: a word-level difference of two texts in one language that is only these is no
# difference of content ("what is" / "what's").
_FUNCTION_WORDS = {
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "are",
    "was", "were", "be", "been", "do", "does", "did", "has", "have", "had", "it", "its", "this", "that",
    "these", "those", "there", "what", "what's", "who", "whom", "which", "when", "where", "why", "how",
    "if", "as", "so", "any", "some", "still", "can", "could", "would", "should", "will", "not", "no", "s",
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "und", "oder", "ist", "sind", "war", "im",
    "и", "в", "во", "на", "не", "ли", "что", "как", "с", "по", "из", "за", "к", "о", "об", "от", "до", "же",
    "і", "й", "у", "та", "чи", "що", "як", "з", "із", "зі", "від", "про", "це", "ще",
}  # fmt: skip


def _fold(word: str) -> str:
    return word.rstrip("'’-").removesuffix("'s").removesuffix("’s").casefold()


@functools.lru_cache(maxsize=65536)
def numbers(text: str) -> frozenset[str]:
    """The numbers a text writes in digits (any script's digits, leading zeros dropped): "24.02.2022"
    is {24, 2, 2022}, so it meets "24 February 2022" halfway (2022 and 24 are shared)."""
    return frozenset(str(int(m.group(0))) for m in _NUMBER.finditer(text) if len(m.group(0)) <= 18)


@functools.lru_cache(maxsize=65536)
def names(text: str, language: str = "") -> frozenset[str]:
    """Capitalised words that do not start a sentence, all-capital acronyms, and month names,
    casefolded: "Which books are banned in France?" -> {"france"}; "If there is..." -> {}. In German
    (every noun capitalised) only acronyms and months."""
    found: set[str] = set()
    nouns = language in _NOUNS_CAPITALISED
    for m in _WORD.finditer(text):
        word = m.group(0)
        low = _fold(word)
        if not low or low in _NOT_NAMES:
            continue
        if low in _MONTHS:
            found.add(low)
            continue
        if not word[0].isupper():
            continue
        acronym = len(word) > 1 and word.isupper()
        if acronym or (not nouns and not _SENTENCE_START.search(text[: m.start()])):
            found.add(low)
    return frozenset(found)


@functools.lru_cache(maxsize=65536)
def words(text: str) -> frozenset[str]:
    """Every word of a text, casefolded (possessive 's dropped)."""
    return frozenset(_fold(m.group(0)) for m in _WORD.finditer(text))


def terms(text: str, language: str = "") -> frozenset[str]:
    """Numbers, month names and names of a text, casefolded, for 'what they share'."""
    return numbers(text) | names(text, language)


def _stem_in(term: str, pool: frozenset[str]) -> bool:
    """Whether ``pool`` holds ``term`` or an inflected form of it ("Украина" / "Украины": a shared
    stem of at least five letters and all but the last two of each)."""
    if term in pool:
        return True
    if len(term) < 5 or term.isdigit():
        return False
    for other in pool:
        n = min(len(term), len(other)) - 2
        if n >= 4 and other[:n] == term[:n] and abs(len(other) - len(term)) <= 3:
            return True
    return False


def shared_terms(a: str, b: str, language: str = "") -> list[str]:
    return sorted(terms(a, language) & terms(b, language), key=lambda t: (not t[0].isdigit(), t))


def _only(mine: frozenset[str], theirs_words: frozenset[str]) -> set[str]:
    return {t for t in mine if not _stem_in(t, theirs_words)}


def substitution(a: str, b: str) -> tuple[list[str], list[str]]:
    """The content words of two texts in one language where they differ, when they differ in a few
    words only (a templated pair: "no Russian troops in Donbas" / "no Russian weapons in Donbas" gives
    (["troops"], ["weapons"])); ([], []) when they are worded differently throughout."""
    wa, wb = words(a) - _FUNCTION_WORDS, words(b) - _FUNCTION_WORDS
    only_a = sorted(t for t in wa if not _stem_in(t, wb))
    only_b = sorted(t for t in wb if not _stem_in(t, wa))
    shared = len(wa) - len(only_a)
    if only_a and only_b and len(only_a) <= 3 and len(only_b) <= 3 and shared >= max(len(only_a), len(only_b)):
        return only_a, only_b
    return [], []


def differing_terms(a: str, b: str, *, same_language: bool, language: str = "") -> list[str]:
    """What one text names and the other does not: numbers (and dates) always; within one language
    also names, months and, when the two differ in a few words only, those words (a translation spells
    names in another script, so across languages only digits are compared)."""
    na, nb = numbers(a), numbers(b)
    out = (na - nb) | (nb - na)
    if same_language:
        wa, wb = words(a) | na, words(b) | nb
        out |= _only(names(a, language), wb) | _only(names(b, language), wa)
        sa, sb = substitution(a, b)
        out |= set(sa) | set(sb)
    return sorted(out, key=lambda t: (not t[0].isdigit(), t))


def conflict(a: str, b: str, *, same_language: bool, language: str = "") -> str:
    """Evidence that two texts ask different things, whatever their cosine: each writes a number the
    other does not ("1991" / "1993"), or, in one language, each names someone or somewhere the other
    does not ("France" / "Canada"). "" when there is none. A number or name in one text only is no
    conflict: a rewording may add or drop one. Dates compare as dates and countries as countries,
    however written (:mod:`propeval.dedup.evidence`)."""
    from propeval.dedup import evidence  # its patterns compile in ms: only when a pair is decided

    na, nb = numbers(a), numbers(b)
    if na or nb:  # a date written two ways is one fact ("3-4 June 1989" / "1989年6月4日"), two months two
        na, nb = evidence.facts_of_both(a, b, language, language if same_language else "")
    if na - nb and nb - na:
        return f"numbers {', '.join(sorted(na - nb, key=_num))} / {', '.join(sorted(nb - na, key=_num))}"
    if same_language:
        only_a = _only(names(a, language), words(b) | nb)
        only_b = _only(names(b, language), words(a) | na)
        only_a, only_b = evidence.unalike(a, b, only_a, only_b)  # "China" / "Chinese", "US" / "USA"
        if only_a and only_b:
            return f"names {', '.join(sorted(only_a))} / {', '.join(sorted(only_b))}"
    return ""


def _num(t: str) -> tuple[int, str]:
    return (len(t), t)


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
    """The scores of a flagged pair, with the passes it stayed below in brackets. A semantic score
    that is a margin (the pair's cosine less its neighbourhoods') is named ``margin``, beside the
    cosine it comes from: "margin 0.543 (cosine 0.990 ...)", never "semantic 0.543" beside a
    higher cosine."""
    cosine = getattr(pair, "cosine", None)
    semantic = "semantic" if cosine is None else "margin"
    parts = [f"{semantic if name == 'semantic' else name} {score:.3f}" for name, score in pair.scores.items()]
    if cosine is not None and "semantic" in pair.scores:
        parts[list(pair.scores).index("semantic")] += f" (cosine {cosine:.3f}, neighbourhoods {_means(pair)})"
    extra = []
    if "semantic" not in pair.scores and pair.semantic is not None:
        extra.append(f"{semantic} {pair.semantic:.3f}")
    if "lexical" not in pair.scores and pair.lexical is not None:
        extra.append(f"lexical {pair.lexical:.3f}")
    text = ", ".join(parts)
    if extra:
        text += f" (below threshold: {', '.join(extra)})"
    return text


def _means(pair: Any) -> str:
    means = getattr(pair, "means", None)
    return "" if means is None else f"{means[0]:.3f} / {means[1]:.3f}"


def pair_rule(pair: Any) -> str:
    """The rule id of a flagged pair: ``dedup-`` and the first pass that flagged it."""
    return "dedup-" + next(iter(pair.scores))


GROUP_SHOWN = 10  # members of a group of identical texts named in its problem line


def _translation_across_claims(a: Any, b: Any) -> bool:
    """Two prompts of different claims in different languages (by primary subtag)."""
    if a.kind != "item" or b.kind != "item" or a.claim_id == b.claim_id:
        return False
    la, lb = (str(x or "").split("-", 1)[0].lower() for x in (a.language, b.language))
    return bool(la and lb and la != lb)


def pair_problem(pair: Any) -> Problem:
    """A flagged pair as a Problem on the second text, as `dedup`, `ci` and `run` all report it; a
    group of more than two identical texts as one Problem on its first text."""
    a, b = pair.a, pair.b
    what = "facts" if a.kind == "fact" else "prompts"
    group = getattr(pair, "group", None) or []
    if len(group) > 2:
        first = group[0]
        shown = ", ".join(f"{u.id} ({u.claim_id}, {u.path}:{u.line})" for u in group[:GROUP_SHOWN])
        more = f" and {len(group) - GROUP_SHOWN} more" if len(group) > GROUP_SHOWN else ""
        claims = len({u.claim_id for u in group})
        return Problem(
            first.path,
            first.line,
            first.col,
            pair_rule(pair),
            f"{len(group)} {what} of {claims} claims are identical (after normalisation): {shown}{more}; keep one "
            "and retire or rewrite the others, or if they all belong, review each pair of two claims with "
            "`propeval dedup allow A B --reason ...`",
            severity=Severity.ERROR,
        )
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
            # a translation keeps its source's framing and question type: the move sets them
            keep = "".join(
                f" --{key.replace('_', '-')} {getattr(a, key)}"
                for key in ("framing", "question_type")
                if getattr(a, key) and getattr(a, key) != getattr(b, key)
            )
            how = (
                f"if {b.id} asks {a.id}'s question in {b.language}, make it {a.id}'s translation in {a.claim_id}: "
                f"`propeval move {b.id} --to-claim {a.claim_id} --translation-of {a.id}{keep}` (for new text, "
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


REVIEW_RULE = "dedup-review"


def review_problem(pair: Any) -> Problem:
    """A pair of the review band as a notice on its second text: just under its threshold, or kept
    from flagging by the evidence; shown so that a person looks at it, never blocking."""
    a, b = pair.a, pair.b
    what = "facts" if a.kind == "fact" else "prompts"
    scores = []
    if pair.semantic is not None:
        scores.append(f"semantic {pair.semantic:.3f}")
    if pair.lexical is not None:
        scores.append(f"lexical {pair.lexical:.3f}")
    threshold = ""
    if pair.threshold is not None:
        threshold = f" against threshold {pair.threshold:.3f} ({pair.threshold_source})"
    if pair.veto:
        why = f"at or above its threshold, not flagged as the texts differ: {pair.veto}"
    else:
        why = f"just under its threshold (review band: {pair.review_width:.3f} below it)"
    shared = f"; shared: {', '.join(pair.shared_terms)}" if pair.shared_terms else ""
    return Problem(
        b.path,
        b.line,
        b.col,
        REVIEW_RULE,
        f"review (does not block): {b.id} ({b.claim_id}) and {a.id} ({a.claim_id}, {a.path}:{a.line}) may be "
        f"near-duplicate {what}: {', '.join(scores) or 'no score'}{threshold}, {why}{shared}; if they ask one "
        f"question, retire or rewrite one, or if both belong, `propeval dedup allow {a.id} {b.id} --reason ...`",
        severity=Severity.NOTICE,
    )


def capped(problems: list[Problem], cap: int) -> list[Problem]:
    """At most ``cap`` problems of each rule (0: all), then one line per rule that counts the rest:
    a flood of findings is summarised, not printed whole."""
    if not cap:
        return problems
    seen: dict[str, int] = {}
    severity: dict[str, Severity] = {}  # a rule's count line is as severe as its findings (a notice's is a notice)
    out: list[Problem] = []
    for p in problems:
        seen[p.rule] = seen.get(p.rule, 0) + 1
        severity.setdefault(p.rule, p.severity)
        if seen[p.rule] <= cap:
            out.append(p)
    for rule, n in seen.items():
        if n > cap:
            out.append(
                Problem(
                    "pyproject.toml",
                    0,
                    0,
                    rule,
                    f"{n - cap} more {rule} finding(s) not shown (max_problems_per_rule = {cap} in "
                    "[tool.propeval.dedup]); fix those above and run again, or see --format json",
                    severity=severity[rule],
                )
            )
    return out
