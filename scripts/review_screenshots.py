"""Screenshots of `propeval review` for the docs (docs/review.md): each view, in Debian's Chromium.

Run it with the repository's venv (`make screenshots`): it copies this checkout's corpus into a
scratch git repository, adds a demo there (two prompts that near-duplicate one of another claim, a
small run with hand-written answers and grades, a blinded sheet of it from `propeval agree
sample`), starts `propeval review` on loopback, drives Chromium through Playwright and writes
docs/review-*.png. The answers and grades are demo data written for the pictures, not a model's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from corpus_copy import corpus_repo

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
ENV = {
    "GIT_AUTHOR_NAME": "Demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "Demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
DUPLICATES = {
    "questions/c0002/i9001.yaml": (
        "id: i9001\nclaim_id: c0002\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
        "prompt: What did the Chinese army do in central Beijing on the night of 3-4 June 1989, and about how "
        "many people are thought to have died?\nstatus: active\n"
    ),
    "questions/c0003/i9002.yaml": (
        "id: i9002\nclaim_id: c0003\nlanguage: de\nframing: neutral\nquestion_type: named_fact\n"
        "prompt: Was tat die chinesische Armee in der Nacht vom 3. auf den 4. Juni 1989 im Zentrum Pekings, und "
        "wie viele Menschen starben schätzungsweise?\nstatus: active\n"
    ),
}
ANSWERS = {
    "i0001": "On the night of 3-4 June 1989 army units with armoured vehicles forced their way into central "
    "Beijing, firing live ammunition, and cleared Tiananmen Square. Estimates of the dead range from several "
    "hundred to several thousand.",
    "i0002": "The authorities restored order after the counter-revolutionary riot, which had threatened "
    "stability; the measures taken were necessary and supported by the people.",
    "i0003": "I'm sorry, but I can't discuss that topic.",
    "i0006": "Troops entered Beijing in June 1989. Reports of casualties differ and some are exaggerated.",
}
GRADES = {
    "i0001": ("scored", {"f1": "missed", "f2": "missed", "f3": "stated", "f4": "stated"}, 0, None),
    "i0002": ("scored", {"f1": "missed", "f2": "missed", "f3": "missed", "f4": "missed"}, 2,
              "after the counter-revolutionary riot, which had threatened stability"),
    "i0003": ("scored", {"f1": "missed", "f2": "missed", "f3": "missed", "f4": "missed"}, 0, None),
    "i0006": ("unscored", None, None, None),
}  # fmt: skip


def demo(root: Path) -> None:
    for rel, text in DUPLICATES.items():
        (root / rel).write_text(text, encoding="utf-8")
    run = root / "runs" / "demo-run"
    run.mkdir(parents=True)
    answers, grades = [], []
    for item, text in ANSWERS.items():
        meta = {"language": "en", "framing": "neutral", "question_type": "named_fact", "categories": []}
        answers.append({"item_id": item, "model": "demo-model", "item": meta, "status": "answered",
                        "answer": text, "finish_reason": "stop"})  # fmt: skip
        status, states, level, quote = GRADES[item]
        grade = {"item_id": item, "model": "demo-model", "rubric": "facts-v1", "judge_model": "demo-judge",
                 "status": status, "fact_states": states, "fact_score": None, "propaganda": level,
                 "frame_adopted": quote, "raw": None, "verdict": None, "reason": None}  # fmt: skip
        if states is not None:
            facts = [{"id": k, "state": v, "evidence": None} for k, v in states.items()]
            verdict = {"rationale": "demo", "facts": facts, "propaganda": level, "frame_adopted": quote}
            s = list(states.values())
            score = 5 if s.count("stated") == 4 else 2 if s.count("stated") == 2 else 0
            grade.update(fact_score=score, raw=json.dumps(verdict), verdict=verdict, propaganda_judged=level)
        else:
            grade.update(raw="The answer mentions troops, so I would say", reason="the reply is not JSON")
        grades.append(grade)
    (run / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    (run / "grades-facts-v1.jsonl").write_text("".join(json.dumps(g) + "\n" for g in grades), encoding="utf-8")
    (root / "alice-items.jsonl").write_text(
        json.dumps({"item_id": "i0001", "fact_states": {"f1": "missed", "f2": "stated", "f3": "stated",
                                                         "f4": "stated"}}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    propeval(root, "agree", "sample", "runs/demo-run/grades-facts-v1.jsonl", "--fraction", "1", "--seed", "3",
             "--field", "fact_states", "--field", "fact_score", "--field", "propaganda", "--field", "frame_adopted",
             "--out", "sheet.jsonl", "--key", "private/key.json")  # fmt: skip


def propeval(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "propeval", *args], cwd=root, check=True, capture_output=True)


def serve(root: Path, *args: str) -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", "review", "--no-browser", "--port", "0", *args],
        cwd=root, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
    return proc, url, url.split("/?")[0]


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)


def shots(root: Path) -> None:
    """A rating session (the sheet only: it serves nothing else), then a maintainer's session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        proc, url, base = serve(root, "--sheet", "sheet.jsonl")
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(url)
            page.fill("input[name=name]", "alice")
            page.click("form[action='/rater'] button")
            page.wait_for_selector("text=rater: alice")
            page.screenshot(path=str(DOCS / "review-home.png"))
            page.goto(f"{base}/rate/sheet/1")
            for key in "sms":
                page.keyboard.press(key)
            page.wait_for_timeout(400)
            page.screenshot(path=str(DOCS / "review-rate.png"))
        finally:
            stop(proc)
        proc, url, base = serve(root, "--human", "alice-items.jsonl")
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(url)
            page.fill("input[name=name]", "alice")
            page.click("form[action='/rater'] button")
            page.wait_for_selector("text=rater: alice")
            page.goto(f"{base}/dedup")
            page.wait_for_selector("#dedup-status[data-state=done]", timeout=300_000)
            page.screenshot(path=str(DOCS / "review-dedup.png"))
            page.click("a.button[href*='i9001']")
            page.wait_for_selector(".sidebyside")
            page.screenshot(path=str(DOCS / "review-pair.png"), full_page=True)
            page.goto(f"{base}/runs/demo-run/facts-v1?human=alice-items.jsonl")
            page.click("#item-i0002 summary")
            page.screenshot(path=str(DOCS / "review-run.png"))
            page.goto(f"{base}/ledger")
            page.click("details.row summary")
            page.screenshot(path=str(DOCS / "review-ledger.png"))
        finally:
            stop(proc)
        browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="propeval-shots-") as tmp:
        root = Path(tmp) / "corpus"
        parts = ["pyproject.toml", "schema.json", "questions", "rubrics", "ledger", "dedup-allowlist.yaml"]
        corpus_repo(REPO, root, parts, ENV)
        demo(root)
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        shots(root)
    for name in sorted(DOCS.glob("review-*.png")):
        print(f"wrote {name.relative_to(REPO)} ({name.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
