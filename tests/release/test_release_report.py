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

# Set on <body> once the load event has fired (which waits for every image): "<decoded>/<total>".
# An image the browser could not decode is not complete or has naturalWidth 0.
PROBE = """<script>
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) { ok++; } }
  document.body.setAttribute("data-images", ok + "/" + imgs.length);
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


def decoded_images(tmp_path: Path, html_file: Path) -> str:
    """Open a copy of ``html_file`` with the probe script and return its "<decoded>/<total>"."""
    probe = tmp_path / f"probe-{html_file.name}"
    probe.write_text(html_file.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()).stdout
    found = re.search(r'data-images="([0-9]+/[0-9]+)"', dom)
    assert found, "the probe script did not run"
    return found.group(1)


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


REPO = Path(__file__).resolve().parents[2]


def with_rubrics(c: Any) -> Any:
    """The starter rubrics, which the graded runs name: the report reads each run by its rubric's kind."""
    for name in ("facts-v1", "audit-v1"):
        shutil.copytree(REPO / "rubrics" / name, c.root / "rubrics" / name, dirs_exist_ok=True)
    return c


@pytest.mark.slow
def test_report_with_every_input_renders_in_chromium(ledgers: Any, tmp_path: Path) -> None:
    with_rubrics(ledgers)
    out, stdout = write(tmp_path)
    assert stdout == f"wrote {out}: 4 item(s), 3 grades file(s)\n"
    html = out.read_text(encoding="utf-8")
    # self-contained: no script, stylesheet, font or image from anywhere else
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", html)
    assert "<script" not in html and "@import" not in html and "url(" not in html
    # coverage, mix, bands, similarity, one confusion matrix, run facts, run audit
    assert verify_pngs(html) == 7
    assert "No data." not in html
    assert decoded_images(tmp_path, out) == "7/7"
    shot = tmp_path / "shot.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,3000", out.as_uri())
    from PIL import Image

    with Image.open(shot) as img:
        assert img.size == (1200, 3000)
        assert len(img.convert("L").getcolors(1 << 16) or []) > 50  # drawn plots, not a blank page


@pytest.mark.slow
def test_report_without_ledgers_shows_no_data_panels(small: Any, tmp_path: Path) -> None:
    out, _ = write(tmp_path)
    html = out.read_text(encoding="utf-8")
    for message in (
        "No data. ledger/difficulty.json is not present; run propeval difficulty.",
        "No data. ledger/dedup.json is not present; run propeval dedup.",
        "No data. ledger/judge/ holds no gate records; run the judge gate.",
        "No data. No scored runs under runs/*/grades-*.jsonl.",
    ):
        assert message in html
    assert decoded_images(tmp_path, out) == "2/2"


@pytest.mark.slow
@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda b64: base64.b64encode(b"not an image").decode(), id="not-a-png"),
        pytest.param(lambda b64: base64.b64encode(base64.b64decode(b64)[:30]).decode(), id="truncated-header"),
        pytest.param(lambda b64: b64[:40] + "!!%%" + b64[44:], id="bad-base64"),
    ],
)
def test_probe_fails_on_a_corrupt_image(small: Any, tmp_path: Path, corrupt: Any) -> None:
    out, _ = write(tmp_path)
    html = out.read_text(encoding="utf-8")
    first = re.search(r'data:image/png;base64,([^"]+)"', html)
    assert first
    broken = tmp_path / "broken.html"
    broken.write_text(html.replace(first.group(1), corrupt(first.group(1)), 1), encoding="utf-8")
    assert decoded_images(tmp_path, broken) == "1/2"


def test_run_summary_numbers(ledgers: Any) -> None:
    runs = summarise_runs(load_inputs(load_config(with_rubrics(ledgers).root)))
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
    with_rubrics(ledgers)
    shutil.rmtree(ledgers.root / "rubrics/audit-v1")
    path = ledgers.root / "runs/r2/grades-facts-v1.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace('"fact_score": 4', '"fact_score": 9', 1))
    runs = summarise_runs(load_inputs(load_config(ledgers.root)))
    assert [(p.path, p.line, p.rule) for p in runs.warnings] == [
        ("runs/r2/grades-facts-v1.jsonl", 1, "run-record"),
        ("rubrics/audit-v1/rubric.yaml", 0, "release-input"),
    ]
    assert "(needed by runs/r3/grades-audit-v1.jsonl) (file ignored)" in runs.warnings[1].message
    assert runs.files == ["runs/r1/grades-facts-v1.jsonl", "runs/r2/grades-facts-v1.jsonl"]
    (facts_panel,) = runs.panels()
    assert {c["language"]: c["ungraded"] for c in facts_panel.cells}["en"] == 1


@pytest.mark.slow
def test_png_check_fails_on_damaged_image_data(small: Any, tmp_path: Path) -> None:
    out, _ = write(tmp_path)
    html = out.read_text(encoding="utf-8")
    assert verify_pngs(html) == 2
    first = re.search(r'data:image/png;base64,([^"]+)"', html)
    assert first
    raw = base64.b64decode(first.group(1))
    damaged = base64.b64encode(raw[:200] + bytes(50) + raw[250:]).decode()
    with pytest.raises(SyntaxError, match="broken PNG file"):
        verify_pngs(html.replace(first.group(1), damaged, 1))
