"""Benchmark `propeval decontaminate` on synthetic training shards with planted corpus texts.

Run from the repository root:  python benchmarks/decontaminate.py [--size-mb 1000] [--shards 16] [--reps 3]

It writes the shards to a temporary folder (or --data DIR; never into the repository) and prints:

  * MB/s: wall-clock, and per CPU-second (the scan's own process time summed over workers: the
    per-core figure; and the whole command's, start-up, index and report included), for `--jobs 1`
    (the default command, with the near pass, and the n-gram pass alone, `--near 0`), `--jobs 2`,
    and a real Dask LocalCluster of two single-threaded worker processes; each
    `propeval decontaminate` a fresh subprocess with an empty state folder, medians over --reps;
  * the same 13-gram check written plainly (normalise, regex tokens, a Python set of n-gram tuples,
    one process), in the same run on the first shards (--baseline-mb), and the speed ratio;
  * recall on the planted texts, by kind: verbatim; lightly edited (case and punctuation changed,
    full-width letters and zero-width characters, one word replaced in a text of 10+ words, which
    the n-gram pass misses below 27 tokens and the near pass, ``--near 0.9``, finds); spread across two documents
    of one shard; spread across the last document of one shard and the first of the next;
  * false hits: findings in unplanted control shards (``control-*.jsonl``, --control-mb), and
    findings in the planted shards that no plant explains;
  * peak RSS of the one-process run, on --baseline-mb and on the whole data: memory follows the
    index and the batch (1 MiB of text), not the shards.

The documents are sentences drawn from a pool of 20,000 made of a Zipf-weighted vocabulary that
includes every corpus word, so corpus words are everywhere and only a true plant holds 13 of them
in a row; about 2% of the documents are Chinese (the exact path: NFKC and the regex tokenizer).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

NGRAM_ONLY = "local, 1 process, the n-gram pass alone (--near 0)"

WRAPPER = """
import resource, sys
from propeval.cli import main
sys.argv = ["propeval", *sys.argv[1:]]
try:
    main()
finally:
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)  # the local process pool's workers
    print(f"MAXRSS_KB {r.ru_maxrss}", file=sys.stderr)
    print(f"CPU_S {r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime}", file=sys.stderr)
