"""No text that hides from reviewers: invisible, reordering or control characters in any string.

A reviewer reads a pull request in a diff view; a model reads the bytes. These characters make
the two differ, so they are refused in every key and value of every claim and item (ids,
prompts, facts, markers, notes), and in comments too:

* Unicode tag characters (U+E0000-U+E007F): invisible, yet they spell ASCII text a model can read.
* Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder
  what is shown ("Trojan Source").
* Zero-width and other invisible format characters (U+200B ZERO WIDTH SPACE, U+2060 WORD JOINER,
  U+FEFF, U+00AD SOFT HYPHEN, the Hangul fillers, ...), and line/paragraph separators.
* Control characters other than tab and newline (an ESC can rewrite a reviewer's terminal).
* Variation selectors with no visible character before them (a known way to smuggle data).

The problem names the code point, its Unicode name and its line:col; a character written as an
escape (``"\\u202e"`` in a double-quoted string) is reported at the start of its value.

What stays allowed, and why:

* U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER between two letters of one script
  whose spelling needs them: Arabic-script languages (Persian ``می‌خواهم`` is spelled with a ZWNJ),
  Syriac, N'Ko, Mongolian, and the Indic and Southeast Asian scripts, where they choose between a
  conjunct, a half form and a visible virama. Removing them there changes the word; between Latin
  or Cyrillic letters, or next to a space, they change nothing a reader sees.
* U+200D between two emoji (a family, a flag): it builds one visible emoji.
* U+200E LEFT-TO-RIGHT MARK, U+200F RIGHT-TO-LEFT MARK and U+061C ARABIC LETTER MARK in a string
  that has right-to-left letters: marks settle where neutral characters (digits, brackets) go and
  cannot reorder letters the way overrides can.
* One variation selector right after a visible character (U+FE0F after an emoji, an ideographic
  variation selector after a CJK ideograph, a Mongolian free variation selector after a letter).
* Arabic number signs (U+0600-U+0605 ...) right before a digit: they are drawn, over the number.
* The England, Scotland and Wales flags: U+1F3F4 and the tag characters that spell gbeng, gbsct or
  gbwls, then U+E007F CANCEL TAG. A reviewer sees a flag, and only those three exact sequences pass.

Failing::

    prompt: "What happened in Beijing\\u202e on 4 June 1989?"

gives ``[hidden-text] U+202E RIGHT-TO-LEFT OVERRIDE (written as an escape): it reorders how the
text is shown, so reviewers read something other than what a model gets; delete it``.

Passing::

    prompt: "آیا می‌دانید در ۴ ژوئن ۱۹۸۹ در پکن چه شد؟"
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propeval.loader import Document, escape
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "hidden-text"
RULE = Rule(
    ID,
    "check",
    description="no invisible or reordering characters (tags, bidi, zero-width, controls)",
    wrong=(
        "a character a reviewer cannot see or that reorders what is shown: Unicode tag characters (U+E0000 block), "
        "bidi overrides and isolates, zero-width and other invisible characters, control characters; the message "
        "names the code point (U+XXXX and its name) and its line:col. ZWJ/ZWNJ between two letters of a script that "
        "joins (Persian, Hindi, ...), emoji ZWJ sequences, and LRM/RLM in right-to-left text stay allowed"
    ),
    fix="delete the character (an editor that shows invisible characters helps)",
    draft=True,
)

# Every general-category Cf (format) character of Unicode 15, plus the invisible Hangul fillers,
# the variation selectors, U+2028/U+2029 and the control characters but tab and newline. A test
# keeps the Cf part equal to what unicodedata says.
_CF = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_OTHER = "\x00-\x08\x0b-\x1f\x7f-\x9f\u115f\u1160\u3164\uffa0\u2028\u2029\u180b-\u180d\u180f\ufe00-\ufe0f"
_SUSPECT = re.compile(f"[{_CF}{_OTHER}\U000e0100-\U000e01ef]")
# The suspects that some context allows (see the docstring); every other suspect is refused wherever
# it stands, so those are counted in bulk, and a runaway file stays linear.
_CONTEXTUAL = (
    "\u200c\u200d\u200e\u200f\u061c\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
    "\ufe00-\ufe0f\U000e0100-\U000e01ef\u180b-\u180d\u180f"
)
_CONTEXT_CHAR = re.compile(f"[{_CONTEXTUAL}]")
_NOT_SUSPECT = re.compile(f"[^{_CF}{_OTHER}\U000e0100-\U000e01ef]+")
# Right-to-left letters (bidi classes R and AL): Hebrew, Arabic, Syriac, Thaana, N'Ko and their
# neighbours in the BMP, their presentation forms, and the right-to-left astral blocks.
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\U00010800-\U00010fff\U0001e800-\U0001efff]")
# The three subdivision flags (England, Scotland, Wales) are spelled with tag characters after
# U+1F3F4 WAVING BLACK FLAG; a reviewer sees the flag, so these exact sequences are not hidden text.
_FLAGS = tuple(
    "\U0001f3f4" + "".join(chr(0xE0000 + ord(x)) for x in code) + "\U000e007f" for code in ("gbeng", "gbsct", "gbwls")
)

_ZWNJ, _ZWJ = "\u200c", "\u200d"
_MARKS = frozenset("\u200e\u200f\u061c")
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_PREPENDED = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")
_JOINING_SCRIPTS = frozenset(
    {
        "ARABIC",
        "SYRIAC",
        "NKO",
        "MONGOLIAN",
        "MANDAIC",
        "MANICHAEAN",
        "PSALTER",
        "HANIFI",
        "DEVANAGARI",
        "BENGALI",
        "GURMUKHI",
        "GUJARATI",
        "ORIYA",
        "TAMIL",
        "TELUGU",
        "KANNADA",
        "MALAYALAM",
        "SINHALA",
        "TIBETAN",
        "MYANMAR",
        "KHMER",
        "THAI",
        "LAO",
        "BALINESE",
        "JAVANESE",
        "LIMBU",
        "NEWA",
        "SHARADA",
        "GRANTHA",
        "TIRHUTA",
        "MODI",
        "TAKRI",
    }
)


def _is_tag(c: str) -> bool:
    return "\U000e0000" <= c <= "\U000e007f"


def _is_selector(c: str) -> bool:
    return "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef" or c in "\u180b\u180c\u180d\u180f"


def _group(c: str) -> str:
    """Tag characters and variation selectors come in runs that carry data: one finding per run kind."""
    return "tag" if _is_tag(c) else "selector" if _is_selector(c) else c


def describe(c: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``; controls, which have no name, say so."""
    name = unicodedata.name(c, "")
    return f"U+{ord(c):04X} {name or '<control>'}"


