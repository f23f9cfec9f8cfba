"""``propeval report``: a self-contained HTML file whose every image decodes in headless Chromium."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.config import load_config
from propeval.release import load_inputs
from propeval.report import summarise_runs
from propeval.workspace import Workspace

# Set on <body> once the load event has fired (which waits for every image): "<decoded>/<total>",
# and, for the screenshot check, each panel's content box below its heading and the page height.
# An image the browser could not decode is not complete or has naturalWidth 0.
PROBE = """<script>
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) { ok++; } }
  document.body.setAttribute("data-images", ok + "/" + imgs.length);
  var panels = [], secs = document.querySelectorAll("details.panel");
  for (var k = 0; k < secs.length; k++) {
    var r = secs[k].getBoundingClientRect(), h2 = secs[k].querySelector("h2");
    var h = secs[k].querySelector("summary").getBoundingClientRect();
    panels.push([secs[k].id, Math.round(r.left), Math.round(h.bottom + window.scrollY), Math.round(r.right),
                 Math.round(r.bottom + window.scrollY), secs[k].innerText.length - h2.innerText.length]);
  }
  document.body.setAttribute("data-panels", JSON.stringify(panels));
  document.body.setAttribute("data-height", document.documentElement.scrollHeight);
});
</script>"""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium")
    assert exe, "headless Chromium is needed: apt-get install -y chromium (make setup does it)"
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


# The window of the one browser run that both probes and screenshots a report: taller than any
# report here (the test asserts the page fits), so no second run is needed to size the screenshot.
SHOT_HEIGHT = 6000
WIDTH = 1400  # a maintainer's window


def probe(tmp_path: Path, html_file: Path, screenshot: bool = False) -> dict[str, Any]:
    """Open a copy of ``html_file`` with the probe script: decoded images, panel boxes, page height;
    with ``screenshot``, the same browser run also saves the whole window as ``seen["shot"]``."""
    import html
    import json

    copy = tmp_path / f"probe-{html_file.name}"
    page = html_file.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>")
    # The report's Content-Security-Policy runs only its own script: the probe is let in by its hash.
    page = page.replace("script-src ", f"script-src {script_source(PROBE)} ", 1)
    copy.write_text(page, encoding="utf-8")
    shot = tmp_path / "shot.png"
    args = (
        [f"--window-size={WIDTH},{SHOT_HEIGHT}", f"--screenshot={shot}"]
        if screenshot
        else [f"--window-size={WIDTH},1000"]
    )
    dom = chromium(tmp_path, *args, "--virtual-time-budget=10000", "--dump-dom", copy.as_uri())
    found = {k: re.search(rf'data-{k}="([^"]*)"', dom.stdout) for k in ("images", "panels", "height")}
    assert all(found.values()), "the probe script did not run"
    return {
        "images": found["images"].group(1),  # type: ignore[union-attr]
        "panels": json.loads(html.unescape(found["panels"].group(1))),  # type: ignore[union-attr]
        "height": int(found["height"].group(1)),  # type: ignore[union-attr]
        "shot": shot if screenshot else None,
    }


def script_source(script: str) -> str:
    """The CSP source expression that lets the inline ``<script>`` element ``script`` run."""
    import hashlib

    body = script.split(">", 1)[1].rsplit("</script>", 1)[0]
    return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii") + "'"


def decoded_images(tmp_path: Path, html_file: Path) -> str:
    return str(probe(tmp_path, html_file)["images"])


def blank_panels(seen: dict[str, Any], extra: tuple[Any, ...] = ()) -> list[str]:
    """The panels whose content box (below the heading) is one flat colour in the probe's
    screenshot of the whole page: drawn nothing, whatever the DOM says. ``extra`` boxes are checked
    the same way."""
    from PIL import Image

    shot = seen["shot"]
    assert shot is not None, "probe(..., screenshot=True) takes the screenshot"
    blank = []
    with Image.open(shot) as img:
        grey = img.convert("L")
        # the whole page is in the shot: no taller than the window, and no panel below it
        assert grey.size == (WIDTH, SHOT_HEIGHT) and seen["height"] <= SHOT_HEIGHT, seen["height"]
        assert all(bottom <= SHOT_HEIGHT for *_, bottom, _text in seen["panels"])
        for name, left, top, right, bottom, _text in [*seen["panels"], *extra]:
            box = grey.crop((left + 8, top, right - 8, bottom - 8))  # inside the border and its rounded corners
            lo, hi = box.getextrema()
            if bottom - top < 20 or lo == hi:
                blank.append(name)
    return blank


def verify_pngs(html: str) -> int:
    """Check every embedded PNG chunk by chunk (CRCs included); return how many there are.

    Chromium draws a PNG whose compressed data is damaged but whose header is intact, so this
    catches what the browser probe cannot.
    """
    from PIL import Image

    images = re.findall(r'<img src="data:image/png;base64,([^"]+)"', html)
    for data in images:
        with Image.open(io.BytesIO(base64.b64decode(data, validate=True))) as img:
            img.verify()
    return len(images)


def write(tmp_path: Path) -> tuple[Path, str]:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out, result.stdout


@pytest.mark.slow
def test_report_with_every_input_renders_in_chromium(ledgers: Any, tmp_path: Path) -> None:
    out, stdout = write(tmp_path)
    assert stdout == f"wrote {out}: 4 item(s), 3 grades file(s)\n"
    html = out.read_text(encoding="utf-8")
    # self-contained: no script, stylesheet, font or image from anywhere else; the one link is the
    # claim's source (http(s) only), and the one script is inline, the only one the CSP lets run
    assert not re.search(r"""src\s*=\s*["'](?!data:)""", html)
    assert set(re.findall(r"""href\s*=\s*["']([a-z]+):""", html)) <= {"https"}
    assert "@import" not in html and "url(" not in html
    (script,) = re.findall(r"<script>.*?</script>", html, re.S)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp and f"script-src {script_source(script)};" in csp.group(1)
    assert "default-src 'none'" in csp.group(1)
    # coverage, mix, bands, six judge-vs-human confusion matrices, run facts, run audit
    n = verify_pngs(html)
    assert n == 11
    assert "No data." not in html
    # the committed Gemma record behind a judge at chance level: shown, and not counted
    assert "<td>1: judge gemma-3-270m fails the judge gate</td>" in html
    assert "<td>facts-v1: failed</td>" in html  # the judge gate in run's words (required here)
    assert "<td>not checked: judge gemma-3-270m fails the judge gate</td>" in html  # i0001 in the per-item view
    # the judge's state in plain words, the dedup record, and the per-item view
    assert "judge agreement with humans is at chance level: scores from this judge are not meaningful" in html
    assert "Record ledger/dedup.json:" in html and "current</span>" in html
    assert '<tr id="item-i0003" class="active" data-language="zh"' in html
    seen = probe(tmp_path, out, screenshot=True)
    assert seen["images"] == f"{n}/{n}"
    names = [p[0] for p in seen["panels"]]
    assert names == ["warnings", "coverage", "mix", "difficulty", "judge", "answerability", "dedup", "runs", "items"]
    assert blank_panels(seen) == []


