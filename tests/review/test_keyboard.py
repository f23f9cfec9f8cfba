"""Keyboard all the way, in Debian's Chromium: a quote picked by word with the keys, a labelled
answer that a stray key cannot change, a refusal that takes Shift to set every field, and a key
pressed while the server is down kept as unsaved and sent again once it is back."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from reviewkit import browser, read_jsonl, review_command, serving

from propeval.config import load_config
from propeval.review.workspace import Workspace

pytestmark = pytest.mark.slow
SHOTS = Path("/tmp/h50-shots")


def sign_in_by_keys(page: Any, url: str, name: str) -> None:
    page.goto(url)
    page.focus("input[name=name]")
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"text=rater: {name}")


def test_propaganda_2_with_a_quote_without_the_mouse(sheet: Path) -> None:
    root = sheet.parent
    rows = read_jsonl(sheet)
    n = next(i for i, r in enumerate(rows, start=1) if len(r["answer"].split()) >= 5)
    words = rows[n - 1]["answer"].split()
    with review_command(root, "--sheet", "sheet.jsonl") as served, browser() as b:
        page = b.new_page(viewport={"width": 1280, "height": 1000})
        sign_in_by_keys(page, served.url, "alice")
        page.goto(f"{served.base}/rate/sheet/{n}")
        assert page.evaluate("document.activeElement.id") == "step-0"  # focus is where the keys act
        for key in "ssss2":
            page.keyboard.press(key)
        page.wait_for_selector("#status.bad")
        assert "needs a quote" in page.text_content("#status")
        page.keyboard.press("q")
        page.keyboard.press("ArrowRight")  # the caret moves by word: now on the second word
        for _ in range(3):
            page.keyboard.press("Shift+ArrowRight")  # Shift extends; it is not "next answer"
        assert page.url.endswith(f"/rate/sheet/{n}")
        page.keyboard.press("Enter")
        quote = " ".join(words[1:5])
        page.wait_for_selector(f"#quote:text-is({json.dumps(quote)})")
        page.wait_for_selector("#status.ok")
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "rate-guidelines-facts.png"), full_page=True)
        # reopened, the labelled answer has no current step: a stray key changes nothing
        page.goto(f"{served.base}/rate/sheet/{n}")
        page.wait_for_selector("#status.ok")
        page.keyboard.press("m")
        page.wait_for_timeout(300)
        assert page.locator("#step-0 button.on").text_content().strip().endswith("stated")
        assert "labelled" in page.text_content("#status")
        page.keyboard.press("g")  # the guidelines fold away and back
        assert page.evaluate("document.getElementById('guide').open") is False
        page.keyboard.press("g")
        with page.expect_navigation():
            page.keyboard.press("Enter")
    got = read_jsonl(root / "labels/sheet/alice.jsonl")[n - 1]
    assert (got["propaganda"], got["frame_adopted"], got["fact_score"]) == (2, quote, 5)


def test_one_r_sets_one_field_and_shift_r_the_refusal_on_all(rcorpus: Any) -> None:
    with review_command(rcorpus.root) as served, browser() as b:
        page = b.new_page(viewport={"width": 1280, "height": 1000})
        sign_in_by_keys(page, served.url, "alice")
        page.goto(f"{served.base}/rate/audit-v1-gold/2")
        page.keyboard.press("r")
        page.wait_for_selector("#status:text-matches('^saved')")
        assert page.locator("button.choice.on").count() == 1
        assert "Shift" in page.text_content("#keys") and "Refusal on every field at once" in page.text_content("#keys")
        page.keyboard.press("Backspace")
        page.keyboard.press("Shift+R")
        page.wait_for_selector("#status.ok")
        assert page.locator("button.choice.on").count() == 3
        page.screenshot(path=str(SHOTS / "rate-guidelines-audit.png"), full_page=True)


def test_a_key_pressed_while_the_server_is_down_is_unsaved_then_sent_again(sheet: Path, tmp_path: Path) -> None:
    """The server stops between two keys; the second shows as unsaved, and once the same server
    is back (same port, sessions kept) it is sent again and saved, rater and place intact."""
    root = sheet.parent
    sessions = tmp_path / "sessions.json"
    ws = Workspace(load_config(root), labels=root / "labels", sheets=[sheet])
    with ExitStack() as stack, browser() as b:
        served = stack.enter_context(serving(ws, sessions=sessions))
        port = int(served.base.rsplit(":", 1)[1])
        page = b.new_page()
        sign_in_by_keys(page, served.url, "alice")
        page.goto(f"{served.base}/rate/sheet/1")
        for key in "sss":
            page.keyboard.press(key)
        page.wait_for_selector("#status:text-matches('^saved')")
        stack.close()  # the server stops
        page.keyboard.press("s")
        page.wait_for_selector("#status.unsaved")
        page.keyboard.press("0")
        again = Workspace(load_config(root), labels=root / "labels", sheets=[sheet])
        with serving(again, sessions=sessions, port=port):
            page.wait_for_selector("#status.ok", timeout=30_000)
            page.goto(f"{served.base}/")
            assert "rater: alice" in page.text_content("header")
            assert page.get_attribute("#resume", "href") == "/rate/sheet/1"
    assert read_jsonl(root / "labels/sheet/alice.jsonl")[0]["fact_score"] == 5
