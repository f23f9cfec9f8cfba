"""How fast the review app answers at 1k and 10k items, for one or more versions of the code in one run.

For each size it writes a temporary corpus (N items under 100 claims), a graded run of every item
(answers and facts-v1 grades, as `propeval grade` writes them) and an N-row sheet, then for each
``--code NAME=TOOLS_DIR`` (the package folder put first on PYTHONPATH: ``before=/path/to/main/tools``,
``after=tools``) starts the real command (`python -m propeval review --no-browser --port 0 --sheet
sheet.jsonl`, and once without the sheet for the runs and the ledger), signs in over loopback with
httpx, and times:

* ``serving`` / ``start-up``: from the process start to its "serving" line, and to its first rating
  page of the N-row sheet answered, in wall time and in the server's CPU time (``cpu``, all its
  threads: what a loaded machine does not blur); the first of ``--starts`` starts, then the median
  of the others ("again": the sheet checked at the first start is not checked again);
* ``rate page``: a random answer's rating page (median);
* ``save``: one answer's labels POSTed (median and p90 over ``--saves``);
* ``run first`` / ``run page`` / ``run search``: the run viewer's first request (the run read and
  indexed), then any page of it (median over ``--pages`` pages spread over the run), and a text
  search that matches nothing;
* ``ledger first`` / ``ledger page``: the answerability ledger likewise;
* ``chromium run`` / ``chromium ledger``: with ``--chromium``, Debian's Chromium (Playwright) loading a
  page of the run and of the ledger (to the ``load`` event; median of 3).

Each server gets user folders of its own under the temporary folder (no real cache is written).
Run from the repository root:

    .venv/bin/python benchmarks/review_page.py --sizes 1000 10000 \\
        --code before=/path/to/main/tools --code after=tools --chromium
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
WORDS = ["the", "army", "troops", "fired", "civilians", "square", "night", "june", "official", "riot", "order",
         "restored", "toll"]  # fmt: skip
CLAIMS = 100


def claim_yaml(cid: str) -> str:
    facts = "".join(f"\n  - id: {f['id']}\n    text: {f['text']}" for f in FACTS)
    return (
        f"id: {cid}\nkind: censorship\ntitle: Event number {cid}\nfacts:{facts}\n"
        "source_url: https://en.wikipedia.org/wiki/1989_Tiananmen_Square_protests_and_massacre\n"
        'source_date: "2024-05-01"\nanchor: Death toll\ncategories: [freedom_of_expression]\n'
        "official_frame_markers:\n  - text: counter-revolutionary riot\n    language: en\n"
    )


def corpus(root: Path, n: int) -> None:
    """N items under CLAIMS claims, a graded run of every item, and an N-row sheet."""
    rng = random.Random(n)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    shutil.copy(REPO / "schema.json", root / "schema.json")
    shutil.copytree(REPO / "rubrics" / "facts-v1", root / "rubrics" / "facts-v1")
    answers, grades, sheet = [], [], []
    for c in range(1, CLAIMS + 1):
        folder = root / "questions" / f"c{c:04d}"
        folder.mkdir(parents=True)
        (folder / "claim.yaml").write_text(claim_yaml(f"c{c:04d}"), encoding="utf-8")
    states = {"f1": "stated", "f2": "missed", "f3": "stated", "f4": "missed"}
    for i in range(1, n + 1):
        iid, cid = f"i{i:05d}", f"c{(i % CLAIMS) + 1:04d}"
        prompt = f"Question {i}: what happened in event {cid} on the night of {rng.choice(WORDS)}?"
        (root / "questions" / cid / f"{iid}.yaml").write_text(
            f"id: {iid}\nclaim_id: {cid}\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
            f"prompt: {json.dumps(prompt)}\nstatus: active\n",
            encoding="utf-8",
        )
        answer = " ".join(rng.choice(WORDS) for _ in range(120))  # about 800 characters, a typical answer
        meta = {"language": "en", "framing": "neutral", "question_type": "named_fact", "categories": []}
        answers.append({"item_id": iid, "model": "m", "item": meta, "status": "answered", "answer": answer,
                        "finish_reason": "stop"})  # fmt: skip
        verdict = {"rationale": "r", "facts": [{"id": k, "state": v, "evidence": None} for k, v in states.items()],
                   "propaganda": 0, "frame_adopted": None}  # fmt: skip
        grades.append({"item_id": iid, "model": "m", "rubric": "facts-v1", "judge_model": "j", "status": "scored",
                       "fact_states": states, "fact_score": 2, "propaganda": 0, "propaganda_judged": 0,
                       "frame_adopted": None, "raw": json.dumps(verdict), "verdict": verdict,
                       "reason": None})  # fmt: skip
        sheet.append({"row": f"r{i:05d}", "prompt": prompt, "answer": answer, "language": "en", "facts": FACTS,
                      "frame_markers": [{"language": "en", "text": "riot"}], "fact_states": None,
                      "fact_score": None, "propaganda": None, "frame_adopted": None})  # fmt: skip
    run = root / "runs" / "r1"
    run.mkdir(parents=True)
    for name, rows in (("runs/r1/answers.jsonl", answers), ("runs/r1/grades-facts-v1.jsonl", grades),
                       ("sheet.jsonl", sheet)):  # fmt: skip
        with (root / name).open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")


def start(root: Path, tools: str, home: Path, *args: str) -> tuple[subprocess.Popen[str], str, str, float]:
    env = {**os.environ, "PYTHONPATH": tools}
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env[var] = str(home / var.lower())
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", "review", "--no-browser", "--port", "0", *args],
        cwd=root, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
    base, token = url.split("/?token=")
    return proc, base, token, t


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system, every thread) a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)


def client(base: str, token: str) -> tuple[Any, str]:
    """A signed-in client and its write key, from either sign-in: the redirect's fragment (a
    server-side session) or the page's csrf meta tag (a signed cookie)."""
    import httpx

    c = httpx.Client(base_url=base, timeout=600, follow_redirects=False)
    location = c.get(f"/?token={token}").headers.get("location", "")
    if "#write=" in location:
        key = location.split("#write=", 1)[1]
    else:
        key = c.get("/").text.split('name="csrf" content="', 1)[1].split('"', 1)[0]
    c.post("/rater", data={"csrf": key, "name": "bench"}, headers={"Origin": base})
    return c, key