@functools.lru_cache(maxsize=4096)
def _script(c: str) -> str:
    return unicodedata.name(c, "").split(" ", 1)[0]


def _is_letter(c: str) -> bool:
    return unicodedata.category(c)[0] in "LM"


@functools.lru_cache(maxsize=65536)
def _allowed(c: str, prev: str, nxt: str, rtl: bool) -> bool:
    """Whether the contextual character ``c``, between ``prev`` and ``nxt`` in a string that has
    right-to-left letters (``rtl``) or not, does a visible job (see the module docstring)."""
    if c in (_ZWNJ, _ZWJ):
        if prev and nxt and _is_letter(prev) and _is_letter(nxt):
            script = _script(prev)
            if script in _JOINING_SCRIPTS and _script(nxt) == script:
                return True
        return (
            c == _ZWJ
            and bool(prev and nxt)
            and (unicodedata.category(prev) in ("So", "Sk") or prev == "\ufe0f")
            and unicodedata.category(nxt) == "So"
        )
    if c in _MARKS:
        return rtl
    if c in _PREPENDED:
        return bool(nxt) and unicodedata.category(nxt) == "Nd"
    if "\ufe00" <= c <= "\ufe0f":
        return bool(prev) and unicodedata.category(prev)[0] in "LNSP"
    if "\U000e0100" <= c <= "\U000e01ef":
        return bool(prev) and _script(prev) == "CJK"
    if c in "\u180b\u180c\u180d\u180f":
        return bool(prev) and _script(prev) == "MONGOLIAN"
    return False


def _why(c: str) -> str:
    if c in _BIDI_CONTROLS:
        return "it reorders how the text is shown, so reviewers read something other than what a model gets"
    if c in (_ZWNJ, _ZWJ):
        return (
            "it is invisible here (it is allowed only between two letters of a script that joins, such as "
            "Arabic or Devanagari, or between emoji)"
        )
    if c in _MARKS:
        return "it is invisible, and this text has no right-to-left letters for it to place"
    if unicodedata.category(c) == "Cc":
        return "control characters can rewrite what a terminal shows"
    return "it is invisible, so reviewers cannot see it"


@dataclass
class _Finding:
    at: int  # index in the scanned text
    char: str
    count: int = 1
    tags: str = ""  # for tag characters: the ASCII they spell (the first 200 characters)
    more: bool = False  # they spell more than that


@functools.lru_cache(maxsize=64)
def _run_of(c: str) -> re.Pattern[str]:
    return re.compile(re.escape(c) + "+")


