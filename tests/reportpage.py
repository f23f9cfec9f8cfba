"""The HTML report in a real browser: Debian's Chromium, headless, driven by Playwright (no browser
download). Used by the report's own tests and by the maintainer's first hour (tests/test_mainjob.py).

- :func:`report_page` opens a report at a window width, as a maintainer would;
- :func:`page_height` is its height in CSS pixels as it opens (sections in their default state);
- :func:`glyphs` screenshots the characters of an item's prompt beside characters no font has
  (a known "tofu" box), each cut out on its own: a prompt whose script has no font is drawn as
  boxes, every one the same as the known box, whatever the DOM says.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]

# Unassigned code points (Greek and Coptic block): no font has a glyph for them, so the browser draws
# its "missing glyph" box. They stand in the same element as the prompt, in the same font and size.
TOFU = "\u0378\u0379\u0380\u0381"


@contextmanager
def report_page(path: Path, width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """The report at ``path`` open in a page ``width`` CSS pixels wide; JavaScript on (the report's
    own script runs, by its hash in the page's Content-Security-Policy)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            page.errors = errors  # CSP refusals and script errors, for the caller to assert on
            yield page
        finally:
            browser.close()


def page_height(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollHeight"))


@dataclass
class Glyphs:
    """Each character's picture, grey levels resized to ``SIZE`` x ``SIZE``."""

    text: list[Any]  # the prompt's characters
    tofu: list[Any]  # the known missing-glyph boxes

    SIZE = 24

    @staticmethod
    def diff(a: Any, b: Any) -> float:
        """Mean absolute difference of two pictures, 0-255."""
        from PIL import ImageChops, ImageStat

        return float(sum(ImageStat.Stat(ImageChops.difference(a, b)).mean))

    @staticmethod
    def variance(a: Any) -> float:
        from PIL import ImageStat

        return float(ImageStat.Stat(a).var[0])

    def likeness(self, g: Any) -> float:
        """How far ``g`` is from the nearest known box (0: the same picture). Two known boxes differ by
        about 12-15 grey levels (where each falls on the pixel grid); a CJK glyph from a box by 50-60."""
        return min(self.diff(g, box) for box in self.tofu)

    def drawn_as_boxes(self) -> list[int]:
        """The indexes of the prompt's characters that look like the known box (within 30 of 255 grey
        levels on average): a missing glyph. Empty: every character is a glyph of its own."""
        return [k for k, g in enumerate(self.text) if self.likeness(g) < 30]


_RECTS = """([selector, count, tofu, pattern]) => {
  const cell = document.querySelector(selector);
  const claim = cell.closest("details");
  if (claim) { claim.open = true; }
  const ref = document.createElement("span");
  ref.className = "tofu-reference";
  ref.textContent = tofu;
  cell.appendChild(ref);
  cell.scrollIntoView({block: "center"});
  const wanted = new RegExp(pattern, "u");
  const boxes = (node, n, only) => {
    const out = [];
    const text = node.firstChild;
    for (let i = 0; i < text.length && out.length < n; i++) {
      const ch = text.data[i];
      if (only && !wanted.test(ch)) { continue; }
      const r = document.createRange();
      r.setStart(text, i);
      r.setEnd(text, i + 1);
      const b = r.getBoundingClientRect();
      out.push([b.left, b.top, b.width, b.height, ch]);
    }
    return out;
  };
  return {text: boxes(cell, count, true), tofu: boxes(ref, tofu.length, false)};
}"""


def glyphs(page: Any, selector: str, count: int = 6, pattern: str = r"\p{Script=Han}") -> Glyphs:
    """Screenshot the first ``count`` characters matching ``pattern`` (Han by default) of the element
    ``selector`` (its claim opened) and the known boxes put beside them in the same element, each
    character cut out and resized alike."""
    import io

    from PIL import Image

    found = page.evaluate(_RECTS, [selector, count, TOFU, pattern])
    shot = Image.open(io.BytesIO(page.screenshot())).convert("L")

    def cut(box: list[Any]) -> Any:
        left, top, w, h, _ = box
        return shot.crop((round(left), round(top), round(left + w), round(top + h))).resize((Glyphs.SIZE, Glyphs.SIZE))

    assert found["text"] and len(found["tofu"]) == len(TOFU), found
    return Glyphs([cut(b) for b in found["text"]], [cut(b) for b in found["tofu"]])
