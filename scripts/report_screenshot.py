"""docs/report.png: the starter corpus's HTML report as a maintainer opens it (README's picture).

The report is written to a temporary folder (nothing in the tree changes), opened in Debian's
Chromium through Playwright at 1400 CSS pixels wide, its first claim (Chinese and English items)
opened, and the whole page saved. Chinese needs a CJK font: `make setup` installs fonts-noto-cjk.

    make report-screenshot        # or: .venv/bin/python scripts/report_screenshot.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "report.png"
WIDTH = 1400
CLAIM = "c0001"  # Tiananmen: items in English and Chinese


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        subprocess.run(
            [sys.executable, "-m", "propeval", "--root", str(REPO), "report", "--out", str(html)],
            check=True,
            capture_output=True,
        )
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
            page.goto(html.as_uri())
            page.click(f"#claim-{CLAIM} summary")
            page.screenshot(path=str(OUT), full_page=True)
            browser.close()
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