@pytest.mark.slow
def test_report_without_ledgers_shows_no_data_panels(small_report: Path, tmp_path: Path) -> None:
    out = small_report
    html = out.read_text(encoding="utf-8")
    for message in (
        "No data. ledger/difficulty.json is not present: grade runs (propeval answer, propeval grade), "
        "then run propeval difficulty.",
        "No data. ledger/dedup.json is not present; a maintainer records it with propeval run --record "
        "(or propeval dedup --record).",
        "No data. No answerability record under ledger/answerability/; run propeval gate answerability --online --all.",
        "No data. No scored runs under runs/*/grades-*.jsonl; run propeval answer, then propeval grade.",
    ):
        assert message in html
    # a rubric without a judge-gate record is named, with the command that makes one
    assert "no judge-gate record: scores from this judge are not validated (run: propeval gate judge" in html
    seen = probe(tmp_path, out, screenshot=True)
    assert seen["images"] == "2/2"
    # the check sees an empty box: the page's right margin beside the first panel, as tall as it
    _, _, top, right, bottom, _ = seen["panels"][0]
    assert blank_panels(seen, (["margin", right + 2, top, WIDTH - 2, bottom, 0],)) == ["margin"]


CORRUPT = {
    "not-a-png": lambda b64: base64.b64encode(b"not an image").decode(),
    "truncated-header": lambda b64: base64.b64encode(base64.b64decode(b64)[:30]).decode(),
    "bad-base64": lambda b64: b64[:40] + "!!%%" + b64[44:],
}


