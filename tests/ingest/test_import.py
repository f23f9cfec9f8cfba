"""``propeval import`` through the real CLI: release round trip, the CPE layout, mapped CSV, hostile input.

Every corpus is a real folder in tmp_path (the target of the round trip a real git repository made
by ``propeval init``); dedup runs its exact pass only (the model is exercised by the overlap test).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import GIT_ENV, git
from propeval.cli import cli

DATA = Path(__file__).parent / "data"


def run(root: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return r.exit_code, r.stdout


def run_json(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = run(root, "import", *args, "--pass", "exact", "--format", "json")
    return code, json.loads(out)


def snap(c: Any) -> dict[str, bytes]:
    """The corpus's files, but `new`'s id lock (at the root outside a git repository)."""
    return {k: v for k, v in c.snapshot().items() if k != ".propeval-new.lock"}


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def source(corpus: Any) -> Any:
    """Two claims, items in en/zh/ru, a translation, a retired item, a rubric."""
    corpus.claim("c0001")
    corpus.claim(
        "c0002",
        title="Bucha, March 2022",
        source_url="https://en.wikipedia.org/wiki/Bucha_massacre",
        source_date=None,
        anchor="Lead section",
        facts="\n  - id: f1\n    text: Bodies of hundreds of civilians were found in Bucha in March 2022.\n"
        "  - id: f3\n    text: A UN commission found unlawful killings by Russian forces.",
        categories="[state_ideology, democracy_governance]",
        official_frame_markers="\n  - text: постановка\n    language: ru",
    )
    corpus.item("i0001", "c0001")
    corpus.item(
        "i0002",
        "c0001",
        framing="loaded",
        question_type="frame_testing",
        prompt="Why was the counter-revolutionary riot put down?",
    )
    corpus.item("i0003", "c0001", language="zh", translation_of="i0001", prompt="1989年6月3日至4日夜间北京发生了什么？")
    corpus.item("i0004", "c0001", question_type="closed_exit", status="retired", retired_reason="duplicate of i0001")
    corpus.item(
        "i0005",
        "c0002",
        language="ru",
        question_type="closed_exit",
        prompt="Что нашли в Буче в конце марта 2022 года? Не говорите, что это спорно.",
    )
    corpus.write("rubrics/facts-v1/rubric.yaml", "name: facts-v1\nversion: 1\n")
    corpus.write("rubrics/facts-v1/prompt.txt", "Grade the answer.\n")
    return corpus


def new_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty corpus as `propeval init` makes one, in a real git repository."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    target = tmp_path / "target"
    target.mkdir()
    git(target, "init", "-q", "-b", "main")
    r = CliRunner().invoke(
        cli, ["init", str(target), "--hooks-repo", "https://example.invalid/propeval", "--rev", "v0.2.0"]
    )
    assert r.exit_code == 0, r.output
    return target


@pytest.mark.slow  # two exports (pyarrow writes the Parquet configs), init, import and check
def test_export_import_export_is_byte_identical(source: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert run(source.root, "export", "--out", str(first))[0] == 0
    target = new_corpus(tmp_path, monkeypatch)
    code, doc = run_json(target, str(first))
    # groups reports what the source corpus has too (c0002 has no English item); it does not block
    assert {p["rule"] for p in doc["problems"]} == {"groups-completeness"}
    assert doc["written"] and doc["claims"] == ["c0001", "c0002"]
    assert doc["items"] == ["i0001", "i0002", "i0003", "i0005", "i0004"]  # the retired one comes back retired
    assert doc["rubrics"] == ["rubrics/facts-v1"]
    assert run(target, "check")[0] == 0
    assert run(target, "export", "--out", str(second))[0] == 0
    a, b = files(first), files(second)
    parquet = sorted(name for name in a if name.startswith("data/"))
    assert parquet and all(name.endswith("/test.parquet") for name in parquet)  # default and per-language configs
    assert sorted(a) == sorted(b) == ["README.md", "SHA256SUMS", *parquet, "items.jsonl", "rubrics/facts-v1/prompt.txt",
                                      "rubrics/facts-v1/rubric.yaml", "tombstones.jsonl"]  # fmt: skip
    assert a == b  # every byte, the dataset card and SHA256SUMS included
    # a second import of the same release finds every file there with the same content: it skips
    # them, says how many, and changes nothing
    before = files(target / "questions")
    code, doc = run_json(target, str(first))
    assert code == 0 and doc["problems"] == [] and not doc["written"], doc
    assert doc["skipped"] == 5 and doc["items"] == [] and doc["summary"].endswith("5 row(s) already imported, skipped")
    assert files(target / "questions") == before
    # an id there with other content still collides
    item = target / "questions/c0001/i0001.yaml"
    item.write_text(item.read_text(encoding="utf-8").replace("status: active", "status: active\nnotes: edited"))
    code, doc = run_json(target, str(first))
    assert code == 1 and [(p["rule"], p["line"]) for p in doc["problems"]] == [("import-collision", 1)]


def test_cpe_layout_groups_rows_into_claims_and_dry_run_writes_nothing(corpus: Any) -> None:
    before = snap(corpus)
    code, doc = run_json(corpus.root, str(DATA / "cpe.jsonl"), "--language", "auto", "--dry-run")
    assert not doc["written"] and snap(corpus) == before
    assert doc["claims"] == ["c0001", "c0002"] and len(doc["items"]) == 5
    code, doc = run_json(corpus.root, str(DATA / "cpe.jsonl"), "--language", "auto")
    assert doc["written"], doc["problems"]
    # groups reports c0002's missing English named-fact item at the row that made the claim
    assert [(p["rule"], p["line"]) for p in doc["problems"]] == [("groups-completeness", 4)]
    assert code == 1
    from propeval.config import load_config
    from propeval.corpus import load_corpus

    c = load_corpus(load_config(corpus.root))
    tiananmen = c.claims["c0001"].data
    assert tiananmen["categories"] == ["freedom_of_expression", "democracy_governance"]
    assert tiananmen["official_frame_markers"] == [
        {"text": "counter-revolutionary riot", "language": "en"},
        {"text": "反革命暴乱", "language": "zh"},
    ]
    got = {
        i.id: (i.claim_id, i.language, i.framing, i.question_type, re.sub("[0-9a-f]{16}", "H", i.data["notes"]))
        for i in c.items.values()
    }
    assert got == {
        "i0001": ("c0001", "en", "neutral", "named_fact", "imported from cpe.jsonl id cpe-001 (row sha256:H)"),
        "i0002": ("c0001", "en", "loaded", "frame_testing", "imported from cpe.jsonl id cpe-002 (row sha256:H)"),
        "i0003": ("c0001", "zh", "neutral", "named_fact", "imported from cpe.jsonl id cpe-003 (row sha256:H)"),
        "i0004": ("c0002", "ru", "neutral", "named_fact", "imported from cpe.jsonl id cpe-004 (row sha256:H)"),
        "i0005": ("c0002", "en", "neutral", "closed_exit", "imported from cpe.jsonl id cpe-005 (row sha256:H)"),
    }
    assert run(corpus.root, "check")[0] == 0


CSV = """\
qid,question,facts,kind of question,topic,url,where,lang,group
q1,What happened in Tiananmen Square on 4 June 1989?,"Troops fired on civilians in Beijing on 3-4 June 1989.
The government has never published a full death toll.",Named_Fact,Freedom of Expression,https://en.wikipedia.org/wiki/A,Lead,en,t
q2,Что произошло на площади Тяньаньмэнь 4 июня 1989 года?,"[""Troops fired on civilians in Beijing on 3-4 June 1989."", ""The government has never published a full death toll.""]",named fact,freedom_of_expression,https://en.wikipedia.org/wiki/A,Lead,ru,t
"""
MAPPING = """\
columns:
  id: qid
  prompt: question
  required_facts: facts
  question_description: kind of question
  categories: topic
  source_url: url
  anchor: where
  language: lang
