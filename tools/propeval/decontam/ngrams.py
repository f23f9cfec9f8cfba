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

**Kernel.** :func:`windows` hashes every window of ``w`` consecutive tokens of a buffer with
a token hash (its length and its first and last 8 bytes, mixed) and a polynomial hash of the
tokens into a window (mod 2**64, numpy prefix sums), so no Python runs per byte or per token, and
numpy's only passes over every byte are the table, the token edges and their positions. A hash
is only a candidate: every window whose hash is in the index is checked against the index's exact
n-gram strings before it counts (:mod:`propeval.decontam.scan`), so a collision costs time, never a
false finding, and equal n-grams always hash equal, so none is missed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from propeval.textnorm import VERSION as NORM_VERSION
from propeval.textnorm import normalise

# Bump when tokens, canonical bytes or the hash change: it is part of every shard result's key.
VERSION = f"{NORM_VERSION}+tokens-cjk-char/1+mix64-poly64/2"

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")

TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128) else 0) for c in range(256)
)

Q = 0x9E3779B97F4A7C15  # odd, mod 2**64 (token hashes into a window's hash)
# Odd 64-bit multipliers (golden ratio, xxHash, murmur3 finaliser) for the token hash.
_K1, _K2, _K3, _K4 = (
    np.uint64(k) for k in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xFF51AFD7ED558CCD)
)
# The low k bytes of a little-endian 64-bit word (a token shorter than 8 bytes).
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)


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
    """``base**k`` and ``base**-k`` mod 2**bits for k < len, grown on demand."""

    def __init__(self, base: int, bits: int = 64) -> None:
        self.dtype = np.uint64 if bits == 64 else np.uint32
        self.base = base % 2**bits
        self.inv = pow(self.base, -1, 2**bits)
        self.up = np.ones(0, dtype=self.dtype)
        self.down = np.ones(0, dtype=self.dtype)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.up) < n:
            size = max(n, 2 * len(self.up), 1 << 16)
            self.up = _geometric(self.base, size, self.dtype)
            self.down = _geometric(self.inv, size, self.dtype)
        return self.up[:n], self.down[:n]


def _geometric(base: int, n: int, dtype: Any) -> np.ndarray:
    out = np.full(n, base, dtype=dtype)
    out[0] = 1
    with np.errstate(over="ignore"):
        return np.cumprod(out, dtype=dtype)  # wraps mod 2**bits, as intended


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
    # A separator in front and eight behind: token edges are then where a byte and the one before
    # it differ, alternately a start and an end, and an 8-byte read at any token start stays inside.
    mapped = np.frombuffer(b"".join((b"\x00", buf.translate(TABLE), bytes(8))), dtype=np.uint8)
    is_tok = mapped != 0
    edges = np.flatnonzero(is_tok[1:] != is_tok[:-1]) + 1
    starts = edges[0::2]
    ends = edges[1::2]
    # A token's hash mixes its length, its first 8 bytes and its last 8 (one unaligned 64-bit read
    # each, no pass over every byte). Tokens longer than 16 bytes that differ only in the middle
    # hash equal: a candidate that the exact check drops, never a missed n-gram.
    words = np.ndarray((len(mapped) - 7,), dtype="<u8", buffer=mapped, strides=(1,))
    length = ends - starts
    with np.errstate(over="ignore"):
        mask = _MASKS[np.minimum(length, 8)]  # a short token's read runs past its end
        first = words[starts] & mask
        last = words[np.maximum(ends - 8, starts)] & mask
        token_hash = first * _K1 + last * _K2 + length.astype(np.uint64) * _K3
        token_hash ^= token_hash >> np.uint64(29)
        token_hash *= _K4
        token_hash ^= token_hash >> np.uint64(32)
        tup, _ = _PT.get(len(starts) + 1)
        prefix = np.empty(len(starts) + 1, dtype=np.uint64)
        prefix[0] = 0
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


class Table:
    """The sorted hashes of one window width, with a bit filter in front of the binary search.

    Most windows of a shard are in no index: one gather into the filter (``hash & mask``) rules
    them out, and only the few that pass (about ``size / slots`` of them) are searched.
    """

    def __init__(self, hashes: np.ndarray) -> None:
        self.hashes = np.unique(hashes)
        slots = 1 << max(16, min(26, (64 * max(1, len(self.hashes))).bit_length()))
        self.mask = np.uint64(slots - 1)
        self.filter = np.zeros(slots, dtype=bool)
        self.filter[self.hashes & self.mask] = True

    def __len__(self) -> int:
        return len(self.hashes)

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """Indexes of ``hashes`` that are in the table."""
        if not len(self.hashes) or not len(hashes):
            return np.zeros(0, dtype=np.int64)
        maybe = np.flatnonzero(self.filter[hashes & self.mask])
        if not len(maybe):
            return maybe
        pos = np.searchsorted(self.hashes, hashes[maybe])
        np.minimum(pos, len(self.hashes) - 1, out=pos)
        return maybe[self.hashes[pos] == hashes[maybe]]
