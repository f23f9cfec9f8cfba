"""`make run`, the README's main-job command, in a fresh clone; and `propeval run` on small corpora."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import CARD_SECTIONS, REPO, CorpusDir, card_sections
from propeval.cli import cli


def _setup_key(folder: Path) -> str:
    """The Makefile's SETUP_KEY: what the install stamp is named after (pyproject.toml above its first
    [tool.*] table, then the Makefile)."""
    pyproject = (folder / "pyproject.toml").read_bytes()
    head = pyproject[: pyproject.index(b"\n[tool.") + 1]
    data = head + (folder / "Makefile").read_bytes()
    return hashlib.sha256(data).hexdigest()[:12]


@pytest.mark.slow
def test_make_run_in_a_fresh_clone_a_maintainers_first_hour(tmp_path: Path) -> None:
    """The maintainer's first run: `make run` on the whole starter corpus in a fresh clone (with the
    installed venv: `make run` installs nothing when its stamp is there), then the report in
    Chromium at 1400 px and the dataset card.

    - the main job prints at most 40 lines (the 162 missing records are one line), exits 0, and
      leaves every tracked file as it was;
    - the report is at most 15,000 px tall as it opens, its script runs under its CSP, its Chinese
      prompts are drawn as glyphs, and it names each gate with the terminal's word;
    - the card opens with what the dataset is and how to load it, then its sections in the order a
      Hugging Face user expects, the gates in the same words.
    """
    from reportpage import glyphs, page_height, report_page

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    venv = Path(sys.prefix)
    stamp = venv / f".propeval-installed-{_setup_key(clone)}"
    if not stamp.is_file():
        pytest.fail(
            f"{venv} was not set up by `make setup` from this commit's Makefile and pyproject.toml ({stamp.name} "
            "is missing), so `make run` in the clone would install into it; run `make setup` and commit first"
        )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}
    proc = subprocess.run(
        ["make", "--no-print-directory", "run", f"VENV={venv}"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    lines = out.splitlines()
    assert len(lines) <= 40, out
    table = out[out.index("step  ") :].splitlines()
    assert table[0].split() == ["step", "status", "problems"]
    statuses = {line.split()[0]: line.split()[1] for line in table[2:10]}
    assert list(statuses) == ["check", "groups", "dedup", "answerability", "judge", "difficulty", "stats", "report"]
    assert statuses["check"] == statuses["dedup"] == statuses["report"] == "ok", out
    # The starter corpus has no answerability or judge-gate records: advisory, exit 0.
    assert statuses["answerability"] == statuses["judge"] == "advisory", out
    assert (
        "advisory: warnings only (an advisory gate's problems are warnings): reported, and they do not fail the run"
        in lines
    )
    # The starter corpus ships no answerability record (none would verify): one line says so for all.
    alike = [line for line in lines if "[answerability]" in line and " alike: " in line]
    assert len(alike) == 1 and "162 alike: <id>: no answerability record" in alike[0], out
    assert "note: stats: 162 active item(s) in 30 claim(s), 0 retired; de 16, en 64, ru 29, uk 29, zh 24" in lines
    assert "note: dedup: ledger/dedup.json already records this result" in out
    assert out.rstrip().endswith("run: exit 0")
    # Nothing tracked changed; the report is the one new file, and git ignores it.
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=clone, capture_output=True, text=True)
    assert status.stdout == "!! report.html\n", status.stdout

    with report_page(clone / "report.html", width=1400) as page:
        assert page.errors == []
        height = page_height(page)
        assert height <= 15_000, height
        gates = page.evaluate("Array.from(document.querySelectorAll('#gates li')).map(li => li.innerText)")
        assert next(g for g in gates if g.startswith("judge gate facts-v1: ")).startswith(
            f"judge gate facts-v1: {statuses['judge']}"
        )
        assert next(g for g in gates if g.startswith("answerability gate: ")).startswith(
            f"answerability gate: {statuses['answerability']}"
        )
        first_zh = page.evaluate("document.querySelector('tr[data-language=zh]').id")
        seen = glyphs(page, f"#{first_zh} td.prompt")
        assert len(seen.text) >= 5 and seen.drawn_as_boxes() == [], [round(seen.likeness(g)) for g in seen.text]
        page.screenshot(path=str(tmp_path / "report-chinese.png"))  # kept with the test's folder when it fails

    rel = tmp_path / "release"
    export = subprocess.run(
        [str(venv / "bin" / "propeval"), "--root", str(clone), "export", "--out", str(rel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert export.returncode == 0, export.stdout + export.stderr
    card = (rel / "README.md").read_text(encoding="utf-8")
    body = card.split("\n---\n", 1)[1]
    intro, rest = body.split("\n## How to load\n", 1)
    assert intro.strip().startswith("# propeval\n\npropeval is a set of evaluation items")
    assert "**Who it is for:**" in intro and "load_dataset(" in rest.split("\n## Uses\n", 1)[0]
    assert [h for h in card_sections(card) if h in CARD_SECTIONS] == CARD_SECTIONS
    # the starter corpus ships no judge-gate record (none could verify): the card says so, no score
    assert "| facts-v1 | - | - | - | - | advisory |" in card
    assert "**facts-v1**: advisory: no judge-gate record: scores from this judge are not validated" in card
    assert "Answerability gate: **advisory**." in card


@pytest.mark.slow
def test_run_exits_with_the_worst_step_and_still_writes_the_report(good_corpus: CorpusDir) -> None:
    """A schema error fails `check` (exit 1); every other step still runs, and the report is written."""
    good_corpus.item("i0002", framing="sideways")
    result = CliRunner().invoke(cli, ["run", "--skip", "dedup"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("questions/c0001/i0002.yaml:") and "[schema]" in line for line in lines)
    rows = {
        line.split()[0]: line.split()[1]
        for line in lines
        if line.split()[:1]
        and line.split()[0] in ("check", "groups", "answerability", "judge", "difficulty", "stats", "report")
    }
    assert rows["check"] == "failed"
    assert rows["report"] == "ok"
    assert "dedup" not in [line.split()[0] for line in lines if line.strip()]
    assert (good_corpus.root / "report.html").is_file()
    assert result.output.rstrip().endswith("run: exit 1")


@pytest.mark.slow
def test_run_reports_each_step_on_its_own_and_a_broken_rubric_fails_the_judge_gate(good_corpus: CorpusDir) -> None:
    """A rubric that does not parse fails the judge gate at its line; the answerability gate, which needs
    the facts-v1 rubric this corpus lacks, is an error; the other steps still run."""
    folder = good_corpus.root / "rubrics" / "broken"
    folder.mkdir(parents=True)
    (folder / "rubric.yaml").write_text("kind: [unclosed\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "--skip", "dedup"], catch_exceptions=False)
    lines = result.output.splitlines()
    assert "rubrics/broken/rubric.yaml:2:1 [yaml-syntax] broken: did not find expected ',' or ']'" in result.output
    assert "[rubric] no rubric 'facts-v1' (looked for rubric.yaml; known: broken)" in result.output
    table = lines[lines.index(next(x for x in lines if x.startswith("step "))) + 2 :]
    assert [row.split()[:2] for row in table[:7]] == [
        ["check", "ok"],
        ["groups", "ok"],
        ["answerability", "error"],
        ["judge", "failed"],
        ["difficulty", "skipped"],
        ["stats", "ok"],
        ["report", "ok"],
    ]
    assert result.exit_code == 1


def _four_items_without_records(corpus: CorpusDir) -> None:
    corpus.claim()
    for n, lang in enumerate(("en", "de", "ru", "uk"), 1):
        corpus.item(f"i000{n}", language=lang)
    shutil.copytree(REPO / "rubrics", corpus.root / "rubrics")


@pytest.mark.slow
def test_run_shows_problems_alike_as_one_line_and_verbose_lists_each(corpus: CorpusDir) -> None:
    """Four items without an answerability record: one line with the count and how to list them;
    --verbose lists the four. The table's words are explained under it."""
    _four_items_without_records(corpus)
    out = CliRunner().invoke(cli, ["run", "--skip", "dedup"], catch_exceptions=False).output
    lines = out.splitlines()
    assert (
        "questions/c0001/i0001.yaml … i0004.yaml [answerability] 4 alike: <id>: no answerability record "
        "(ledger/answerability/<id>.json); a maintainer records this (propeval gate answerability --online <id>, "
        "from a trusted install: SECURITY.md); nothing for a contributor to run [--verbose lists each]"
    ) in lines
    assert not any(line.startswith("questions/c0001/i0002.yaml") for line in lines)
    assert "failed: errors: they fail the run (exit 1)" in lines
    assert "skipped: nothing to check; the step's note says why" in lines
    verbose = CliRunner().invoke(cli, ["run", "--skip", "dedup", "--verbose"], catch_exceptions=False).output
    assert [line.split()[0] for line in verbose.splitlines() if "[answerability]" in line] == [
        f"questions/c0001/i000{n}.yaml" for n in (1, 2, 3, 4)
    ]
    assert " alike: " not in verbose


