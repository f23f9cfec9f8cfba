"""What loading USE multilingual v3 and embedding one text costs, from its package and from its
converted copy (propeval.embed.useconv), in CPU-seconds, in one run.

    python benchmarks/use_load.py [--rounds 7]

Each round runs two fresh processes, in alternating order: one loads USE the way propeval did
before (the package's own load: inflating its compressed weights, building its tokenizer's tables
in Python), one from the memory-mapped copy in a temporary export folder (converted once before the
rounds, outside the timing). Each imports propeval's USE encoder, loads the model and embeds one
Russian text with one BLAS thread. Printed: the median CPU-seconds of the whole process (user +
system, from wait4) and of the load alone (``time.process_time`` around it, inside the process), the
ratio, and the load average. Both print the same vector (checked).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHILD = """
import sys, time
from pathlib import Path
from propeval.embed.use import load_use
enc = load_use(export_dir=Path(sys.argv[1]) if sys.argv[1] else None)
t = time.process_time()
enc._model()
load = time.process_time() - t
v = enc.encode(["Что сделала армия в центре Пекина в ночь на 3-4 июня 1989 года?"])
print(load, enc.loaded_from, v[0, :4].tolist())
"""


def child(folder: str) -> tuple[float, float, str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools"), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, folder], stdout=subprocess.PIPE, env=env, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read().split(" ", 2)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit("the child failed")
    return usage.ru_utime + usage.ru_stime, float(out[0]), out[1], out[2].strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="propeval-use-load-") as tmp:
        _, _, where, _ = child(tmp)  # converts once, outside the timing
        assert where == "converted", where
        runs: dict[str, list[tuple[float, float]]] = {"package (before)": [], "converted copy": []}
        vectors: set[str] = set()
        for r in range(args.rounds):
            order = [("package (before)", ""), ("converted copy", tmp)]
            for name, folder in order if r % 2 == 0 else reversed(order):
                total, load, where, vec = child(folder)
                assert where == ("converted" if folder else "package"), where
                runs[name].append((total, load))
                vectors.add(vec)
    print(f"USE multilingual v3: load + one text, fresh process, {args.rounds} interleaved rounds, CPU-s")
    print(f"load average {os.getloadavg()[0]:.1f}; same vector from both: {len(vectors) == 1}")
    base = statistics.median(t for t, _ in runs["package (before)"])
    for name, xs in runs.items():
        total = statistics.median(t for t, _ in xs)
        load = statistics.median(lo for _, lo in xs)
        print(f"  {name:17} process {total:5.2f} ({total / base:.2f}x)  load alone {load:5.2f}")


if __name__ == "__main__":
    main()