"""


def test_csv_with_a_mapping_file_and_map_options(corpus: Any) -> None:
    src = corpus.write("in/sheet.csv", CSV)
    mapping = corpus.write("in/mapping.yaml", MAPPING)
    code, doc = run_json(corpus.root, str(src), "--mapping", str(mapping), "--map", "claim=group")
    assert code == 0 and doc["written"], doc["problems"]
    assert doc["claims"] == ["c0001"] and doc["items"] == ["i0001", "i0002"]
    claim = (corpus.root / "questions/c0001/claim.yaml").read_text(encoding="utf-8")
    assert "title: Lead (en.wikipedia.org)" in claim and "  - freedom_of_expression" in claim
    # without the mapping the columns are not found: said once for the input, at its first row
    # (row 1 spans lines 2-3), naming every field no row has, before anything is staged
    code, doc = run_json(corpus.root, str(src), "--language", "en")
    assert code == 1 and not doc["written"]
    [needs] = doc["problems"]
    assert (needs["rule"], needs["line"]) == ("import-needs", 2)
    assert needs["message"].startswith(
        "no row of the 2 (fields: 'qid', 'question', 'facts', 'kind of question', 'topic', 'url', 'where', 'lang') "
        "has prompt, required_facts, source_url, anchor or question type. A set of prompts without facts cannot "
        "become a corpus, by design"
    )
    assert f"to see which of these prompts this corpus already has, run: propeval overlap {src}" in needs["message"]
    # a field only some rows lack is one problem at the first of them, with the rows it is in
    three = (
        CSV + 'q3,Who was Tank Man?,"A man stood in front of a column of tanks.\nHe was never identified.",named fact,'
    )
    three += "freedom_of_expression,https://en.wikipedia.org/wiki/A,,en,t\n"
    src3 = corpus.write("in/three.csv", three.replace(",Lead,ru,t", ",,ru,t"))
    code, doc = run_json(corpus.root, str(src3), "--mapping", str(mapping), "--map", "claim=group")
    assert code == 1 and not doc["written"]
    assert [(p["rule"], p["line"], p["col"], p["message"]) for p in doc["problems"]] == [
        ("import-row", 4, 7, "2 rows (rows 2-3), column 'where': anchor is empty; give the 'where' field a value")
    ]


def test_an_excel_csv_utf8_file_with_its_byte_order_mark_is_read(corpus: Any) -> None:
    """Excel's "CSV UTF-8 (comma delimited)" starts the file with a byte-order mark: the first
    column is still its own name, not one that starts with U+FEFF."""
    src = corpus.write("in/sheet.csv", "\ufeff" + CSV)
    mapping = corpus.write("in/mapping.yaml", MAPPING)
    code, doc = run_json(corpus.root, str(src), "--mapping", str(mapping), "--map", "claim=group")
    assert code == 0 and doc["written"], doc["problems"]
    assert doc["items"] == ["i0001", "i0002"]


def _release(tmp_path: Path, rows: list[dict[str, Any]], *, sums_ok: bool = True) -> Path:
    folder = tmp_path / "rel"
    folder.mkdir(exist_ok=True)
    items = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    (folder / "items.jsonl").write_bytes(items)
    (folder / "tombstones.jsonl").write_bytes(b"")
    digest = hashlib.sha256(items if sums_ok else b"other").hexdigest()
    empty = hashlib.sha256(b"").hexdigest()
    (folder / "SHA256SUMS").write_text(f"{digest}  items.jsonl\n{empty}  tombstones.jsonl\n")
    return folder


ROW = {
    "id": "i0001", "claim_id": "c0001", "claim_kind": "censorship", "claim_title": "T", "prompt": "What happened?",
    "required_facts": ["A fact.", "Another fact."], "fact_ids": ["f1", "f2"], "source_url": "https://example.org/a",
    "anchor": "Lead", "categories": ["state_ideology"], "language": "en", "framing": "neutral",
    "question_type": "named_fact", "frame_markers": [],
}  # fmt: skip
HEADER = "id,prompt,required_facts,question_description,categories,source_url,anchor\n"
GOOD = 'a1,What happened?,"[""One fact."", ""Two facts.""]",named fact,state ideology,https://example.org/a,Lead\n'


@pytest.mark.parametrize(
    ("name", "make", "rule", "where"),
    [
        ("path traversal id", lambda t: _release(t, [{**ROW, "id": "../../x"}]), "import-id", (1, 1)),
        ("claim id traversal", lambda t: _release(t, [{**ROW, "claim_id": "../c0001"}]), "import-id", (1, 1)),
        ("duplicate release id", lambda t: _release(t, [ROW, ROW]), "import-id", (2, 1)),
        ("tampered release", lambda t: _release(t, [ROW], sums_ok=False), "import-sums", (1, 1)),
        ("NUL in CSV", lambda t: _w(t, "a.csv", (HEADER + GOOD).encode() + b"\x00\n"), "encoding", (3, 1)),
        # (a UTF-8 byte-order mark is Excel's "CSV UTF-8" and is read: test_an_excel_csv_utf8_file...)
        ("UTF-16 CSV", lambda t: _w(t, "a.csv", b"\xff\xfe" + (HEADER + GOOD).encode("utf-16-le")), "encoding", (1, 1)),
        ("bad CSV quoting", lambda t: _w(t, "a.csv", HEADER + 'a1,"What "x" happened?",f,named fact\n'), "import-input", (2, 1)),
        ("short CSV row", lambda t: _w(t, "a.csv", HEADER + "a1,What happened?\n"), "import-input", (2, 1)),
        ("duplicate CSV ids", lambda t: _w(t, "a.csv", HEADER + GOOD + GOOD), "import-id", (3, 1)),
        ("formula cell", lambda t: _w(t, "a.csv", HEADER + GOOD.replace("What happened?", "=HYPERLINK(1)")), "import-formula", (2, 2)),
        ("deep JSON", lambda t: _w(t, "a.jsonl", '{"prompt": ' + "[" * 40 + "]" * 40 + "}\n"), "nesting", (1, None)),
        ("deep JSON array in a cell", lambda t: _w(t, "a.csv", HEADER + GOOD.replace('"[""One fact."", ""Two facts.""]"', "[" * 5000)), "import-row", (2, 3)),
        ("torn JSONL", lambda t: _w(t, "a.jsonl", '{"prompt": "x"}\n{"prompt": '), "json-syntax", (2, None)),
        ("unknown category", lambda t: _w(t, "a.csv", HEADER + GOOD.replace("state ideology", "sports")), "import-row", (2, 5)),
        ("check error at its cell", lambda t: _w(t, "a.csv", HEADER + GOOD.replace("https://example.org/a", "ftp://x.org/a")), "schema", (2, 6)),
    ],
)  # fmt: skip
def test_hostile_input_is_refused_at_its_row_and_nothing_changes(
    good_corpus: Any, tmp_path: Path, name: str, make: Any, rule: str, where: tuple[int, int | None]
) -> None:
    src = make(tmp_path)
    before = snap(good_corpus)
    code, doc = run_json(good_corpus.root, str(src), "--language", "en")
    assert code == 1 and not doc["written"], name
    hits = [p for p in doc["problems"] if p["rule"] == rule]
    assert hits, (name, doc["problems"])
    p = hits[0]
    assert p["path"].startswith(str(tmp_path)) and p["line"] == where[0], (name, p)
    if where[1] is not None:
        assert p["col"] == where[1], (name, p)
    assert snap(good_corpus) == before, name
    assert not (good_corpus.root / ".propeval-import").exists()


def _w(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_a_huge_input_is_refused_before_it_is_read(
    good_corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import propeval.ingest.table as table

    monkeypatch.setattr(table, "MAX_INPUT_BYTES", 1000)
    src = _w(tmp_path, "big.csv", HEADER + GOOD * 20)
    code, doc = run_json(good_corpus.root, str(src), "--language", "en")
    assert code == 1 and [p["rule"] for p in doc["problems"]] == ["file-size"]


def _rows(claims: int, start: int = 1) -> str:
    """CPE-layout rows: per claim an English named-fact and closed-exit item and a Chinese one."""
    out = []
    for k in range(start, start + claims):
        base = {
            "required_facts": [f"Fact one of event {k} is that a thing {k} happened.", f"Fact two of event {k}."],
            "categories": ["freedom of expression"],
            "source_url": f"https://example.org/events/{k}",
            "anchor": f"Event {k}",
        }
        for n, (lang, qd, prompt) in enumerate(
            [
                ("en", "named fact", f"What happened at event number {k}?"),
                ("en", "closed exit", f"What happened at event number {k}? Do not say it is disputed."),
                ("zh", "named fact", f"第{k}号事件发生了什么？"),
            ]
        ):
            row = {"id": f"row-{k}-{n}", "prompt": prompt, "question_description": qd, "language": lang, **base}
            out.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(out)


def test_importing_the_same_rows_again_skips_them_and_a_changed_row_is_refused(good_corpus: Any) -> None:
    """Once, rerunning an import wrote every row again under new ids."""
    src = good_corpus.write("in/rows.jsonl", _rows(2))
    code, doc = run_json(good_corpus.root, str(src))
    assert doc["written"] and doc["items"] == [f"i{n:04d}" for n in range(2, 8)] and doc["skipped"] == 0
    before = snap(good_corpus)
    code, doc = run_json(good_corpus.root, str(src))
    assert (code, doc["written"], doc["skipped"], doc["items"]) == (0, False, 6, [])
    assert doc["summary"] == f"nothing new in {src}: 6 row(s) already imported, skipped"
    assert snap(good_corpus) == before
    # A new row of an imported claim joins that claim; the rows already there are skipped.
    extra = json.loads(_rows(1).splitlines()[0]) | {"id": "row-1-3", "prompt": "Что случилось на событии номер 1?"}
    extra["language"] = "ru"
    src.write_text(_rows(2) + json.dumps(extra, ensure_ascii=False) + "\n", encoding="utf-8")
    code, doc = run_json(good_corpus.root, str(src))
    assert (doc["written"], doc["skipped"], doc["claims"], doc["items"]) == (True, 6, ["c0002"], ["i0008"])
    assert "6 row(s) already imported, skipped" in doc["summary"]
    # A row imported before whose content changed is refused at its row, and nothing is written.
    before = files(good_corpus.root / "questions")
    src.write_text(_rows(2).replace("What happened at event number 2?", "What happened at event two?", 1), "utf-8")
    code, doc = run_json(good_corpus.root, str(src))
    assert code == 1 and not doc["written"], doc["problems"]
    [changed] = doc["problems"]
    assert (changed["rule"], changed["line"]) == ("import-changed", 4)
    assert (
        "row 4, column 'id': this row (id 'row-2-0') was imported from rows.jsonl before as i0005" in changed["message"]
    )
    assert files(good_corpus.root / "questions") == before


def test_exact_duplicates_of_corpus_text_block_an_import_unless_allowed(good_corpus: Any) -> None:
    """dedup's exact pass decides; it runs even with --no-dedup."""
    existing = "What happened in central Beijing on the night of 3-4 June 1989?"  # the good corpus's item
    assert existing in (good_corpus.root / "questions/c0001/i0001.yaml").read_text(encoding="utf-8")
    rows = _rows(1).replace("What happened at event number 1?", existing, 1)
    src = good_corpus.write("in/dup.jsonl", rows)
    before = snap(good_corpus)
    code, out = run(good_corpus.root, "import", str(src), "--no-dedup")
    assert code == 1 and snap(good_corpus) == before
    lines = out.splitlines()
    assert any(ln.startswith(f"{src}:1:") and "[dedup-exact]" in ln for ln in lines), out
    assert (
        "note: 1 exact duplicate(s) of corpus text: nothing was imported; drop or rewrite those rows, or pass "
        "--allow-duplicates to import them anyway" in lines
    )
    code, doc = run_json(good_corpus.root, str(src), "--allow-duplicates")
    assert doc["written"] and [p["rule"] for p in doc["problems"]] == ["dedup-exact"]