@pytest.mark.slow
def test_run_writes_the_dedup_record_only_with_record(corpus: CorpusDir, in_git: Any, tmp_path: Path) -> None:
    """Without --record the main job leaves the tree as it was and says what it would record and why;
    with it, the record is written; once it stands, a second run leaves it as it is."""
    corpus.claim()
    corpus.item()
    corpus.item("i0002", language="de", prompt="Was geschah in der Nacht zum 4. Juni 1989 in Peking?")
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus")
    steps = [
        "--skip",
        "answerability",
        "--skip",
        "judge",
        "--skip",
        "difficulty",
        "--report",
        str(tmp_path / "report.html"),
    ]
    before = corpus.snapshot()
    out = CliRunner().invoke(cli, ["run", *steps], catch_exceptions=False).output
    assert corpus.snapshot() == before and in_git("status", "--porcelain") == ""
    assert (
        "note: dedup: ledger/dedup.json not written (there is no record yet): the report and `propeval export` "
        "show it as not current until a maintainer records this run with `propeval run --record` (or `propeval "
        "dedup --record`) and commits ledger/dedup.json"
    ) in out.splitlines()
    out = CliRunner().invoke(cli, ["run", *steps, "--record"], catch_exceptions=False).output
    assert "note: dedup: recorded this run in ledger/dedup.json (unsigned; there is no record yet)" in out
    in_git("add", "-A")
    in_git("commit", "-qm", "record")
    corpus.item("i0003", language="ru", prompt="Что произошло в Пекине в ночь на 4 июня 1989 года?")
    out = CliRunner().invoke(cli, ["run", *steps], catch_exceptions=False).output
    assert in_git("status", "--porcelain") == "?? questions/c0001/i0003.yaml\n"
    note = next(line for line in out.splitlines() if line.startswith("note: dedup: ledger/dedup.json"))
    assert note.startswith("note: dedup: ledger/dedup.json not written (the corpus changed: corpus_hash sha256:")
    out = CliRunner().invoke(cli, ["run", *steps, "--record"], catch_exceptions=False).output
    assert "note: dedup: recorded this run in ledger/dedup.json (unsigned; the corpus changed: " in out
    out = CliRunner().invoke(cli, ["run", *steps], catch_exceptions=False).output
    assert "already records this result" in out
