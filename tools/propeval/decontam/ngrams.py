"""Tokens, canonical bytes and the n-gram hashing kernel.

**Tokens.** A text is normalised by :func:`propeval.textnorm.normalise` (NFKC, format characters
dropped, case folded, whitespace collapsed); its tokens are then the maximal runs of letters and
digits (``[^\\W_]+``), except that each Han, Hiragana or Katakana character is a token of its own:
Chinese and Japanese are written without spaces, so there an n-gram is n characters. Punctuation
and spaces only separate tokens. An n-gram is n consecutive tokens of one text.

**Fast path.** An ASCII text is not passed through ``normalise``: NFKC and case folding are the
identity and ``lower()`` on ASCII, and the tokens are the runs of ``[A-Za-z0-9]``, so a 256-entry
byte table (:data:`TABLE`: upper case to lower case, every other ASCII byte to 0, a separator)
gives the same tokens at memory speed. In any other text only the runs of non-ASCII characters
are normalised (:func:`canonical`), with C string methods and numpy, never a Python step per
character; the table leaves bytes >= 128 as they are, so both paths meet in one byte form. A
test checks on random text that the tokens are those of ``normalise`` and the regex tokenizer.

**Kernel.** :func:`windows` hashes every window of ``w`` consecutive tokens of a buffer with
a token hash (its first 8 bytes, one unaligned 64-bit read) and a polynomial hash of the tokens
into a window (mod 2**64, numpy prefix sums), so no Python runs per byte or per token, and
numpy's only passes over every byte are the table, the token edges and their positions. A hash
is only a candidate: every window whose hash is in the index is checked against the index's exact
n-gram strings before it counts (:mod:`propeval.decontam.scan`), so a collision costs time, never a
false finding, and equal n-grams always hash equal, so none is missed. The scan hashes every
window of 5 tokens (the index's probe windows) and the longer windows only where a probe window
is in the index (:func:`windows_at`): every window of the index begins with one.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from propeval.textnorm import VERSION as NORM_VERSION
from propeval.textnorm import normalise

# Bump when tokens, canonical bytes or the hash change: it is part of every shard result's key.
VERSION = f"{NORM_VERSION}+tokens-cjk-char/1+first8-poly64/3"

_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FFFF))
_CJK = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")

TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128) else 0) for c in range(256)
)

Q = 0x9E3779B97F4A7C15  # odd, mod 2**64 (token hashes into a window's hash)
# The low k bytes of a little-endian 64-bit word (a token shorter than 8 bytes).
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` after normalisation (the exact path)."""
    return TOKEN.findall(normalise(text))


def canonical(text: str) -> bytes:
    """``text`` as the kernel reads it: ASCII as it is (the table does the rest); anything else
    normalised, with every character that is no part of a token a space, and a space on each side
    of a Han, Hiragana or Katakana character, so the table finds exactly :func:`tokens`.

    Only the runs of non-ASCII characters are normalised (:func:`_canonical_run`), each with the
    ASCII character before it (a letter that a combining mark may compose with): an ASCII
    character is NFKC and case folded already (the table lower-cases it), and no character
    composes with one that follows it, so a text is cut before any ASCII character without
    changing its normal form. English with a curly quote is then 10x faster than normalised
    whole. A text of more than 2 bytes a character in UTF-8 (Chinese: 3) is one run.
    """
    if text.isascii():
        return text.encode("ascii")
    # The runs of non-ASCII characters are the runs of bytes >= 128 of the UTF-8 (a lone surrogate
    # too, with surrogatepass), found by numpy: a regex finds them a character at a time.
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > 2 * len(text):
        return _canonical_run(text).encode("utf-8")
    high = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) >= 128)
    cuts = np.flatnonzero(np.diff(high) > 1)
    firsts = high[np.concatenate(([0], cuts + 1))].tolist()
    lasts = high[np.concatenate((cuts, [len(high) - 1]))].tolist()
    out: list[bytes] = []
    last = 0
    for start, end in zip(firsts, lasts, strict=True):
        if start > last:
            start -= 1
        out.append(raw[last:start])
        out.append(_canonical_run(raw[start : end + 1].decode("utf-8", "surrogatepass")).encode("utf-8"))
        last = end + 1
    out.append(raw[last:])
    return b"".join(out)


def _canonical_run(text: str) -> str:
    """:func:`canonical` of a run of non-ASCII text: :func:`normalise`'s steps, each one C code
    (or numpy) over the whole run, never a Python step per character.

    - NFKC, only if the run is not NFKC already, and only of the parts between Han ideographs
      (U+3400-U+4DBF, U+4E00-U+9FFF): they are NFKC themselves, combine with nothing and are in
      no other character's decomposition, so NFKC of the parts is NFKC of the run (Chinese text
      with full-width punctuation normalises 5x faster);
    - format (Cf) characters removed, then case folding;
    - :func:`normalise`'s whitespace collapse and the regex tokenizer are left out: an ASCII
      separator the table makes one, every character that is neither ASCII nor a word character
      nor Chinese or Japanese becomes a space (a lone surrogate, which ``json`` lets through,
      too), and each Chinese or Japanese character gets a space on each side.
    """
    if not unicodedata.is_normalized("NFKC", text):
        parts = _HAN_RUNS.split(text)  # other text, Han, other text, ...
        parts[0::2] = map(_NFKC, parts[0::2])  # C calls only: no Python function per part
        text = "".join(parts)
    cf_bmp, cf_astral = _format_chars()
    text = cf_bmp.sub("", text)
    if _ASTRAL.search(text):
        text = cf_astral.sub("", text)
    text = _SEPARATORS.sub(" ", text.casefold())
    if len(text) < 64:  # a short run: numpy's set-up costs more than the regex
        return _CJK_RUN.sub(_spaced, text)
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    cjk = _cjk_table()[points]
    if not cjk.any():
        return text
    spaced = np.full((len(points), 3), 32, dtype=np.uint32)  # each CJK character between two spaces
    spaced[:, 1] = points
    keep = np.empty((len(points), 3), dtype=bool)
    keep[:, 0] = keep[:, 2] = cjk
    keep[:, 1] = True
    return spaced[keep].tobytes().decode("utf-32-le")


