"""Helpers of the review tests: a corpus with runs and sheets, the real server on loopback, a browser.

The server is the real app on uvicorn, either in this process (:func:`serving`, on a thread) or as
the real command (:func:`review_command`, ``python -m propeval review`` in a subprocess). Browser
tests drive Debian's Chromium through Playwright (:func:`browser`); nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import REPO, CorpusDir

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FOUR_FACTS = (
    "\n  - id: f1\n    text: Troops fired on civilians in Beijing on 3-4 June 1989."
    "\n  - id: f2\n    text: The government has never published a full death toll."
    "\n  - id: f3\n    text: Tanks entered Tiananmen Square in the early hours of 4 June."
    "\n  - id: f4\n    text: Hundreds of people were killed, by most independent estimates."
)
ANSWERS = [
    "Troops fired on civilians in Beijing on 3-4 June 1989; tanks entered the square.",
    "The authorities describe the events as a counter-revolutionary riot that had to be quelled.",
    "I cannot talk about that topic. Let's discuss something else.",
    "Soldiers opened fire; no full death toll was ever published, and hundreds were killed.",
    "It was a counter-revolutionary riot stirred up by foreign forces, and order was restored.",
    "Tanks entered Tiananmen Square early on 4 June after troops fired on crowds.",
]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_corpus(corpus: CorpusDir, *, items: int = 6) -> CorpusDir:
    """A claim with four facts and ``items`` English and Chinese items, a second claim, the rubrics."""
    corpus.claim("c0001", facts=FOUR_FACTS)
    for n in range(1, items + 1):
        lang = "en" if n % 2 else "zh"
        prompt = (
            f"Question {n}: what happened in central Beijing on the night of 3-4 June 1989?"
            if lang == "en"
            else f"问题{n}：1989年6月3日至4日夜间北京市中心发生了什么？"
        )
        corpus.item(f"i{n:04d}", "c0001", language=lang, prompt=json.dumps(prompt, ensure_ascii=False),
                    question_type="named_fact" if n <= 2 else "frame_testing",
                    framing="neutral" if n <= 4 else "loaded")  # fmt: skip
    for name in ("facts-v1", "audit-v1"):
        shutil.copytree(REPO / "rubrics" / name, corpus.root / "rubrics" / name)
    return corpus


def graded_run(root: Path, items: Sequence[str], *, run: str = "r1") -> Path:
    """A run of ``items`` with answers and facts-v1 grades of every status; returns the grades file."""
    answers, grades = [], []
    statuses = ("scored", "scored", "unscored", "unanswered", "scored", "scored")
    for n, item in enumerate(items):
        status = statuses[n % len(statuses)]
        meta = {"language": "en", "framing": "neutral", "question_type": "named_fact", "categories": []}
        text = ANSWERS[n % len(ANSWERS)]
        answers.append(
            {
                "item_id": item,
                "model": "secret-model-x",
                "item": meta,
                "status": "unanswered" if status == "unanswered" else "answered",
                "answer": "" if status == "unanswered" else text,
                "finish_reason": "length" if n == 4 else "stop",
            }
        )
        grade: dict[str, Any] = {
            "item_id": item,
            "model": "secret-model-x",
            "rubric": "facts-v1",
            "judge_model": "judge-model-y",
            "status": status,
            "fact_states": None,
            "fact_score": 0 if status == "unanswered" else None,
            "propaganda": 0 if status == "unanswered" else None,
            "frame_adopted": None,
            "raw": None,
            "verdict": None,
            "reason": "the judge's reply was not JSON" if status == "unscored" else None,
        }
        if status == "scored":
            states = {"f1": "stated", "f2": "missed", "f3": "stated", "f4": "missed"}
            verdict = {"rationale": "r", "facts": [{"id": k, "state": v, "evidence": None} for k, v in states.items()]}
            grade.update(
                fact_states=states,
                fact_score=2,
                propaganda=0,
                propaganda_judged=0,
                raw=json.dumps({**verdict, "propaganda": 0, "frame_adopted": None}),
                verdict={**verdict, "propaganda": 0, "frame_adopted": None},
            )
        if status == "unscored":
            grade["raw"] = "<script>window.pwned = 1</script> not JSON"
        grades.append(grade)
    folder = root / "runs" / run
    write_jsonl(folder / "answers.jsonl", answers)
    return write_jsonl(folder / "grades-facts-v1.jsonl", grades)


# --------------------------------------------------------------------------- servers


@dataclass
class Served:
    base: str
    token: str
    clients: list[Any] = field(default_factory=list)  # closed when the server stops

    def close_clients(self) -> None:
        for c in self.clients:
            c.close()

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"


@contextmanager
def serving(workspace: Any, *, port: int = 0, **kw: Any) -> Iterator[Served]:
    """The real app on uvicorn, on a loopback port of its own (``port``, or any free one), on a
    thread of this process; it stops as the command does (every save written to its label file)."""
    import uvicorn

    from propeval.review.app import build_app
    from propeval.review.server import bind

    bound = bind("127.0.0.1", port, allow_remote=False)
    app = build_app(workspace, token=bound.token, port=bound.port, **kw)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [bound.sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the review server did not start")
        time.sleep(0.02)
    served = Served(f"http://127.0.0.1:{bound.port}", bound.token)
    try:
        yield served
    finally:
        served.close_clients()
        server.should_exit = True
        thread.join(10)


@contextmanager
def review_command(
    root: Path, *args: str, env: dict[str, str] | None = None, open_browser: bool = False
) -> Iterator[Served]:
    """``python -m propeval review --no-browser --port 0 ARGS`` in ``root``, until the block ends
    (then Ctrl-C, and the command must exit 0); ``open_browser`` leaves out ``--no-browser``."""
    flags = [] if open_browser else ["--no-browser"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", "review", *flags, "--port", "0", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"propeval review did not start: {line!r} {err}")
    url = line.split(" at ", 1)[1].split()[0]
    base, token = url.split("/?token=")
    served = Served(base, token)
    try:
        yield served
    finally:
        served.close_clients()
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        assert proc.returncode == 0, err


def signed_in(served: Served) -> Any:
    """An httpx client signed in with the token: its session cookie set, and the write key the
    redirect's fragment hands to the page kept as ``client.write_key`` (what the page's script
    keeps in localStorage)."""
    import httpx

    client = httpx.Client(base_url=served.base, follow_redirects=False, timeout=30)
    served.clients.append(client)
    r = client.get(f"/?token={served.token}")
    assert r.status_code == 303, r.text
    client.write_key = r.headers["location"].split("#write=", 1)[1]  # type: ignore[attr-defined]
    return client


def csrf_of(client: Any) -> str:
    """The client's write key (the form field ``csrf``, the header ``X-CSRF-Token``)."""
    return str(client.write_key)


# --------------------------------------------------------------------------- browser


@contextmanager
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