"""


def corpus_index(n: int = 13) -> Any:
    from propeval.config import load_config
    from propeval.corpus import load_corpus
    from propeval.decontam.index import build, corpus_entries

    entries = corpus_entries(load_corpus(load_config(REPO)))
    return entries, build(entries, n=n)


# --------------------------------------------------------------------------- data


def make_pool(entries: list[Any], rng: random.Random) -> list[str]:
    from propeval.decontam.ngrams import tokens

    corpus_words = sorted({t for _, _, _, text in entries for t in tokens(text) if t.isascii()})
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    made = {"".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(30000)}
    vocab = corpus_words + sorted(made - set(corpus_words))
    rng.shuffle(vocab)
    cum = list(itertools.accumulate(1 / (k + 1) for k in range(len(vocab))))
    pool = []
    for _ in range(20000):
        words = rng.choices(vocab, cum_weights=cum, k=rng.randint(6, 24))
        words[0] = words[0].capitalize()
        pool.append(" ".join(words) + rng.choice(".....?!;"))
    return pool


def zh_doc(rng: random.Random) -> str:
    return "".join(
        chr(rng.randint(0x4E00, 0x62FF)) if rng.random() > 0.08 else "，" for _ in range(rng.randint(300, 900))
    )


def edit(text: str, rng: random.Random, how: str) -> str:
    """A light edit of ``text``: its case and punctuation, its width and invisible characters, or one word."""
    if how == "case+punctuation":
        out = re.sub(r"[,.?!;:]", lambda m: rng.choice([" -", ";", " ...", ""]), text)
        return "".join(c.upper() if rng.random() < 0.3 else c for c in out)
    if how == "unicode":
        out = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalpha() and rng.random() < 0.3 else c for c in text)
        return out.replace(" ", " \u200b", 2)
    words = text.split(" ")
    k = rng.randrange(len(words))
    words[k] = rng.choice(["indeed", "reportedly", "allegedly", "notably"])
    return " ".join(words)


def generate(
    data: Path, size_mb: int, shards: int, control_mb: int, entries: list[Any], index: Any, seed: int
) -> list[dict[str, Any]]:
    """Write the shards and return the plants: where each planted text went and how."""
    rng = random.Random(seed)
    pool = make_pool(entries, rng)
    by_label = {label: text for label, _, _, text in entries}
    searched = [t for t in index.texts]
    # Texts to split or to edit a word of: at least 16 words between spaces (not Chinese).
    long = [t for t in searched if t.tokens >= index.n + 2 and len(by_label[t.label].split(" ")) >= 16]
    # Texts to replace a word of: at least 10 words between spaces and 10 tokens (the shortest a
    # near finding at 0.9 can see with one token changed; a "word" such as "3-4" is two tokens).
    editable = [t for t in searched if t.tokens >= 10 and len(by_label[t.label].split(" ")) >= 10]
    per_shard = size_mb * 1_000_000 // shards
    plants: list[dict[str, Any]] = []

    def doc_text() -> str:
        if rng.random() < 0.02:
            return zh_doc(rng)
        return " ".join(rng.choices(pool, k=rng.randint(8, 40)))

    def write_shard(
        path: Path, budget: int, plant: bool, first_text: str | None, seam: bool = True
    ) -> tuple[str | None, int]:
        lines: list[str] = []
        size = 0
        number = 0
        if first_text is not None:
            number += 1
            lines.append(json.dumps({"id": f"{path.stem}-{number}", "text": first_text}) + "\n")
        while size < budget:
            number += 1
            text = doc_text()
            if plant and rng.random() < 0.0012:
                t = rng.choice(searched)
                how = rng.choice(["verbatim", "case+punctuation", "unicode", "word"])
                if how == "word" and t not in editable:
                    how = "verbatim"
                body = by_label[t.label] if how == "verbatim" else edit(by_label[t.label], rng, how)
                cut = rng.randrange(len(text))
                text = text[:cut] + " " + body + " " + text[cut:]
                plants.append({"kind": how, "label": t.label, "at": [(path.name, number)]})
            elif plant and rng.random() < 0.0003:
                t = rng.choice(long)
                words = by_label[t.label].split(" ")
                k = rng.randint(3, len(words) - 3)
                lines.append(
                    json.dumps({"id": f"{path.stem}-{number}", "text": text + " " + " ".join(words[:k])}) + "\n"
                )
                number += 1
                text = " ".join(words[k:]) + " " + doc_text()
                plants.append(
                    {"kind": "across documents", "label": t.label, "at": [(path.name, number - 1), (path.name, number)]}
                )
            line = json.dumps({"id": f"{path.stem}-{number}", "text": text}) + "\n"
            lines.append(line)
            size += len(line)
        # The seam to the next shard: this shard's last document ends with the first part of a text.
        carry = None
        if plant and seam:
            t = rng.choice(long)
            words = by_label[t.label].split(" ")
            k = rng.randint(3, len(words) - 3)
            number += 1
            lines.append(
                json.dumps({"id": f"{path.stem}-{number}", "text": doc_text() + " " + " ".join(words[:k])}) + "\n"
            )
            carry = " ".join(words[k:]) + " " + doc_text()
            plants.append({"kind": "across shards", "label": t.label, "at": [(path.name, number)]})
        path.write_text("".join(lines), encoding="utf-8")
        return carry, number

    data.mkdir(parents=True, exist_ok=True)
    carry = None
    for k in range(shards):
        path = data / f"shard-{k:03d}.jsonl"
        if carry is not None:
            plants[-1]["at"].append((path.name, 1))
        # The last shard has no next shard: no seam (its first half would be an unrecorded plant).
        carry, _ = write_shard(path, per_shard, True, carry, seam=k < shards - 1)
    count = max(1, round(control_mb * shards / size_mb))
    for k in range(count):
        write_shard(data / f"control-{k:03d}.jsonl", control_mb * 1_000_000 // count, False, None)
    return plants


# --------------------------------------------------------------------------- runs


def run_cli(args: list[str]) -> tuple[dict[str, Any], float, int, float]:
    """`propeval decontaminate ARGS` as a fresh process: its json report, wall seconds, peak RSS
    (KiB), and the CPU seconds of the whole command (start-up, index, scan, report; with its local
    pool's workers, not Dask's)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, "--root", str(REPO), "decontaminate", *args, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - started
    if out.returncode not in (0, 1):
        raise SystemExit(f"propeval decontaminate failed ({out.returncode}): {out.stderr[-2000:]}")
    rss = int(re.search(r"MAXRSS_KB (\d+)", out.stderr).group(1))  # type: ignore[union-attr]
    cpu = float(re.search(r"CPU_S ([0-9.]+)", out.stderr).group(1))  # type: ignore[union-attr]
    return json.loads(out.stdout), wall, rss, cpu