@pytest.mark.slow
def test_probe_fails_on_a_corrupt_image(small_report: Path, tmp_path: Path) -> None:
    # One page, one browser run: the report's first image broken each way, beside the report's
    # two intact ones; the probe counts only the intact ones as decoded (any broken image the
    # browser drew would make it 3/5 or more).
    html = small_report.read_text(encoding="utf-8")
    first = re.search(r'<img src="data:image/png;base64,([^"]+)"[^>]*>', html)
    assert first
    broken_imgs = "".join(
        first.group(0).replace(first.group(1), corrupt(first.group(1))) for corrupt in CORRUPT.values()
    )
    broken = tmp_path / "broken.html"
    broken.write_text(html.replace(first.group(0), first.group(0) + broken_imgs, 1), encoding="utf-8")
    assert len(re.findall(r"<img ", broken.read_text(encoding="utf-8"))) == 5
    assert decoded_images(tmp_path, broken) == "2/5"


def test_run_summary_numbers(ledgers: Any) -> None:
    runs = summarise_runs(load_inputs(Workspace(load_config(ledgers.root))))
    assert runs.warnings == []
    audit, facts_panel = runs.panels()
    facts = {c["language"]: c for c in facts_panel.cells}
    # en: r1 i0001 5, i0002 3 (propaganda 1); r2 i0001 4, i0002 4
    assert facts["en"]["counted"] == 4 and facts["en"]["fact_mean"] == 4.0 and facts["en"]["propaganda_share"] == 0.25
    # zh: r1 i0003 2; r2 i0003 unscored (left out, counted)
    assert (facts["zh"]["counted"], facts["zh"]["unscored"], facts["zh"]["fact_mean"]) == (1, 1, 2.0)
    # ru: r1 unanswered counts as 0/0; r2 1 with propaganda 2
    assert (facts["ru"]["counted"], facts["ru"]["fact_mean"], facts["ru"]["propaganda_share"]) == (2, 0.5, 0.5)
    # by model, over its runs: fact r1 (5+3+2+0)/4 = 2.5, r2 (4+4+1)/3 = 3.0: 2.75 ± 0.35 (sample sd);
    # any propaganda r1 1/4, r2 1/3: 29.2% ± 5.9
    assert facts_panel.tables[0].rows == [["m-a", 2, "2.75 ± 0.35", "29.2% ± 5.9"]]
    # the audit labels are the rubric's own, in its order
    assert (audit.rubric, audit.kind) == ("audit-v1", "audit")
    assert audit.cells == [
        {"model": "m-b", "n": 4, "unanswered": 0, "unscored": 0, "ungraded": 0}
        | {"Correct": 0.5, "Partial": 0.0, "Misleading": 0.25, "Refusal": 0.25}
    ]
    assert audit.tables[0].headers[-4:] == ["% Correct", "% Partial", "% Misleading", "% Refusal"]


def test_report_names_a_grades_file_without_its_rubric_and_a_bad_record(ledgers: Any) -> None:
    shutil.rmtree(ledgers.root / "rubrics/audit-v1")
    path = ledgers.root / "runs/r2/grades-facts-v1.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace('"fact_score": 4', '"fact_score": 9', 1))
    runs = summarise_runs(load_inputs(Workspace(load_config(ledgers.root))))
    assert [(p.path, p.line, p.rule) for p in runs.warnings] == [
        ("runs/r2/grades-facts-v1.jsonl", 1, "run-record"),
        ("rubrics/audit-v1/rubric.yaml", 0, "release-input"),
    ]
    assert "(needed by runs/r3/grades-audit-v1.jsonl) (file ignored)" in runs.warnings[1].message
    assert runs.files == ["runs/r1/grades-facts-v1.jsonl", "runs/r2/grades-facts-v1.jsonl"]
    (facts_panel,) = runs.panels()
    assert {c["language"]: c["ungraded"] for c in facts_panel.cells}["en"] == 1