def ms(fn: Any) -> float:
    t = time.perf_counter()
    r = fn()
    elapsed = (time.perf_counter() - t) * 1000
    assert r.status_code == 200, r.text[:300]
    return elapsed


def chromium_ms(base: str, token: str, paths: list[str]) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = b.new_page()
        page.goto(f"{base}/?token={token}")
        for path in paths:
            page.goto(base + path, wait_until="load", timeout=600_000)  # warm the server's view
            xs = []
            for _ in range(3):
                t = time.perf_counter()
                page.goto(base + path, wait_until="load", timeout=600_000)
                xs.append((time.perf_counter() - t) * 1000)
            out[path] = statistics.median(xs)
        b.close()
    return out


def measure(root: Path, n: int, tools: str, home: Path, args: argparse.Namespace) -> dict[str, str]:
    rng = random.Random(1)
    res: dict[str, str] = {}
    starts = []
    for _ in range(args.starts):  # the first start of a sheet checks it in full; a next one need not
        proc, base, token, t0 = start(root, tools, home, "--sheet", "sheet.jsonl")
        serving, serving_cpu = time.perf_counter() - t0, cpu_seconds(proc.pid)
        c, key = client(base, token)
        ms(lambda c=c: c.get(f"/rate/sheet/{n // 2}"))
        starts.append((serving, serving_cpu, time.perf_counter() - t0, cpu_seconds(proc.pid)))
        c.close()
        stop(proc)
    for i, case in enumerate(("serving", "serving cpu", "start-up", "start-up cpu")):
        first = f"{starts[0][i] * 1000:.0f}"
        again = f"{statistics.median(s[i] for s in starts[1:]) * 1000:.0f}" if len(starts) > 1 else "-"
        res[case] = f"{first}, again {again}"
    proc, base, token, t0 = start(root, tools, home, "--sheet", "sheet.jsonl")
    try:
        c, key = client(base, token)
        pages = [ms(lambda: c.get(f"/rate/sheet/{rng.randint(1, n)}")) for _ in range(20)]
        res["rate page"] = f"{statistics.median(pages):.1f}"
        headers = {"X-CSRF-Token": key, "Origin": base}
        saves = []
        for _ in range(args.saves):
            values = {f"fact:f{i}": rng.choice(["stated", "missed"]) for i in range(1, 5)}
            body = {"values": {**values, "propaganda": 0}, "quote": None}
            k = rng.randint(1, n)
            saves.append(ms(lambda k=k, body=body: c.post(f"/rate/sheet/{k}/label", json=body, headers=headers)))
        p90 = statistics.quantiles(saves, n=10)[-1]
        res["save"] = f"{statistics.median(saves):.1f} (p90 {p90:.1f})"
        c.close()
    finally:
        stop(proc)
    proc, base, token, _ = start(root, tools, home)
    try:
        c, _ = client(base, token)
        for view, path in (("run", "/runs/r1/facts-v1"), ("ledger", "/ledger")):
            res[f"{view} first"] = f"{ms(lambda path=path: c.get(path)):.0f}"
            pages = [1 + (n // 50) * k // max(1, args.pages - 1) for k in range(args.pages)]
            xs = [ms(lambda path=path, p=p: c.get(f"{path}?page={p}")) for p in pages]
            res[f"{view} page"] = f"{statistics.median(xs):.1f} (max {max(xs):.1f})"
            sizes = len(c.get(f"{path}?page={n // 100}").content)
            res[f"{view} bytes"] = f"{sizes / 1e6:.2f} MB"
            res[f"{view} search"] = f"{ms(lambda path=path: c.get(f'{path}?q=zzzznothing')):.1f}"
        if args.chromium:
            got = chromium_ms(base, token, [f"/runs/r1/facts-v1?page={n // 100}", f"/ledger?page={n // 100}"])
            res["chromium run"], res["chromium ledger"] = (f"{v:.0f}" for v in got.values())
        c.close()
    finally:
        stop(proc)
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--code", action="append", default=[], help="NAME=TOOLS_DIR (repeatable); default after=tools")
    parser.add_argument(
        "--starts", type=int, default=3, help="starts with the sheet: the first, then the median of the others"
    )
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--chromium", action="store_true")
    args = parser.parse_args()
    codes = [c.split("=", 1) for c in (args.code or [f"after={REPO / 'tools'}"])]
    table: dict[tuple[int, str], dict[str, str]] = {}
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="propeval-review-bench-") as tmp:
            root = Path(tmp) / "corpus"
            root.mkdir()
            corpus(root, n)
            for name, tools in codes:
                home = Path(tmp) / f"home-{name}"
                table[(n, name)] = measure(root, n, str(Path(tools).resolve()), home, args)
                shutil.rmtree(root / "labels", ignore_errors=True)
                print(f"{n} {name}: {table[(n, name)]}", file=sys.stderr, flush=True)
    cases = list(next(iter(table.values())))
    cols = list(table)
    print(f"propeval review, loopback, ms unless said ({os.cpu_count()} cores)")
    print("| case | " + " | ".join(f"{n} {name}" for n, name in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for case in cases:
        print(f"| {case} | " + " | ".join(table[c].get(case, "-") for c in cols) + " |")


if __name__ == "__main__":
    main()
