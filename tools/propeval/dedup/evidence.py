"""What two texts' numbers, dates and names refer to, so the veto (:func:`propeval.dedup.explain.conflict`)
compares facts rather than spellings: "3-4 June 1989", "1989年6月4日", "4 июня 1989", "June 4, 1989" and
"04.06.1989" write one date; "China", "Chinese" and "PRC" name one country, as do "US", "USA",
"American" and "the United States"; "Kiev" and "Kyiv" one city.

The month and country names (every language of the table, each country's English demonym) come
from ``referents.json`` beside this module, generated from Unicode CLDR (babel) and countryinfo by
``scripts/referents_table.py``; this module only finds them in a text (the date patterns below and
the consonant rule of :func:`one_name` are its own). The veto imports it when it first decides a
pair, and the table (20 ms) is read the first time a word stands where a month may, or two texts
name different things: once per process, then about 0.1 ms a pair.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("referents.json")

_WORD = re.compile(r"[^\W_][\w'’-]*", re.UNICODE)
_NUMBER = re.compile(r"\d+")
_ALPHA = r"[^\W\d_]+"
_RANGE = r"(?:\s*[-–—]\s*(\d{1,2}))?"
_OF = r"(?:(?:of|de|del|d['’])\s*)?"
# Dates, most specific first; a word in a month's place counts only when it names a month. A month
# word is matched from a word's start only (a lookbehind), so a long run of letters costs linear time.
_CJK_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2})(?:\s*[-–~至到]\s*(\d{1,2}))?\s*[日号號])?")
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_NUMERIC_DATE = re.compile(r"(?<![\d.,/])(\d{1,2})([./])(\d{1,2})\2(\d{4})(?![\d.,/]\d)")
_DAY_MONTH = re.compile(
    rf"(?<![\d.,])(\d{{1,2}}){_RANGE}(?:st|nd|rd|th|\.|-?го|-?е)?\s+{_OF}({_ALPHA})(?:\s*,?\s+{_OF}(\d{{4}})(?!\d))?"
)
_MONTH_DAY = re.compile(
    rf"(?<![^\W\d_])({_ALPHA})\s+(\d{{1,2}}){_RANGE}(?:st|nd|rd|th)?(?!\d)(?:\s*,?\s+(\d{{4}})(?!\d))?"
)
_MONTH_YEAR = re.compile(rf"(?<![^\W\d_])({_ALPHA})\s+{_OF}(\d{{4}})(?!\d)")
# Languages whose all-numeric dates may put the month first ("04/06/1989" is April in the US).
_MONTH_FIRST = {"en", ""}
_VOWELS = set("aeiouyæøåäöüéèêëíìîïóòôúùûýаеёиоуыэюяіїєй'’")


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    by_start: dict[str, list[str]] = defaultdict(list)
    for form in data["countries"]:
        by_start[form[:4]].append(form)
    data["by_start"] = by_start
    data["cjk"] = sorted((f for f in data["countries"] if _is_cjk(f)), key=len, reverse=True)
    month_stems: dict[str, set[int]] = defaultdict(set)
    for form, number in data["months"].items():
        if len(form) >= 4:
            month_stems[form[:-1]].add(number)
    data["month_stems"] = {s: next(iter(n)) for s, n in month_stems.items() if len(n) == 1}
    return data


def _is_cjk(text: str) -> bool:
    return any("\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" for ch in text)


def _fold(word: str) -> str:
    """As :func:`propeval.dedup.explain.names` folds a word (possessive 's dropped, casefolded)."""
    return word.rstrip("'’-").removesuffix("'s").removesuffix("’s").casefold()


def _key(word: str) -> str:
    return word.replace("ё", "е")


# ----------------------------------------------------------------------------------------- dates


def month(word: str) -> int:
    """The month a word names in any language of the table, inflected or not ("июне" is June); 0 if none."""
    w = _key(word.casefold())
    table = _table()
    if w in table["months"]:
        return int(table["months"][w])
    for cut in (1, 2):
        stem = w[:-cut]
        if len(stem) >= 3 and stem in table["month_stems"]:
            return int(table["month_stems"][stem])
    return 0


def _tokens(year: str | None, mon: int, days: list[str | None]) -> set[str]:
    out = {str(int(year))} if year else set()
    if 1 <= mon <= 12:
        out.add(f"--{mon:02d}")
        out |= {f"--{mon:02d}-{int(d):02d}" for d in days if d and 1 <= int(d) <= 31}
    return out


def dates(text: str, language: str = "") -> tuple[frozenset[str], list[tuple[int, int]]]:
    """The dates a text writes, as ISO 8601 parts: a year ("1989"), a month without its year ("--06"),
    a day ("--06-04"); a range of days gives each day. With the spans they take in the text."""
    found: set[str] = set()
    spans: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return not any(s < m.end() and m.start() < e for s, e in spans)

    for m in _CJK_DATE.finditer(text):
        if free(m) and (m.group(1) or m.group(3)):
            found |= _tokens(m.group(1), int(m.group(2)), [m.group(3), m.group(4)])
            spans.append(m.span())
    for m in _ISO_DATE.finditer(text):
        if free(m):
            found |= _tokens(m.group(1), int(m.group(2)), [m.group(3)])
            spans.append(m.span())
    for m in _NUMERIC_DATE.finditer(text):
        if not free(m):
            continue
        first, second, year = m.group(1), m.group(3), m.group(4)
        found |= _tokens(year, int(second), [first])
        if m.group(2) == "/" and language.split("-")[0] in _MONTH_FIRST and int(first) <= 12:
            found |= _tokens(year, int(first), [second])  # either reading: neither is evidence against
        spans.append(m.span())
    for m in _DAY_MONTH.finditer(text):
        mon = month(m.group(3))
        if free(m) and mon:
            found |= _tokens(m.group(4), mon, [m.group(1), m.group(2)])
            spans.append(m.span())
    for m in _MONTH_DAY.finditer(text):
        mon = month(m.group(1))
        if free(m) and mon:
            found |= _tokens(m.group(4), mon, [m.group(2), m.group(3)])
            spans.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        mon = month(m.group(1))
        if free(m) and mon:
            found |= _tokens(m.group(2), mon, [])
            spans.append(m.span())
    return frozenset(found), spans


@functools.lru_cache(maxsize=65536)
def _facts(text: str, language: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """A text's dates as ISO parts, its other numbers, and the numbers its dates are written with."""
    found, spans = dates(text, language)
    plain: set[str] = set()
    in_dates: set[str] = set()
    for m in _NUMBER.finditer(text):
        if len(m.group(0)) <= 18:
            inside = any(s <= m.start() < e for s, e in spans)
            (in_dates if inside else plain).add(str(int(m.group(0))))
    return found, frozenset(plain), frozenset(in_dates)


def facts(text: str, language: str = "") -> frozenset[str]:
    """The numbers and dates a text writes: every date as its ISO parts (:func:`dates`), and every
    other number in digits (leading zeros dropped), so a date compares equal however it is written."""
    found, plain, _ = _facts(text, language)
    return found | plain


def facts_of_both(a: str, b: str, language_a: str = "", language_b: str = "") -> tuple[frozenset[str], frozenset[str]]:
    """:func:`facts` of two texts, each also holding the numbers of its own dates that the other
    writes as plain numbers: a date only one of them is read as ("on Dec 14": no month name of
    the table) is no evidence against the other ("am 14. Dezember")."""
    da, pa, ia = _facts(a, language_a)
    db, pb, ib = _facts(b, language_b)
    return da | pa | (ia & pb), db | pb | (ib & pa)


# ----------------------------------------------------------------------------------------- names


def _stem_match(query: str, form: str) -> int:
    """How well a phrase matches a country's name word by word, inflection aside: 0 if it does not;
    else the letters the two share: all but the last two of the shorter word, and three at least
    ("Китае" / "китай", "Украины" / "украина", "Americans" / "american")."""
    qs, fs = query.split(), form.split()
    if len(qs) != len(fs):
        return 0
    shared = 0
    for q, f in zip(qs, fs, strict=True):
        if q == f:
            shared += len(q)
            continue
        common = next((i for i, (x, y) in enumerate(zip(q, f, strict=False)) if x != y), min(len(q), len(f)))
        if len(q) < 5 or len(f) < 5 or common < max(3, min(len(q), len(f)) - 2) or abs(len(q) - len(f)) > 3:
            return 0
        shared += common
    return shared


def _country(phrase: str) -> str:
    table = _table()
    key = _key(phrase)
    if key in table["countries"]:
        return str(table["countries"][key])
    best: dict[int, set[str]] = defaultdict(set)
    for form in table["by_start"].get(key[:4], ()):
        score = _stem_match(key, form)
        if score:
            best[score].add(table["countries"][form])
    if best:
        codes = best[max(best)]
        return next(iter(codes)) if len(codes) == 1 else ""
    return ""


@functools.lru_cache(maxsize=65536)
def countries(text: str) -> dict[str, str]:
    """Each word of a text that is part of a country's name, demonym or code, folded as names are,
    with the country's ISO 3166 code: "Did the United States..." -> {"united": "US", "states": "US"}."""
    table = _table()
    out: dict[str, str] = {}
    raw = [m.group(0) for m in _WORD.finditer(text)]
    words = [_fold(w) for w in raw]
    i = 0
    while i < len(words):
        if raw[i].isupper() and raw[i].strip("'’-") in table["codes"]:
            out[words[i]] = table["codes"][raw[i].strip("'’-")]
            i += 1
            continue
        for n in (4, 3, 2, 1):
            if i + n > len(words):
                continue
            code = _country(" ".join(words[i : i + n]))
            if code:
                out.update({w: code for w in words[i : i + n]})
                i += n
                break
        else:
            i += 1
    if _is_cjk(text):
        for form in table["cjk"]:
            if form in text:
                out[form] = table["countries"][form]
    return out


def _skeleton(name: str) -> str:
    """A name's consonants, doubled letters once: transliterations of one name differ mostly in
    their vowels ("Kiev" / "Kyiv", "Gorbachev" / "Gorbachov", "Mohammed" / "Muhammad")."""
    out: list[str] = []
    for ch in name:
        if ch in _VOWELS or not ch.isalpha():
            continue
        if not out or out[-1] != ch:
            out.append(ch)
    return "".join(out)


def one_name(a: str, b: str) -> bool:
    """Whether two different names (folded words) are spellings of one: four letters or more each,
    the same first letter and the same consonants (:func:`_skeleton`)."""
    if len(a) < 4 or len(b) < 4 or a[0] != b[0]:
        return False
    sa, sb = _skeleton(a), _skeleton(b)
    return len(sa) >= 2 and sa == sb


def unalike(a: str, b: str, only_a: set[str], only_b: set[str]) -> tuple[set[str], set[str]]:
    """The names each text writes and the other does not (``only_a``, ``only_b``), less those that
    refer to what the other text names: one country ("Chinese" / "China", "US" / "the United
    States") or one name spelt two ways ("Kiev" / "Kyiv"). Names of two countries stay ("China" /
    "Russia")."""
    if not (only_a and only_b):
        return only_a, only_b
    ca, cb = countries(a), countries(b)
    in_a, in_b = set(ca.values()), set(cb.values())
    left_a = {n for n in only_a if not (n in ca and ca[n] in in_b)}
    left_b = {n for n in only_b if not (n in cb and cb[n] in in_a)}
    pairs = [(x, y) for x in left_a for y in left_b if x not in ca and y not in cb and one_name(x, y)]
    for x, y in pairs:
        left_a.discard(x)
        left_b.discard(y)
    return left_a, left_b