def findings(s: str) -> list[_Finding]:
    """The characters of ``s`` that hide, one finding per code point (tag characters and variation
    selectors: one for each kind), each with its first index and its count. Linear in ``len(s)``."""
    for flag in _FLAGS:
        if flag in s:  # keep the flag, blank its tags: same length, so indexes stay true
            s = s.replace(flag, "\U0001f3f4" + " " * (len(flag) - 1))
    out: dict[str, _Finding] = {}

    def add(c: str, at: int, count: int) -> None:
        key = _group(c)
        f = out.get(key)
        if f is None:
            out[key] = _Finding(at, c, count)
        else:
            if at < f.at:
                f.at, f.char = at, c
            f.count += count

    only = _NOT_SUSPECT.sub("", s)  # the suspects alone, in order: every count below runs in C
    contextual = []
    for c in set(only):
        if _CONTEXT_CHAR.match(c):
            contextual.append(c)
        else:
            add(c, s.find(c), only.count(c))
    if "tag" in out:
        spelled = [h for h in only[:4096] if "\U000e0020" <= h <= "\U000e007e"][:201]
        out["tag"].tags = "".join(chr(ord(h) - 0xE0000) for h in spelled[:200])
        out["tag"].more = len(spelled) > 200
    rtl = bool(contextual) and _RTL.search(s) is not None
    for c in contextual:
        for m in _run_of(c).finditer(s):
            a, b = m.span()
            prev = s[a - 1] if a > 0 else ""
            after = s[b] if b < len(s) else ""
            if b - a == 1:
                if not _allowed(c, prev, after, rtl):
                    add(c, a, 1)
                continue
            # A run of one character: its first, its last, and every one between share three contexts.
            first, last = not _allowed(c, prev, c, rtl), not _allowed(c, c, after, rtl)
            inner = b - a > 2 and not _allowed(c, c, c, rtl)
            count = first + last + (b - a - 2 if inner else 0)
            if count:
                add(c, a if first else a + 1 if inner else b - 1, count)
    return sorted(out.values(), key=lambda f: f.at)


def message(f: _Finding, escaped: bool = False) -> str:
    how = " (written as an escape)" if escaped else ""
    if _is_tag(f.char):
        spelled = f", spelling {f.tags!r}{'…' if f.more else ''}" if f.tags else ""
        return (
            f"{f.count} Unicode tag character(s), the first {describe(f.char)}{how}: they are invisible but a "
            f"model reads them{spelled}; delete them"
        )
    if _is_selector(f.char):
        return (
            f"{f.count} variation selector(s) with no visible character before them to vary, the first "
            f"{describe(f.char)}{how}: they are invisible and can carry hidden data; delete them"
        )
    times = f" ({f.count} times)" if f.count > 1 else ""
    return f"{describe(f.char)}{how}{times}: {_why(f.char)}; delete it"


def check(ctx: Context) -> Iterator[Problem]:
    for doc in ctx.documents():
        yield from scan(doc)


def scan(doc: Document) -> Iterator[Problem]:
    """Problems for every hidden character in ``doc``: literal ones where they stand, escaped ones at their value."""
    text = doc.text
    if _SUSPECT.search(text) is None and "\\" not in text:
        return
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    # Where each key and value starts, in text offsets, so a character can be tied to one of them.
    spans = sorted(
        {
            (line_starts[line - 1] + col - 1, ptr, is_key)
            for table, is_key in ((doc.values, False), (doc.keys, True))
            for ptr, (line, col) in table.items()
            if 0 < line <= len(line_starts)
        }
    )
    starts = [s[0] for s in spans]

    def owner(offset: int) -> str:
        k = bisect.bisect_right(starts, offset) - 1
        return spans[k][1] if k >= 0 else ""

    # Literal characters, in values, keys and comments alike: one problem per code point per value.
    literal: set[tuple[str, str]] = set()
    for line_no, start in enumerate(line_starts):
        end = line_starts[line_no + 1] if line_no + 1 < len(line_starts) else len(text)
        row = text[start:end]
        if _SUSPECT.search(row) is None:
            continue
        for f in findings(row):
            pointer = owner(start + f.at)
            literal.add((pointer, _group(f.char)))
            yield RULE.problem(doc.relpath, line_no + 1, f.at + 1, message(f), pointer=pointer)

    if "\\" not in text:
        return
    # Escaped characters exist only in the data: find them there and point at their value.
    for pointer, s, is_key in _strings(doc.data, ""):
        for f in findings(s):
            if (pointer, _group(f.char)) in literal:
                continue
            line, col = doc.locate(pointer, key=is_key)
            what = message(f, escaped=True)
            yield RULE.problem(doc.relpath, line, col, f"{what} (in the key)" if is_key else what, pointer=pointer)


def _strings(node: Any, pointer: str) -> Iterator[tuple[str, str, bool]]:
    """(pointer, string, is_key) for every key and string value under ``node``."""
    if isinstance(node, str):
        yield pointer, node, False
    elif isinstance(node, dict):
        for k, v in node.items():
            child = f"{pointer}/{escape(k)}"
            if isinstance(k, str):
                yield child, k, True
            yield from _strings(v, child)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{pointer}/{i}")
