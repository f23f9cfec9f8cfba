"""Every view of the review app passes axe-core (the bundled engine of axe-playwright-python), run
by Playwright in Debian's Chromium: names, roles, contrast (3:1 on controls and large text, 4.5:1
on text), ``lang`` on texts in another language, focus where the keys act."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from reviewkit import browser, graded_run, read_jsonl, review_command

pytestmark = pytest.mark.slow


def violations(page: Any) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['id']}: {v['help']} ({', '.join(str(n['target']) for n in v['nodes'][:3])})" for v in found]


def test_every_view_passes_axe_core(rcorpus: Any, sheet: Path) -> None:
    root = rcorpus.root
    graded_run(root, [f"i{n:04d}" for n in range(1, 7)])
    views = ["/", "/rate/facts-v1-gold/1", "/rate/audit-v1-gold/2", "/rate/facts-v1-gold/files", "/runs",
             "/runs/r1/facts-v1", "/runs/r1/facts-v1?q=troops", "/ledger", "/ledger/judge", "/dedup"]  # fmt: skip
    found: dict[str, list[str]] = {}
    with review_command(root) as served, browser() as b:
        # axe is injected by evaluation: the page's own CSP (script-src 'self') is bypassed for it only
        page = b.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900}).new_page()
        page.goto(served.url)
        page.fill("input[name=name]", "alice")
        page.keyboard.press("Enter")
        page.wait_for_selector("text=rater: alice")
        for view in views:
            page.goto(served.base + view)
            found[view] = violations(page)
    with review_command(root, "--sheet", "sheet.jsonl") as served, browser() as b:
        page = b.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900}).new_page()
        page.goto(served.url)
        page.fill("input[name=name]", "bob")
        page.keyboard.press("Enter")
        page.wait_for_selector("text=rater: bob")
        for view in ("/", "/rate/sheet/2", "/rate/sheet/files"):
            page.goto(served.base + view)
            found[f"sheet {view}"] = violations(page)
        zh = next(n for n, r in enumerate(read_jsonl(sheet), start=1) if r["language"] == "zh")
        page.goto(served.base + f"/rate/sheet/{zh}")
        assert page.get_attribute("#question", "lang") == "zh"  # the Chinese question says so
        found[f"sheet /rate/sheet/{zh}"] = violations(page)
    bad = {k: v for k, v in found.items() if v}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)
