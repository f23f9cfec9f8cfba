"""Tokens, canonical bytes and the n-gram hashing kernel.

**Tokens.** A text is normalised by :func:`propeval.textnorm.normalise` (NFKC, format characters
dropped, case folded, whitespace collapsed); its tokens are then the maximal runs of letters and
digits (``[^\\W_]+``), except that each Han, Hiragana or Katakana character is a token of its own:
Chinese and Japanese are written without spaces, so there an n-gram is n characters. Punctuation
and spaces only separate tokens. An n-gram is n consecutive tokens of one text.

**Fast path.** An ASCII text is not passed through ``normalise``: NFKC and case folding are the
identity and ``lower()`` on ASCII, and the tokens are the runs of ``[A-Za-z0-9]``, so a 256-entry
byte table (:data:`TABLE`: upper case to lower case, every other ASCII byte to 0, a separator)
gives the same tokens at memory speed. Any other text takes the exact path (:func:`canonical`),
which writes its tokens separated by spaces; the table leaves bytes >= 128 as they are, so both
paths meet in one byte form.

**Kernel.** :func:`windows` hashes every window of ``w`` consecutive tokens of a buffer with two
polynomial hashes mod 2**64, computed with numpy prefix sums, so no Python runs per byte or per
token: a token's hash is ``sum(byte[k] * P**k)``, a window's is ``sum(token[k] * Q**k)``. A hash
is only a candidate: every window whose hash is in the index is checked against the index's exact
n-gram strings before it counts (:mod:`propeval.decontam.scan`), so a collision costs time, never
a false finding, and equal n-grams always hash equal, so none is missed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from propeval.textnorm import VERSION as NORM_VERSION
from propeval.textnorm import normalise

# Bump when tokens, canonical bytes or the hash change: it is part of every shard result's key.
VERSION = f"{NORM_VERSION}+tokens-cjk-char/1+poly64/1"

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")

TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128) else 0) for c in range(256)
)

P = np.uint64(0x100000001B3)  # odd, so it has an inverse mod 2**64
Q = np.uint64(0x9E3779B97F4A7C15)


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` after normalisation (the exact path)."""
    return TOKEN.findall(normalise(text))


def canonical(text: str) -> bytes:
    """``text`` as the kernel reads it: ASCII as it is (the table does the rest), anything else
    normalised and tokenised exactly, tokens separated by spaces."""
    if text.isascii():
        return text.encode("ascii")
    return " ".join(tokens(text)).encode("utf-8")


class _Powers:
    """``base**k`` and ``base**-k`` mod 2**64 for k < len, grown on demand."""

    def __init__(self, base: np.uint64) -> None:
        self.base = int(base)
        self.inv = pow(self.base, -1, 2**64)
        self.up = np.ones(0, dtype=np.uint64)
        self.down = np.ones(0, dtype=np.uint64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.up) < n:
            size = max(n, 2 * len(self.up), 1 << 16)
            self.up = _geometric(self.base, size)
            self.down = _geometric(self.inv, size)
        return self.up[:n], self.down[:n]


def _geometric(base: int, n: int) -> np.ndarray:
    out = np.full(n, np.uint64(base), dtype=np.uint64)
    out[0] = 1
    with np.errstate(over="ignore"):
        return np.cumprod(out, dtype=np.uint64)  # wraps mod 2**64, as intended


_PB = _Powers(P)
_PT = _Powers(Q)


@dataclass
class Tokenised:
    """A buffer's bytes through the table, and where its tokens start and end."""

    mapped: np.ndarray  # uint8: lower-cased token bytes, 0 for separators
    starts: np.ndarray  # int64 byte offset of each token
    ends: np.ndarray  # int64 byte offset just past each token
    prefix: np.ndarray  # uint64 prefix sums of token hashes * Q**k (len = tokens + 1)

    def text(self, first: int, last: int) -> str:
        """Tokens ``first`` .. ``last`` (inclusive) joined by single spaces."""
        raw = self.mapped[self.starts[first] : self.ends[last]].tobytes()
        return " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\x00") if part)


def tokenise(buf: bytes) -> Tokenised:
    """Map ``buf`` through :data:`TABLE`, find its tokens and hash each one (all in numpy)."""
    mapped = np.frombuffer(buf.translate(TABLE), dtype=np.uint8)
    # Token edges alternate: a start, then its end.
    edges = np.flatnonzero(np.diff((mapped != 0).view(np.int8), prepend=np.int8(0), append=np.int8(0)))
    starts = edges[0::2]
    ends = edges[1::2]
    up, down = _PB.get(len(mapped) + 1)
    with np.errstate(over="ignore"):
        byte_prefix = np.zeros(len(mapped) + 1, dtype=np.uint64)
        np.cumsum(mapped * up[: len(mapped)], out=byte_prefix[1:])
        token_hash = (byte_prefix[ends] - byte_prefix[starts]) * down[starts]
        tup, _ = _PT.get(len(starts) + 1)
        prefix = np.zeros(len(starts) + 1, dtype=np.uint64)
        np.cumsum(token_hash * tup[: len(starts)], out=prefix[1:])
    return Tokenised(mapped, starts, ends, prefix)


def windows(tok: Tokenised, w: int) -> np.ndarray:
    """The hash of every window of ``w`` tokens: element i covers tokens i .. i+w-1."""
    count = len(tok.starts) - w + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    _, down = _PT.get(count)
    with np.errstate(over="ignore"):
        return (tok.prefix[w:] - tok.prefix[:count]) * down[:count]


def member(hashes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Indexes of ``hashes`` found in the sorted array ``table``."""
    if not len(table) or not len(hashes):
        return np.zeros(0, dtype=np.int64)
    pos = np.searchsorted(table, hashes)
    np.minimum(pos, len(table) - 1, out=pos)
    return np.flatnonzero(table[pos] == hashes)
