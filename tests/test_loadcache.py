"""The load cache keeps each file's head unpacked and the rest packed (#40): a commit's check reads
whole only the files it reports on, and what it answers from a head is what the data says."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import CorpusDir, git
from propeval.cli import cli
from propeval.config import load_config
from propeval.corpus import load_corpus
from propeval.loadcache import HEAD, CachedDocument, head_of
from propeval.sourceurl import source_key


def aged(root: Path) -> None:
    """Every file a minute old: the load cache keeps only files unchanged for two seconds."""
    then = time.time() - 60
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (then, then))


def warm(corpus: CorpusDir) -> Any:
    """A corpus loaded twice: the second load takes every file from the cache."""
    aged(corpus.root)
    load_corpus(load_config())
    loaded = load_corpus(load_config())
    assert loaded.parsed == 0
    return loaded


@pytest.mark.parametrize(
    "data",
    [
        {"id": "i0001", "claim_id": "c0001", "language": "en", "status": "active"},
        {"id": None, "claim_id": 7, "status": True, "translation_of": None},
        {"id": ["i0001"], "language": {"tag": "en"}, "source_url": 3.5},
        {},
    ],
    ids=["strings", "null-int-bool", "structures", "empty"],
)
def test_a_head_answers_as_the_data_would(data: dict[str, Any], tmp_path: Path) -> None:
    """``get`` from a head equals ``dict.get`` for every head key, with and without a default: a
    value kept as it is, an absent key as absent, a null or a structure read from the data."""
    import hashlib
    import marshal

    from propeval.loadcache import _Blob

    packed = marshal.dumps(data) + marshal.dumps(("", {}, {}))
    mid = len(marshal.dumps(data))
    rel = "questions/c0001/i0001.yaml"
    blob = tmp_path / "blob"
    blob.write_bytes(packed)
    span = (0, mid, len(packed), hashlib.sha256(packed).digest())
    doc = CachedDocument(rel, rel, head_of(data), _Blob(tmp_path, blob, 0, len(packed)), span)
    for key in HEAD[:-1]:
        assert doc.get(key) == data.get(key), key
        assert doc.get(key, "") == data.get(key, ""), key
    assert doc.data == data


def test_a_narrowed_check_unpacks_only_the_files_it_reports_on(corpus: CorpusDir) -> None:
    """A commit's check of one new item in a warm corpus reads the other files' heads (ids, claim
    ids, sources) and never unpacks their data: only the new file is read whole."""
    for n in range(1, 6):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/report/{n}")
        corpus.item(f"i000{n}", f"c000{n}")
    git(corpus.root, "init", "-q", "-b", "main")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "corpus")
    aged(corpus.root)
    runner = CliRunner()
    assert runner.invoke(cli, ["check"]).exit_code == 0  # fills the load cache
    corpus.item("i0006", "c0003", framing="loaded", question_type="frame_testing", prompt="Why was it hidden?")
    git(corpus.root, "add", "-A")

    from propeval.checker import check_corpus
    from propeval.workspace import Workspace

    ws = Workspace(load_config())
    result = check_corpus(ws, changed_since="HEAD")
    assert result.problems == [], result.problems
    unpacked = sorted(
        d.relpath for d in ws.corpus.documents() if isinstance(d, CachedDocument) and "data" in d.__dict__
    )
    assert unpacked == []
    assert [d.relpath for d in ws.corpus.documents() if not isinstance(d, CachedDocument)] == [
        "questions/c0003/i0006.yaml"
    ]


def test_the_claims_per_source_cap_counts_cached_claims_as_parsed_ones(corpus: CorpusDir) -> None:
    """The cap reads each cached claim's page from its head (``#source_key``): a warm run reports the
    same claims as a cold one, an archive copy of a page counting as the page."""
    page = "https://example.org/report/1"
    corpus.claim("c0001", source_url=page)
    corpus.claim("c0002", source_url=page + "/#top")
    corpus.claim("c0003", source_url="https://web.archive.org/web/2020/" + page)
    corpus.claim("c0004", source_url="https://example.org/other")
    pyproject = corpus.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace("max_claims_per_source = 13", "max_claims_per_source = 2"),
        encoding="utf-8",
    )
    for n in range(1, 5):
        corpus.item(f"i000{n}", f"c000{n}")
    runner = CliRunner()
    cold = runner.invoke(cli, ["check", "--format", "json"])
    aged(corpus.root)
    runner.invoke(cli, ["check"])
    assert load_corpus(load_config()).parsed == 0
    hot = runner.invoke(cli, ["check", "--format", "json"])
    assert cold.exit_code == hot.exit_code == 1, cold.output
    assert cold.output == hot.output
    assert cold.output.count("serves 3 claims") == 3
    loaded = warm(corpus)
    assert {c.id: c.source_key for c in loaded.all_claims} == {
        "c0001": page,
        "c0002": page,
        "c0003": page,
        "c0004": "https://example.org/other",
    }


@pytest.mark.parametrize(
    "url",
    ["TODO: find it", "ftp://example.org/x", "https:///no-host", 42, None, "https://Example.ORG/a/"],
)
def test_source_key_leaves_to_the_schema_what_the_cap_never_counted(url: Any) -> None:
    expected = None if not isinstance(url, str) or not url.startswith("https://E") else "https://example.org/a"
    assert source_key(url) == expected


def test_the_cache_folder_keeps_a_bounded_number_of_checkouts(
    good_corpus: CorpusDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One cache file per corpus root: checkouts come and go (worktrees, temporary clones), and
    each save prunes the folder to the most recent few, none unused for two months."""
    from propeval import loadcache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "own-cache"))  # no other test's files beside

    aged(good_corpus.root)
    path = loadcache.LoadCache(good_corpus.root.resolve()).path
    path.parent.mkdir(parents=True, exist_ok=True)
    now = time.time()
    others = []
    for n in range(40):
        other = path.parent / f"{n:024x}.bin"
        other.write_bytes(b"another checkout's cache")
        age = 3600 * n if n < 35 else 86400 * 90  # the last five unused for three months
        os.utime(other, (now - age, now - age))
        others.append(other)
    load_corpus(load_config())
    left = sorted(path.parent.glob("*.bin"))
    assert path in left and len(left) == loadcache.KEEP_FILES
    assert all(o in left for o in others[: loadcache.KEEP_FILES - 1])  # the most recent kept
    assert not any(o.exists() for o in others[35:])