@pytest.mark.slow
def test_png_check_fails_on_damaged_image_data(small_report: Path) -> None:
    html = small_report.read_text(encoding="utf-8")
    assert verify_pngs(html) == 2
    first = re.search(r'data:image/png;base64,([^"]+)"', html)
    assert first
    raw = base64.b64decode(first.group(1))
    damaged = base64.b64encode(raw[:200] + bytes(50) + raw[250:]).decode()
    with pytest.raises(SyntaxError, match="broken PNG file"):
        verify_pngs(html.replace(first.group(1), damaged, 1))


def shown(page: Any) -> str:
    return str(page.evaluate("document.getElementById('shown').textContent"))


def visible_items(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('tr[data-status]')).filter(r => !r.hidden && "
            "!r.closest('details.claim').hidden).map(r => r.id.slice(5))"
        )
    )


def open_claims(page: Any) -> list[str]:
    return list(page.evaluate("Array.from(document.querySelectorAll('details.claim[open]')).map(d => d.dataset.claim)"))


@pytest.mark.slow
def test_items_are_grouped_under_their_claim_and_searched_and_filtered_in_the_browser(
    ledgers: Any, tmp_path: Path
) -> None:
    """The facts of a claim are shown once, above its items (retired ones too); the search box and
    each filter (language, claim, band, status, answerability, flag) narrow the items, open the
    claims they are in, and close them again when cleared. The page's own script runs under its
    Content-Security-Policy with no error."""
    from reportpage import report_page

    out, _ = write(tmp_path)
    html = out.read_text(encoding="utf-8")
    fact = "Troops fired on civilians in Beijing on 3-4 June 1989."
    c0001 = html.split('id="claim-c0001"', 1)[1].split("</details>", 1)[0]
    assert c0001.count(fact) == 1  # once for its three active items and its retired one
    assert html.count(fact) == 2  # and once in c0002, which has the same facts in this fixture
    with report_page(out) as page:
        assert page.errors == []
        assert shown(page) == "5 item(s) in 2 claim(s)"
        assert open_claims(page) == []  # claims start collapsed
        page.fill("#q", "TIANANMEN crackdown")  # the claim's title finds its items, in any case
        assert visible_items(page) == ["i0001", "i0002", "i0003", "i0004"] and open_claims(page) == ["c0001"]
        page.fill("#q", "что")  # a prompt's words, any script, any case
        assert visible_items(page) == ["i0005"] and shown(page) == "1 of 5 item(s) in 1 claim(s)"
        page.fill("#q", "")
        assert open_claims(page) == [] and shown(page) == "5 item(s) in 2 claim(s)"
        for select, value, expected in [
            ("#f-language", "zh", ["i0003"]),
            ("#f-claim", "c0002", ["i0005"]),
            ("#f-band", "easy", ["i0001"]),
            ("#f-status", "retired", ["i0004"]),
            ("#f-answerability", "not checked", ["i0001"]),
            ("#f-flag", "near-duplicate", []),
        ]:
            options = page.evaluate(f"Array.from(document.querySelectorAll('{select} option')).map(o => o.value)")
            if value not in options:
                assert select == "#f-flag", (select, options)  # no unreviewed pair in this fixture
                continue
            page.select_option(select, value)
            assert visible_items(page) == expected, (select, value)
            page.select_option(select, "")
        flags = page.evaluate("Array.from(document.querySelectorAll('#f-flag option')).map(o => o.value)")
        # A claim is flagged for the framings `propeval groups` requires of its kind: c0002 has no
        # loaded item, which its kind does not require, so it is not flagged for one.
        assert "missing loaded" not in flags
        assert "missing neutral" in flags
        page.select_option("#f-flag", "missing neutral")
        assert visible_items(page)
        page.select_option("#f-flag", "")
        page.click("#expand")
        assert open_claims(page) == ["c0001", "c0002"]
        page.click("#collapse")
        assert open_claims(page) == []
        assert page.errors == []


