"""Benchmark: `propeval answer` then `propeval grade` on the starter corpus against a faulty provider.

The loopback server (``propeval.judge.loopback.FaultScript``) answers a seeded share of requests
(30% by default) with a fault drawn evenly from every kind it knows: truncated, non-JSON,
non-UTF-8 and wrong-shape 200s, ``{}``, ``choices: []``, ``message: null``, a lone surrogate, an
over-long integer, an error object sent with 200, 429, 500, 503, a connection reset, a reply
trickled one byte every 50 ms (under the read timeout, over the request deadline), and 100 MB
bodies with and without Content-Length. Each command runs as a fresh process (the real CLI),
with a run deadline, and is rerun until it exits 0 (at most ``--passes`` times), as a user would.

It prints, per pass, the exit code and wall time; then the faults served, the final tally, the
largest memory of any CLI process, and the three figures that must be 0: crashes (an exit code
other than 0 or 3, or a traceback), lost items (an active item with no final record) and
duplicated items (an item with more than one final record).

    PYTHONPATH=tools python benchmarks/judge_faults.py [--rate 0.3] [--seed 16] [--passes 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from propeval.judge import runs  # noqa: E402
from propeval.judge.loopback import FaultScript, LoopbackServer  # noqa: E402

JUDGE = """
[tool.propeval.judge]
concurrency = 8
timeout = 2.0
connect_timeout = 2.0
request_deadline = 3.0
run_deadline = {run_deadline}
max_reply_bytes = 1000000
max_attempts = 6
backoff_base = 0.05
backoff_max = 0.5
max_total_wait = 5.0
max_reasks = 1
max_tokens = 256
answer_endpoint = "loop"
judge_endpoint = "loop"

[tool.propeval.judge.endpoints.loop]
base_url = "{url}"
model = "fault-bench"
response_format = "json_schema"
"""


def build(root: Path, url: str, run_deadline: float) -> None:
    """The starter corpus, its schema and rubrics, and its [tool.propeval] config pointed at ``url``."""
    for name in ("questions", "rubrics"):
        shutil.copytree(ROOT / name, root / name)
    shutil.copy(ROOT / "schema.json", root / "schema.json")
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    ours = config[config.index("[tool.propeval]") :].split("\n[tool.propeval.judge]")[0]
    (root / "pyproject.toml").write_text(ours + JUDGE.format(url=url, run_deadline=run_deadline), encoding="utf-8")


def passes(root: Path, args: list[str], limit: int) -> list[tuple[int, float, bool, str]]:
    """Run ``propeval *args`` until it exits 0: (exit code, seconds, crashed, last stderr line) per pass."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), "XDG_CACHE_HOME": str(root / ".cache")}
    out = []
    for _ in range(limit):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "propeval", *args], cwd=root, env=env, capture_output=True, text=True
        )
        took = time.perf_counter() - t0
        crashed = proc.returncode not in (0, 3) or "Traceback" in proc.stderr + proc.stdout
        failed = [x for x in proc.stderr.splitlines() if x[:1] == "i" and ": " in x]
        last = "; ".join(failed[:2] + (proc.stderr.strip().splitlines() or [""])[-1:])
        out.append((proc.returncode, took, crashed, last))
        if proc.returncode == 0 or crashed:
            break
    return out


def final_counts(path: Path, final: tuple[str, ...]) -> Counter[str]:
    """How many final records each item has in a run file (read as the engine reads it)."""
    counts: Counter[str] = Counter()
    for _, rec in runs.records(path):
        if rec.get("status") in final:
            counts[str(rec["item_id"])] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=0.3, help="share of requests answered with a fault")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--passes", type=int, default=5, help="most runs of each command")
    ap.add_argument("--run-deadline", type=float, default=120.0, help="[tool.propeval.judge] run_deadline, seconds")
    a = ap.parse_args()

    script = FaultScript(a.seed, a.rate, drip=0.05, huge_bytes=100_000_000)
    start = time.perf_counter()
    with LoopbackServer(script) as srv, tempfile.TemporaryDirectory(prefix="propeval-faults-") as tmp:
        root = Path(tmp)
        build(root, srv.base_url, a.run_deadline)
        done = {
            "answer": passes(root, ["answer", "--run-id", "bench"], a.passes),
            "grade": passes(root, ["grade", "bench", "--rubric", "facts-v1"], a.passes),
        }
        wall = time.perf_counter() - start
        from propeval.config import load_config
        from propeval.corpus import load_corpus

        active = {i.id for i in load_corpus(load_config(root)).active_items()}
        run = root / "runs" / "bench"
        answers = runs.latest(run / runs.ANSWERS)
        grades = runs.latest(run / runs.grades_file("facts-v1"))
        answered = final_counts(run / runs.ANSWERS, runs.FINAL_ANSWER)
        graded = final_counts(run / runs.grades_file("facts-v1"), runs.FINAL_GRADE)
        raw_lines = sum(1 for _ in (run / runs.ANSWERS).open("rb")) + sum(
            1 for _ in (run / runs.grades_file("facts-v1")).open("rb")
        )
        size = (run / runs.ANSWERS).stat().st_size + (run / runs.grades_file("facts-v1")).stat().st_size

    print(
        f"starter corpus: {len(active)} active items; {a.rate:.0%} faults, seed {a.seed}; "
        f"run_deadline {a.run_deadline:g}s, request_deadline 3s, read timeout 2s"
    )
    print(f"{'command':<8}{'pass':>5}{'exit':>6}{'seconds':>9}  last stderr line")
    crashes = 0
    for name, rows in done.items():
        for n, (code, took, crashed, last) in enumerate(rows, start=1):
            crashes += crashed
            print(f"{name:<8}{n:>5}{code:>6}{took:>9.1f}  {last[:160]}")
    served = sum(script.counts.values())
    faults = {k: v for k, v in sorted(script.counts.items()) if k != "ok"}
    print(f"requests served: {served}; faults: {sum(faults.values())} ({sum(faults.values()) / served:.1%})")
    print("  " + ", ".join(f"{k} {v}" for k, v in faults.items()))
    lost_answers = sorted(active - set(answered))
    lost_grades = sorted({i for i, r in answers.items() if r.get("status") == "answered"} - set(graded))
    dup = sorted(i for i, n in (answered + graded).items() if n > (answered[i] > 0) + (graded[i] > 0))
    print(f"answers: {dict(Counter(r['status'] for r in answers.values()))}")
    print(f"grades:  {dict(Counter(r['status'] for r in grades.values()))}")
    print(f"fact scores: {dict(sorted(Counter(r.get('fact_score') for r in grades.values()).items(), key=str))}")
    print(f"run files: {raw_lines} lines, {size / 1e6:.2f} MB (replies capped at 1 MB, text at max_tokens x 8)")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory of a CLI process: {peak:.0f} MB (max RSS)")
    print(f"crashes: {crashes}")
    print(f"lost: {len(lost_answers) + len(lost_grades)}  {(lost_answers + lost_grades)[:5]}")
    print(f"duplicated: {len(dup)}  {dup[:5]}")
    print(f"wall time: {wall:.1f} s")
    if crashes or lost_answers or lost_grades or dup:
        sys.exit(1)


if __name__ == "__main__":
    main()