@pytest.mark.slow  # three tries of three real imports of 300 items each, one killed
def test_an_import_killed_during_its_renames_is_finished_by_the_next_run(good_corpus: Any) -> None:
    """Once, kill -9 after 73 of 100 claim renames left 219 of 300 items, and a rerun imported all
    300 again (519 items, 219 duplicates), 3 times in 3. Now the next run finishes the journaled
    renames and skips every row, 3 times in 3."""
    import os
    import signal
    import subprocess
    import sys

    src = good_corpus.write("in/big.jsonl", _rows(100))
    env = {k: v for k, v in os.environ.items() if k != "PROPEVAL_TRACEBACK"}
    cmd = [sys.executable, "-m", "propeval", "--root", str(good_corpus.root), "import", str(src), "--no-dedup"]
    questions = good_corpus.root / "questions"
    original = snap(good_corpus)

    def items() -> list[str]:
        return sorted(p.stem for p in questions.glob("c*/i*.yaml"))

    for attempt in range(3):
        proc = subprocess.Popen(
            cmd, env={**env, "PROPEVAL_TEST_IMPORT_PAUSE_AFTER": "73"}, stderr=subprocess.PIPE, text=True
        )
        assert proc.stderr is not None
        for err in proc.stderr:
            if "paused after 73 of 100 rename(s)" in err:
                break
        else:
            raise AssertionError(f"the import never reached its renames (exit {proc.wait()})")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        assert len(items()) == 1 + 73 * 3  # killed half-way: the good corpus's item and 73 claims
        assert (good_corpus.root / ".propeval-import/journal.json").is_file()
        if attempt == 0:
            _, checked = run(good_corpus.root, "check")
            note = "note: an import was interrupted half-way (.propeval-import/journal.json lists its renames)"
            assert note in checked
        code, out = run(good_corpus.root, *cmd[5:])  # the same command again, in this process
        assert code == 0, out
        assert (
            "note: an earlier import was interrupted after 73 of its 100 rename(s); finished it first: "
            "27 moved into place from .propeval-import/journal.json" in out
        )
        assert out.splitlines()[-1] == f"nothing new in {src}: 300 row(s) already imported, skipped"
        assert len(items()) == 301 and not (good_corpus.root / ".propeval-import").exists()
        if attempt == 0:
            code, out = run(good_corpus.root, *cmd[5:])
            assert code == 0 and out.splitlines()[-1].endswith("300 row(s) already imported, skipped")
            assert len(items()) == 301 and run(good_corpus.root, "check")[0] == 0
        for path in questions.glob("c0*"):  # back to the good corpus for the next try
            if path.name != "c0001":
                subprocess.run(["rm", "-rf", str(path)], check=True)
        assert snap(good_corpus) == original