@pytest.mark.slow
def test_chinese_cyrillic_and_latin_prompts_render_as_glyphs_not_boxes(small_report: Path) -> None:
    """Each script's characters, screenshot in Chromium, are glyphs: none looks like the box the
    browser draws for a character no font has, which is put beside them in the same element as a
    known reference. The same check on the reference's own characters finds boxes: it can fail."""
    from reportpage import glyphs, report_page

    html = small_report.read_text(encoding="utf-8")
    # the CSS names a font for each script, and each prompt carries its language
    assert ":lang(zh),:lang(zh-Hans)" in html and '"Noto Sans CJK SC"' in html and '"WenQuanYi Zen Hei"' in html
    assert ":lang(ru),:lang(uk)" in html and '"DejaVu Sans"' in html
    assert '<td class="prompt" lang="zh">1989年6月3日至4日夜间北京发生了什么？</td>' in html
    with report_page(small_report) as page:
        for item, script in (("i0003", "Han"), ("i0005", "Cyrillic"), ("i0001", "Latin")):
            seen = glyphs(page, f"#item-{item} td.prompt", pattern=rf"\p{{Script={script}}}")
            assert len(seen.text) >= 5 if script != "Cyrillic" else len(seen.text) >= 3, (item, script)
            assert seen.drawn_as_boxes() == [], (item, script, [round(seen.likeness(g)) for g in seen.text])
            # ink, not blank cells
            assert all(seen.variance(g) > 500 for g in seen.text), (item, script)
        # the check itself: the reference boxes, measured as if they were the prompt, are boxes
        page.evaluate(
            "() => { document.querySelector('#item-i0002 td.prompt').textContent = '\u0378\u0379\u0380\u0381\u0382'; }"
        )
        control = glyphs(page, "#item-i0002 td.prompt", pattern=".")
        assert control.drawn_as_boxes() == list(range(5))
        assert page.errors == []


@pytest.mark.slow
def test_a_prompt_that_is_markup_stays_text_in_the_report(small: Any, tmp_path: Path) -> None:
    """Corpus text is escaped by the template; were it not, the Content-Security-Policy would still
    run no script but the report's own: no dialog opens, no element comes from the prompt."""
    from reportpage import report_page

    hostile = '<img src=x onerror=alert(1)><script>alert(2)</script>" onmouseover="alert(3)'
    small.item("i0006", "c0002", prompt=f"'{hostile}'".replace("'", ""), language="en")
    out, _ = write(tmp_path)
    with report_page(out) as page:
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.click("#claim-c0002 summary")
        page.hover("#item-i0006 td.prompt")
        assert page.inner_text("#item-i0006 td.prompt") == hostile
        assert page.evaluate("document.querySelectorAll('#item-i0006 img, #item-i0006 script').length") == 0
        assert dialogs == [] and page.errors == []


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["required", "advisory"])
def test_terminal_report_and_card_use_one_word_for_each_gate(ledgers: Any, tmp_path: Path, mode: str) -> None:
    """The judge and answerability gates as `propeval run` prints them in its summary table are the
    words the report's gate line and the card's tables use: `failed` when the gate is required,
    `advisory` when it is advisory, never a red FAIL beside an exit 0."""
    with (ledgers.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[tool.propeval.gates]\nanswerability = "{mode}"\njudge = "{mode}"\n')
    report = tmp_path / "report.html"
    steps = ["--skip", "dedup", "--skip", "groups"]  # this fixture's groups fail on their own (exit 1)
    result = CliRunner().invoke(cli, ["run", *steps, "--report", str(report)], catch_exceptions=False)
    rows = {line.split()[0]: line.split()[1] for line in result.output.splitlines() if len(line.split()) > 2}
    word = "failed" if mode == "required" else "advisory"
    assert rows["judge"] == rows["answerability"] == word, result.output
    assert result.exit_code == (1 if mode == "required" else 0)
    html = report.read_text(encoding="utf-8")
    gates = html.split('<ul class="gates" id="gates">', 1)[1].split("</ul>", 1)[0]
    for name in ("judge gate audit-v1", "judge gate facts-v1", "answerability gate"):
        assert f'{name}: <span class="word word-{word}">{word}</span>' in gates, name
    assert "FAIL" not in html.replace("FAILED", "")
    out = tmp_path / "rel"
    assert CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"| facts-v1 | gemma-3-270m | 57 | fact_state cohen_kappa 0.066 | judge_min_kappa 0.6 | {word} |" in card
    assert f"Answerability gate: **{word}**." in card
    assert "| FAIL |" not in card