def _spaced(run: re.Match[str]) -> str:
    return f" {' '.join(run.group())} "


_CJK_RUN = re.compile(rf"[{_CJK}]+")
_HAN_RUNS = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff]+)")
_NFKC = functools.partial(unicodedata.normalize, "NFKC")
_SEPARATORS = re.compile(rf"[^\w\x00-\x7f{_CJK}]+")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


_FORMAT: list[tuple[re.Pattern[str], re.Pattern[str]]] = []


@functools.cache
def format_chars() -> str:
    """The format (Cf) characters of this Python's Unicode database, which :func:`normalise`
    drops: about 0.1 CPU-s to list, so the index lists them once and ships them to every worker
    (:func:`use_format_chars`)."""
    return "".join(chr(c) for c in range(0x80, sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")


def use_format_chars(chars: str) -> None:
    """Remove ``chars`` (:func:`format_chars`) in :func:`canonical`: those of the BMP with one
    regex, the others with a second one only when a text has a character past the BMP (a class of
    BMP characters only is a bitmap, 40x faster)."""
    bmp = "".join(re.escape(c) for c in chars if c <= "\uffff") or "\uffff"
    astral = "".join(re.escape(c) for c in chars if c > "\uffff") or "\U0010ffff"
    _FORMAT[:] = [(re.compile(f"[{bmp}]"), re.compile(f"[{astral}]"))]


def _format_chars() -> tuple[re.Pattern[str], re.Pattern[str]]:
    if not _FORMAT:
        use_format_chars(format_chars())
    return _FORMAT[0]


@functools.cache
def _cjk_table() -> np.ndarray:
    """Whether each code point is a Han, Hiragana or Katakana character (a token of its own)."""
    table = np.zeros(sys.maxunicode + 1, dtype=bool)
    for lo, hi in _CJK_RANGES:
        table[lo : hi + 1] = True
    return table


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
    edges = np.flatnonzero(is_tok[1:] != is_tok[:-1])
    edges += 1
    starts = edges[0::2]
    ends = edges[1::2]
    # A token's hash is its first 8 bytes, those past its end masked off (one unaligned 64-bit
    # read, no pass over every byte): a token shorter than 8 bytes is its own hash, and tokens of
    # 8 bytes or more that share their first 8 hash equal, a candidate that the exact check
    # drops, never a missed n-gram. The window hash mixes them (prefix sums of hash * Q**k, mod 2**64), and a
    # table reads a window's top bits, which depend on every bit of every token.
    words = np.ndarray((len(mapped) - 7,), dtype="<u8", buffer=mapped, strides=(1,))
    length = ends - starts
    np.minimum(length, 8, out=length)
    token_hash = words[starts]
    token_hash &= _MASKS[length]  # a short token's read runs past its end
    tup, _ = _PT.get(len(starts) + 1)
    prefix = np.empty(len(starts) + 1, dtype=np.uint64)
    prefix[0] = 0
    with np.errstate(over="ignore"):
        token_hash *= tup[: len(starts)]
        np.cumsum(token_hash, out=prefix[1:])
    return Tokenised(mapped, starts, ends, prefix)


def windows(tok: Tokenised, w: int) -> np.ndarray:
    """The hash of every window of ``w`` tokens: element i covers tokens i .. i+w-1."""
    count = len(tok.starts) - w + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    _, down = _PT.get(count)
    with np.errstate(over="ignore"):
        out = tok.prefix[w:] - tok.prefix[:count]
        out *= down[:count]
        return out


def windows_at(tok: Tokenised, at: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """The windows of ``w`` tokens that start at the token indexes ``at`` (those that fit):
    (their indexes, their hashes), the hashes equal to :func:`windows`'s at those indexes."""
    at = at[at <= len(tok.starts) - w]
    _, down = _PT.get(len(tok.starts) + 1)
    with np.errstate(over="ignore"):
        return at, (tok.prefix[at + w] - tok.prefix[at]) * down[at]


class Table:
    """The sorted hashes of one window width, with a bit filter in front of the binary search.

    Most windows of a shard are in no index: one gather into the filter (indexed by the hash's
    top bits) rules them out, and only the few that pass (about ``size / slots`` of them) are
    searched.
    """

    def __init__(self, hashes: np.ndarray) -> None:
        self.hashes = np.unique(hashes)
        bits = max(16, min(26, (64 * max(1, len(self.hashes))).bit_length()))
        self.shift = np.uint64(64 - bits)
        self.filter = np.zeros(1 << bits, dtype=bool)
        self.filter[self.hashes >> self.shift] = True

    def __len__(self) -> int:
        return len(self.hashes)

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """Indexes of ``hashes`` that are in the table."""
        if not len(self.hashes) or not len(hashes):
            return np.zeros(0, dtype=np.int64)
        maybe = np.flatnonzero(self.filter[(hashes >> self.shift).view(np.int64)])
        if not len(maybe):
            return maybe
        pos = np.searchsorted(self.hashes, hashes[maybe])
        np.minimum(pos, len(self.hashes) - 1, out=pos)
        return maybe[self.hashes[pos] == hashes[maybe]]