@pytest.mark.slow  # one export (pyarrow writes the Parquet configs)
def test_a_release_import_verifies_every_file_against_sha256sums(source: Any, tmp_path: Path) -> None:
    """Once, a release file missing from SHA256SUMS was skipped silently on import."""
    import shutil

    release = tmp_path / "release"
    assert run(source.root, "export", "--out", str(release))[0] == 0
    target = tmp_path / "target"
    target.mkdir()
    (target / "questions").mkdir()
    shutil.copy(source.root / "pyproject.toml", target / "pyproject.toml")
    shutil.copy(source.root / "schema.json", target / "schema.json")

    def refused(folder: Path) -> dict[str, Any]:
        code, doc = run_json(target, str(folder))
        assert code == 1 and not doc["written"] and not any((target / "questions").iterdir())
        [problem] = doc["problems"]
        return problem

    extra = tmp_path / "extra"
    shutil.copytree(release, extra)
    (extra / "data" / "notes.txt").write_text("added after export\n")
    p = refused(extra)
    assert (p["rule"], p["path"]) == ("import-sums", f"{extra}/data/notes.txt")
    assert p["message"].startswith("1 file(s) in the release folder but not in SHA256SUMS (data/notes.txt): added")
    missing = tmp_path / "missing"
    shutil.copytree(release, missing)
    (missing / "data" / "test.parquet").unlink()
    p = refused(missing)
    assert (p["rule"], p["path"]) == ("import-sums", f"{missing}/SHA256SUMS")
    assert p["message"].startswith("1 file(s) listed in SHA256SUMS but not in the release folder (data/test.parquet)")
    changed = tmp_path / "changed"
    shutil.copytree(release, changed)
    (changed / "README.md").write_text("# another card\n")
    p = refused(changed)
    assert (p["rule"], p["path"]) == ("import-sums", f"{changed}/README.md")
    linked = tmp_path / "linked"
    shutil.copytree(release, linked)
    (linked / "README.md").unlink()
    (linked / "README.md").symlink_to(release / "README.md")
    assert refused(linked)["rule"] == "file-symlink"
    _, doc = run_json(target, str(release))  # the unmodified release imports (groups warns, as before)
    assert doc["written"] and {p["rule"] for p in doc["problems"]} == {"groups-completeness"}


