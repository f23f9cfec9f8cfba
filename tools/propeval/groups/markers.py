"""Official frame markers and closed-exit cues, matched on :func:`propeval.textnorm.normalise`d text.

Languages match on their primary subtag: a ``zh`` marker applies to a ``zh-Hans`` item.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from propeval.corpus import Claim
from propeval.settings import primary_subtag
from propeval.textnorm import normalise


def markers(claim: Claim, language: str) -> list[str]:
    p = primary_subtag(language)
    return [text for lang, text in claim.markers if text.strip() and primary_subtag(lang) == p]


def quote(texts: Iterable[str]) -> str:
    return ", ".join(f'"{t}"' for t in texts)


def _spaced(ch: str) -> bool:
    """True for a letter or digit of a script that puts spaces between words (not CJK, kana, Thai...)."""
    return ch.isalnum() and ord(ch) < 0x0E00


_CUES: dict[str, re.Pattern[str]] = {}


def cue_pattern(cue: str) -> re.Pattern[str]:
    pattern = _CUES.get(cue)
    if pattern is None:
        parts = [p.strip() for p in normalise(cue).split("...") if p.strip()]
        ends_word = cue[-1:].isspace()
        regex = []
        for n, part in enumerate(parts):
            r = re.escape(part)
            if _spaced(part[0]):
                r = r"\b" + r
            if (n < len(parts) - 1 or ends_word) and _spaced(part[-1]):
                r += r"\b"
            regex.append(r)
        pattern = re.compile(".*?".join(regex) if regex else r"(?!x)x")
        _CUES[cue] = pattern
    return pattern
