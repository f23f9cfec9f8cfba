"""The record cache behind `propeval dedup`: unchanged files are not parsed again."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from propeval.dedup import records as dedup_records
from propeval.dedup.records import load_records
from propeval.textnorm import text_hash


def _age(root: Path, only: str = "*.yaml") -> None:
    """Make corpus files a minute older than the racy window, as files are between commits."""
    past = time.time_ns() - 60 * 10**9
    for p in (root / "questions").rglob(only):
        os.utime(p, ns=(past, past))


def _load(c: Any) -> dedup_records.Records:
    return load_records(c.root, c.root / "questions", c.root / ".cache")


@pytest.fixture
def small(corpus: Any) -> Any:
    corpus.claim("c0001")
    corpus.item("i0001", "c0001")
    corpus.item("i0002", "c0001", prompt='"Who gave the order to clear the square?"')
    _age(corpus.root)
    return corpus


def test_a_warm_run_parses_nothing_and_returns_the_same_records(small: Any) -> None:
    first = _load(small)
    assert (first.files, first.loaded) == (3, 3)
    second = _load(small)
    assert (second.files, second.loaded) == (3, 0)
    assert (second.claims, second.items) == (first.claims, first.items)
    assert second.items[1] == {
        "kind": "item",
        "path": "questions/c0001/i0002.yaml",
        "id": "i0002",
        "claim_id": "c0001",
        "language": "en",
        "translation_of": "",
        "prompt": "Who gave the order to clear the square?",
        "active": True,
        "line": 6,
        "col": 9,
        "norm": [
            "who gave the order to clear the square?",
            text_hash("Who gave the order to clear the square?"),
        ],
    }


def test_a_changed_or_foreign_records_file_is_not_used(small: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """The records (and the normalised texts dedup compares) carry a MAC under the user's cache key:
    a byte changed in the file, or a file written under another key, is rebuilt from the corpus."""
    from propeval import cachekey

    _load(small)
    [cached] = list((small.root / ".cache").rglob("*.records"))
    data = bytearray(cached.read_bytes())
    data[data.index(b"who gave the order")] ^= 0x20  # "Who gave...": a text dedup would compare
    cached.write_bytes(bytes(data))
    assert _load(small).loaded == 3
    monkeypatch.setattr(cachekey, "cache_key", lambda: b"another user".ljust(32, b"\0"))
    _load(small)  # written under the other key
    monkeypatch.undo()
    assert _load(small).loaded == 3


def test_a_changed_file_is_parsed_again(small: Any) -> None:
    _load(small)
    small.item("i0002", "c0001", prompt='"Who ordered the army into Beijing?"')
    _age(small.root, "i0002.yaml")
    again = _load(small)
    assert again.loaded == 1
    assert [i["prompt"] for i in again.items][1] == "Who ordered the army into Beijing?"


def test_a_file_that_fails_to_load_is_reported_every_run(small: Any) -> None:
    small.write("questions/c0001/i0003.yaml", "id: i0003\nid: i0004\n")
    _age(small.root)
    for _ in range(2):
        run = _load(small)
        assert [(p.path, p.line, p.rule) for p in run.problems] == [("questions/c0001/i0003.yaml", 2, "duplicate-key")]
        assert [i["id"] for i in run.items] == ["i0001", "i0002"]


def test_a_file_changed_within_the_racy_window_is_not_kept(small: Any) -> None:
    _load(small)
    small.item("i0002", "c0001", prompt='"Same length as before, really!?"')  # mtime: now
    assert _load(small).loaded == 1
    assert _load(small).loaded == 1  # still too fresh to trust its stat
    _age(small.root, "i0002.yaml")
    assert _load(small).loaded == 1
    assert _load(small).loaded == 0


def test_a_corrupt_or_foreign_cache_is_rebuilt(small: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _load(small)
    (cache,) = (small.root / ".cache" / "corpus").iterdir()
    cache.write_text('{"code": "x", "files": {"questions/c0001/i0001.yaml": 1}', encoding="utf-8")
    assert _load(small).loaded == 3
    stamp = dedup_records._code_stamp()
    cache.write_text(f'{{"code": "{stamp}", "files": {{"questions/c0001/i0001.yaml": [1, 2]}}}}', encoding="utf-8")
    rebuilt = _load(small)
    assert rebuilt.loaded == 3 and rebuilt.items == first.items
    monkeypatch.setattr(dedup_records, "FORMAT", dedup_records.FORMAT + 1)  # new record code
    assert _load(small).loaded == 3


def test_an_unwritable_cache_folder_only_costs_parse_time(small: Any) -> None:
    (small.root / ".cache").write_text("a file where the folder should be", encoding="utf-8")
    for _ in range(2):
        run = _load(small)
        assert run.loaded == 3 and len(run.items) == 2
