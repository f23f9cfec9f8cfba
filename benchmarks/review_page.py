"""How fast the review app answers (issue #39's target: a page of a 1,000-item sheet in <= 200 ms).

Starts the real command (`python -m propeval review --no-browser --port 0`) on a temporary corpus
with two sheets, one of 1,000 rows and one of 10, signs in over loopback with httpx, and times, in
interleaved rounds:

* ``static``: GET of the stylesheet (the server's floor: routing, session, headers);
* ``page 10`` and ``page 1000``: GET of a random answer's rating page of each sheet;
* ``save 1000``: POST of one answer's labels to the 1,000-row sheet (the label file, 1,000 lines, and
  the rater's state are rewritten and fsynced, under the rater's lock);
* ``first page 1000``: the first page after the server starts, when the sheet is read (strict loader)
  and indexed; one per server start, over ``--starts`` starts.

Prints median and 90th percentile per case, and each median as a ratio to ``static`` and to
``page 10`` (whether a page's cost grows with the sheet). Run from the repository root:

    .venv/bin/python benchmarks/review_page.py [--rounds 7] [--per-round 30] [--starts 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = '[tool.propeval]\nquestions_dir = "questions"\nschema = "schema.json"\n'
FACTS = [{"id": f"f{n}", "text": f"Fact number {n}: something documented by a cited source, stated plainly."}
         for n in range(1, 5)]  # fmt: skip


def sheet(path: Path, rows: int) -> None:
    rng = random.Random(rows)
    words = [
        "the",
        "army",
        "troops",
        "fired",
        "civilians",
        "square",
        "night",
        "june",
        "official",
        "riot",
        "order",
        "restored",
        "toll",
    ]
    with path.open("w", encoding="utf-8") as fh:
        for n in range(1, rows + 1):
            answer = " ".join(rng.choice(words) for _ in range(120))  # about 800 characters, a typical answer
            row = {"row": f"r{n:04d}", "prompt": f"Question {n}: what happened?", "answer": answer,
                   "language": "en", "facts": FACTS, "frame_markers": [{"language": "en", "text": "riot"}],
                   "fact_states": None, "fact_score": None, "propaganda": None, "frame_adopted": None}  # fmt: skip
            fh.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")


def start(root: Path) -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", "review", "--no-browser", "--port", "0",
         "--sheet", "big.jsonl", "--sheet", "small.jsonl"],
        cwd=root, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
    base, token = url.split("/?token=")
    return proc, base, token


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)


def client(base: str, token: str) -> tuple[Any, str]:
    import httpx

    c = httpx.Client(base_url=base, timeout=60)
    c.get(f"/?token={token}")
    csrf = c.get("/").text.split('name="csrf" content="', 1)[1].split('"', 1)[0]
    c.post("/rater", data={"csrf": csrf, "name": "bench"}, headers={"Origin": base})
    return c, csrf


def ms(fn: Any) -> float:
    t = time.perf_counter()
    r = fn()
    elapsed = (time.perf_counter() - t) * 1000
    assert r.status_code == 200, r.text[:200]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--per-round", type=int, default=30)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, list[float]] = {k: [] for k in ("static", "page 10", "page 1000", "save 1000", "first page 1000")}
    with tempfile.TemporaryDirectory(prefix="propeval-review-bench-") as tmp:
        root = Path(tmp)
        (root / "questions").mkdir()
        (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        shutil.copy(REPO / "schema.json", root / "schema.json")
        shutil.copytree(REPO / "rubrics" / "facts-v1", root / "rubrics" / "facts-v1")
        sheet(root / "big.jsonl", 1000)
        sheet(root / "small.jsonl", 10)
        for _ in range(args.starts):
            proc, base, token = start(root)
            try:
                c, _ = client(base, token)
                times["first page 1000"].append(ms(lambda c=c: c.get("/rate/big/500")))
                c.close()
            finally:
                stop(proc)
        proc, base, token = start(root)
        rng = random.Random(0)
        try:
            c, csrf = client(base, token)
            headers = {"X-CSRF-Token": csrf, "Origin": base}
            c.get("/rate/small/1")
            c.get("/rate/big/1")
            for _ in range(args.rounds):
                for _ in range(args.per_round):
                    n = rng.randint(1, 1000)
                    times["static"].append(ms(lambda: c.get("/static/review.css")))
                    times["page 10"].append(ms(lambda: c.get(f"/rate/small/{rng.randint(1, 10)}")))
                    times["page 1000"].append(ms(lambda n=n: c.get(f"/rate/big/{n}")))
                    values = {f"fact:f{i}": rng.choice(["stated", "missed"]) for i in range(1, 5)}
                    body = {"values": {**values, "propaganda": 0}, "quote": None}
                    times["save 1000"].append(
                        ms(lambda n=n, body=body: c.post(f"/rate/big/{n}/label", json=body, headers=headers))
                    )
            c.close()
        finally:
            stop(proc)
    static = statistics.median(times["static"])
    small = statistics.median(times["page 10"])
    print(f"propeval review, loopback, {args.rounds} rounds x {args.per_round} requests ({os.cpu_count()} cores)")
    print(f"{'case':<18}{'n':>6}{'median ms':>12}{'p90 ms':>10}{'/ static':>10}{'/ page 10':>11}")
    for case, xs in times.items():
        med = statistics.median(xs)
        p90 = statistics.quantiles(xs, n=10)[-1] if len(xs) >= 10 else max(xs)
        print(f"{case:<18}{len(xs):>6}{med:>12.1f}{p90:>10.1f}{med / static:>10.1f}{med / small:>11.2f}")


if __name__ == "__main__":
    main()
