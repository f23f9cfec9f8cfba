"""Normalisation for comparison: of text (dedup hashes, lexical and semantic passes, frame markers)
and of source URLs (the per-source cap, dedup's "same source").

``normalise`` applies, in order: Unicode NFKC; removal of zero-width and other format characters
(Unicode category ``Cf``: U+200B, U+200C, U+200D, U+2060, U+FEFF, soft hyphen, bidi marks);
case folding; and collapsing every run of whitespace to one space, trimmed.

>>> normalise("  What\u200b happened\\n in  BEIJING? ")
'what happened in beijing?'
>>> normalise("ｆｕｌｌｗｉｄｔｈ") == normalise("fullwidth")
True
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import urlsplit

# Bump when normalise() changes: it is part of every embedding cache key.
VERSION = "nfkc-cf-casefold-ws/1"

_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, drop format (Cf) characters, casefold, collapse whitespace."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return _WS.sub(" ", text.casefold()).strip()


def normalised(text: str) -> list[str]:
    """``[normalise(text), its sha256 hex]``: a text as dedup compares and keys it (a list: records keep it as JSON)."""
    norm = normalise(text)
    return [norm, hashlib.sha256(norm.encode("utf-8")).hexdigest()]


def text_hash(text: str) -> str:
    """sha256 hex of the normalised text: the exact-duplicate key and the cache key."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def normalise_url(url: str) -> str:
    """The URL as compared: no fragment, no trailing slash, lower-case scheme and host.

    >>> normalise_url("HTTPS://Example.org/a/b/?q=1#top")
    'https://example.org/a/b?q=1'
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # not a URL urlsplit can read (an unclosed IPv6 bracket): compared as written
        return url.strip()
    path = parts.path.rstrip("/")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}" + (f"?{parts.query}" if parts.query else "")