def baseline(
    files: list[Path], entries: list[Any], n: int, min_tokens: int
) -> tuple[int, float, set[tuple[str, int, str]]]:
    """The plain single-process 13-gram check: bytes, CPU seconds, and (shard, line, label) found."""
    from propeval.decontam.ngrams import TOKEN
    from propeval.textnorm import normalise

    grams: dict[tuple[str, ...], set[str]] = {}
    whole: dict[tuple[str, ...], set[str]] = {}
    for label, _, _, text in entries:
        toks = TOKEN.findall(normalise(text))
        if len(toks) >= n:
            for k in range(len(toks) - n + 1):
                grams.setdefault(tuple(toks[k : k + n]), set()).add(label)
        elif len(toks) >= min_tokens:
            whole.setdefault(tuple(toks), set()).add(label)
    lengths = sorted({len(w) for w in whole})
    found: set[tuple[str, int, str]] = set()
    size = 0
    started = time.process_time()
    for path in files:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                size += len(raw)
                toks = TOKEN.findall(normalise(json.loads(raw)["text"]))
                for k in range(len(toks) - n + 1):
                    hit = grams.get(tuple(toks[k : k + n]))
                    if hit:
                        found.update((path.name, number, label) for label in hit)
                for w in lengths:
                    for k in range(len(toks) - w + 1):
                        hit = whole.get(tuple(toks[k : k + w]))
                        if hit:
                            found.update((path.name, number, label) for label in hit)
    return size, time.process_time() - started, found