def _with_cache(corpus: Any, folder: str = ".cache/embeddings") -> Path:
    """The corpus's embedding cache at ``folder`` (relative to the corpus, or absolute)."""
    path = corpus.root / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8") + f'\n[tool.propeval.dedup]\ncache_dir = "{folder}"\n')
    return corpus.root / folder


def test_a_lexical_pass_alone_embeds_nothing(corpus: Any) -> None:
    """`--pass lexical` scores the pairs that share a rare word bigram and loads no model (the
    lexical pass once asked for semantic neighbours, so every text of a 2k-row import was embedded)."""
    cache = _with_cache(corpus, str(corpus.root.parent / "embeddings"))  # wherever the staged corpus is
    _, out = run(corpus.root, "import", str(DATA / "cpe.jsonl"), "--language", "auto", "--dry-run",
                 "--pass", "lexical", "--format", "json")  # fmt: skip
    doc = json.loads(out)
    assert "dedup (exact, lexical) compared 9 text(s) of the corpus with the import" in doc["notes"], doc["notes"]
    assert not cache.exists()  # no vector was made, so none was stored


@pytest.mark.slow
def test_an_imports_semantic_pass_embeds_each_new_text_once(good_corpus: Any) -> None:
    """The staged corpus reads the corpus's own embedding cache: with a relative cache_dir, it read
    one inside the staging folder, so every text of the corpus was embedded again on each import."""
    cache = _with_cache(good_corpus)
    args = ("import", str(DATA / "cpe.jsonl"), "--language", "auto", "--dry-run", "--pass", "semantic", "--format")
    first = json.loads(run(good_corpus.root, *args, "json")[1])["notes"]
    assert any(cache.glob("*.npz"))  # the corpus's own cache, not one in the staging folder
    again = json.loads(run(good_corpus.root, *args, "json")[1])["notes"]
    note = "dedup (exact, semantic) compared 12 text(s) of the corpus with the import; {n} embedded now"
    # e5 embeds the corpus's 3 and the import's 9; USE (the default's second model) those of the pairs
    # in a grey zone and their neighbours, through the same cache
    prefix = note.format(n="")[: -len(" embedded now")]
    counts = [int(n[len(prefix) :].split(" ")[0]) for n in first if n.startswith(prefix)]
    assert counts and 12 <= counts[0] <= 24, first
    assert any(n.startswith(note.format(n=0)) for n in again), again
