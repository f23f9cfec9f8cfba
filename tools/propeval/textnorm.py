"""Text normalisation for comparing phrases (frame markers, cues) against prompts.

``normalise`` makes visually equal text compare equal: full-width and compatibility forms fold
(NFKC), invisible format characters (zero-width space and joiners, soft hyphen, bidi marks: Unicode
category Cf) are dropped, every run of whitespace becomes one space, and case is folded
(``casefold``, so German ß matches ss).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalise", "primary_subtag"]

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, format characters (category Cf) removed, whitespace folded to single spaces, casefolded.

    Leading and trailing whitespace is removed. NFKC runs again after casefolding, because folding
    can yield characters that NFKC would still compose.

    >>> normalise("Counter\u200b-Revolutionary\u00a0\u00a0 RIOT ")
    'counter-revolutionary riot'
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = _SPACE.sub(" ", text).strip()
    return unicodedata.normalize("NFKC", text.casefold())


def primary_subtag(tag: str) -> str:
    """The primary language subtag of a BCP 47 tag, lower-cased: ``zh-Hans`` -> ``zh``."""
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()