def recall(plants: list[dict[str, Any]], findings: list[dict[str, Any]]) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Per plant kind (found, planted); control false hits; planted-shard findings no plant explains."""
    places: dict[tuple[str, int, str], int] = {}
    for f in findings:
        name = Path(f["shard"]).name
        places[(name, f["line"], f["label"])] = 1
        if f["next_shard"]:
            places[(Path(f["next_shard"]).name, f["next_line"], f["label"])] = 1
    by_kind: dict[str, list[int]] = {}
    explained: set[tuple[str, int, str]] = set()
    for p in plants:
        keys = [(shard, line, p["label"]) for shard, line in p["at"]]
        hit = any(k in places for k in keys)
        explained.update(keys)
        row = by_kind.setdefault(p["kind"], [0, 0])
        row[0] += hit
        row[1] += 1
    control = sum(1 for f in findings if Path(f["shard"]).name.startswith("control-"))
    unexplained = sum(
        1
        for f in findings
        if not Path(f["shard"]).name.startswith("control-")
        and (Path(f["shard"]).name, f["line"], f["label"]) not in explained
    )
    return {k: (v[0], v[1]) for k, v in sorted(by_kind.items())}, control, unexplained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1000, help="planted shards, MB in total (default 1000)")
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--control-mb", type=int, default=100, help="unplanted control shards, MB")
    parser.add_argument("--baseline-mb", type=int, default=100, help="how much the plain check reads")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--data", type=Path, default=None, help="where to write the shards (default: a temp folder)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    entries, index = corpus_index()
    with tempfile.TemporaryDirectory(prefix="propeval-decon-bench-") as tmp:
        data = args.data or Path(tmp) / "data"
        started = time.perf_counter()
        plants = generate(data, args.size_mb, args.shards, args.control_mb, entries, index, args.seed)
        files = sorted(data.glob("*.jsonl"))
        total = sum(f.stat().st_size for f in files)
        print(
            f"data: {len(files)} shards, {total / 1e6:.0f} MB ({args.control_mb} MB control), {len(plants)} plants, "
            f"written in {time.perf_counter() - started:.0f} s to {data}"
        )
        print(f"index: {len(index.texts)} corpus texts searched, {index.size} windows, n = {index.n}")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")

        from distributed import LocalCluster

        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # no dashboard; its HTTP server on any free port, never 8787
            scheduler_kwargs={"dashboard": False},
            host="127.0.0.1",
        )
        rows: dict[str, list[tuple[float, float, int, float]]] = {}
        report: dict[str, Any] = {}
        engines = {
            "local, 1 process": ["--jobs", "1"],
            NGRAM_ONLY: ["--jobs", "1", "--near", "0"],
            "local, 2 processes": ["--jobs", "2"],
            "dask LocalCluster, 2 workers": ["--scheduler", cluster.scheduler_address],
        }
        for rep in range(args.reps):
            for name, extra in engines.items():
                state = Path(tmp) / f"state-{rep}-{list(engines).index(name)}"  # empty: nothing reused
                doc, wall, rss, command_cpu = run_cli([str(data), "--state-dir", str(state), *extra])
                assert doc["run"]["shards_reused"] == 0, name
                cpu = doc["run"]["cpu_seconds_scanning"]
                mb = doc["bytes"] / 1e6
                rows.setdefault(name, []).append((mb / wall, mb / cpu, rss, mb / command_cpu))
                report[name] = doc
        cluster.close()
        first = [f for f in files if f.name.startswith("shard-")]
        subset, size = [], 0
        for f in first:
            if size >= args.baseline_mb * 1_000_000:
                break
            subset.append(f)
            size += f.stat().st_size
        sub_doc, _, sub_rss, _ = run_cli(
            [*map(str, subset), "--jobs", "1", "--state-dir", str(Path(tmp) / "state-sub")]
        )
        base_bytes, base_cpu, base_found = baseline(subset, entries, index.n, index.min_tokens)

    one = report["local, 1 process"]
    for name, doc in report.items():
        if name == NGRAM_ONLY:  # the same findings but the near pass's; another index digest
            assert doc["findings"] == [f for f in one["findings"] if f["kind"] != "near"]
            continue
        assert {k: v for k, v in doc.items() if k != "run"} == {k: v for k, v in one.items() if k != "run"}, name
    print(
        f"\nThe same report from every engine: yes ({len(one['findings'])} findings, "
        f"{len(one['drop'])} documents to drop; --near 0: the same but the near findings)\n"
    )
    print(
        "| engine | MB/s wall | MB per CPU-second of the scan (per core) | MB per CPU-second of the whole command "
        "| peak RSS of the main process |"
    )
    print("| --- | --- | --- | --- | --- |")
    for name, values in rows.items():
        # Dask's workers are not children of the command: their CPU is only in the scan's figure.
        whole = "—" if "dask" in name else f"{statistics.median(v[3] for v in values):.1f}"
        print(
            f"| {name} | {statistics.median(v[0] for v in values):.1f} | {statistics.median(v[1] for v in values):.1f} "
            f"| {whole} | {statistics.median(v[2] for v in values) / 1024:.0f} MiB |"
        )
    ours_cpu = sub_doc["bytes"] / 1e6 / sub_doc["run"]["cpu_seconds_scanning"]
    base = base_bytes / 1e6 / base_cpu
    ours_found = {
        (Path(f["shard"]).name, f["line"], f["label"]) for f in sub_doc["findings"] if f["kind"] not in ("seam", "near")
    }
    print(
        f"\nplain single-process 13-gram check on the first {base_bytes / 1e6:.0f} MB: {base:.1f} MB per CPU-second; "
        f"propeval on the same shards, 1 process: {ours_cpu:.1f} MB per CPU-second: {ours_cpu / base:.1f}x; "
        f"same documents and texts found (seams and near findings aside): "
        f"{'yes' if ours_found == base_found else 'NO'}"
    )
    print(
        f"peak RSS, 1 process: {sub_rss / 1024:.0f} MiB on {sub_doc['bytes'] / 1e6:.0f} MB, "
        f"{statistics.median(v[2] for v in rows['local, 1 process']) / 1024:.0f} MiB on {one['bytes'] / 1e6:.0f} MB"
    )
    by_kind, control, unexplained = recall(plants, one["findings"])
    kinds: dict[str, int] = {}
    for f in one["findings"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    print(f"findings by kind: {dict(sorted(kinds.items()))}; near threshold {one['near']}")
    print("\n| plant | found / planted | recall |")
    print("| --- | --- | --- |")
    for kind, (hit, planted) in by_kind.items():
        print(f"| {kind} | {hit} / {planted} | {100 * hit / planted:.1f}% |")
    edited = [by_kind[k] for k in ("case+punctuation", "unicode", "word") if k in by_kind]
    if edited:
        hit, planted = sum(e[0] for e in edited), sum(e[1] for e in edited)
        print(f"| lightly edited, all | {hit} / {planted} | {100 * hit / planted:.1f}% |")
    print(
        f"\nfalse hits: {control} in the {args.control_mb} MB unplanted control; {unexplained} findings in the planted "
        f"shards that no plant explains"
    )
    print(
        f"(rusage of this process's children: "
        f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB peak)"
    )


if __name__ == "__main__":
    main()
