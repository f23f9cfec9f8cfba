"""The embedding cache's append-only log (#40): one new vector is appended, not a 22 MB rewrite, and
every property of the one-file cache still holds, each shown on real files: MAC'd under the
user's key, two writers both keep their entries, a reader never sees half a write, damage is set
aside with a warning and rebuilt."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from propeval.embed import cache as cache_module
from propeval.embed.cache import EmbeddingCache
from propeval.textnorm import text_hash


def _keys(n: int, offset: int = 0) -> list[bytes]:
    return [text_hash(f"text {i}").encode() for i in range(offset, offset + n)]


def _vecs(n: int, offset: int = 0, dim: int = 4) -> np.ndarray:
    return np.arange(offset, offset + n, dtype=np.float32)[:, None] * np.ones((1, dim), dtype=np.float32)


def _filled(folder: Path, n: int = 3) -> EmbeddingCache:
    cache = EmbeddingCache(folder, "fp")
    cache.add(_keys(n), _vecs(n), [1] * n)
    return cache


def _read(folder: Path) -> EmbeddingCache:
    cache = EmbeddingCache(folder, "fp")
    cache.load()
    return cache


def _firsts(cache: EmbeddingCache, keys: list[bytes]) -> list[float | None]:
    assert cache.vectors is not None or all(r is None for r in cache.rows(keys))
    return [None if r is None else float(cache.vectors[r][0]) for r in cache.rows(keys)]  # type: ignore[index]


def test_a_new_vector_is_appended_and_the_base_is_not_rewritten(tmp_path: Path) -> None:
    cache = _filled(tmp_path)
    base = cache.path.stat()
    assert not cache.log_path.exists()  # the first write makes the base
    cache.add(_keys(1, 10), _vecs(1, 10), [2])
    after = cache.path.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (base.st_ino, base.st_mtime_ns, base.st_size)
    assert cache.log_path.stat().st_size == cache_module._record_size(1, 4)
    again = _read(tmp_path)
    assert again.warnings == []
    assert _firsts(again, _keys(3) + _keys(1, 10)) == [0.0, 1.0, 2.0, 10.0]
    assert again.ntok is not None and int(again.ntok[again.rows(_keys(1, 10))[0]]) == 2  # type: ignore[index]


def test_rows_of_the_base_and_the_log_are_gathered_without_joining_them(tmp_path: Path) -> None:
    """``gather`` takes each row from the base or the log as read (a commit's 30k rows, #40), in the
    order asked, repeats and all: what the joined matrix gives, without the join."""
    cache = _filled(tmp_path, 5)
    cache.add(_keys(2, 10), _vecs(2, 10), [7, 8])
    cache.add(_keys(1, 20), _vecs(1, 20), [9])
    again = _read(tmp_path)
    rows = np.asarray(again.rows(_keys(1, 20) + _keys(3) + _keys(1, 11) + _keys(1, 4) + _keys(1, 20)))
    got = again.gather(rows)
    assert got is not None and again._parts is not None  # not joined
    vecs, ntok = got
    assert [float(v[0]) for v in vecs] == [20.0, 0.0, 1.0, 2.0, 11.0, 4.0, 20.0]
    assert ntok.tolist() == [9, 1, 1, 1, 8, 1, 9]
    joined = _read(tmp_path)
    assert joined.vectors is not None and joined.ntok is not None
    assert np.array_equal(joined.vectors[rows], vecs) and np.array_equal(joined.ntok[rows], ntok)
    only_base = again.gather(np.asarray(again.rows(_keys(2))))
    assert only_base is not None and [float(v[0]) for v in only_base[0]] == [0.0, 1.0]


def test_an_append_indexes_only_the_new_entries_and_the_index_is_a_fresh_readers(tmp_path: Path) -> None:
    """After an append the index is extended, not rebuilt (#40), and equals the index a fresh reader
    builds: the entries another writer appended meanwhile included, a repeated key at its last row."""
    _filled(tmp_path, 4)
    mine = _read(tmp_path)
    other = _read(tmp_path)
    other.add(_keys(2, 10), _vecs(2, 10), [5, 5])  # another process, after mine read the cache
    mine.add(_keys(1, 20) + _keys(1, 10), _vecs(1, 20).repeat(2, axis=0), [6, 6])
    fresh = _read(tmp_path)
    assert mine._index == fresh._index
    assert _firsts(mine, _keys(4) + _keys(2, 10) + _keys(1, 20)) == [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 20.0]


def test_a_log_grown_past_its_bound_is_compacted_into_the_base(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(cache_module, "COMPACT_BYTES", 3 * cache_module._record_size(1, 4))
    cache = _filled(tmp_path)
    for n in range(3):
        cache.add(_keys(1, 10 + n), _vecs(1, 10 + n), [1])
    assert cache.log_path.exists()
    base = cache.path.stat().st_ino
    cache.add(_keys(1, 20), _vecs(1, 20), [1])  # the fourth record would pass the bound
    assert not cache.log_path.exists() and cache.path.stat().st_ino != base
    again = _read(tmp_path)
    assert again.warnings == []
    assert _firsts(again, _keys(3) + _keys(3, 10) + _keys(1, 20)) == [0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0]


def test_a_log_of_many_small_records_is_compacted_too(tmp_path: Path, monkeypatch: Any) -> None:
    """Every run reads and authenticates each record, and each commit appends one: past
    COMPACT_RECORDS records the log is compacted whatever its size (#40)."""
    monkeypatch.setattr(cache_module, "COMPACT_RECORDS", 5)
    cache = _filled(tmp_path)
    for n in range(5):
        cache.add(_keys(1, 10 + n), _vecs(1, 10 + n), [1])
    assert cache.log_path.stat().st_size == 5 * cache_module._record_size(1, 4)
    cache.add(_keys(1, 20), _vecs(1, 20), [1])  # the sixth record
    assert not cache.log_path.exists()
    again = _read(tmp_path)
    assert _firsts(again, _keys(3) + _keys(5, 10) + _keys(1, 20)) == [0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 13.0, 14.0, 20.0]


def test_a_record_cut_short_is_not_read_and_the_next_writer_cuts_it_off(tmp_path: Path) -> None:
    """A reader meeting a record still being written (or one a crash left) reads the records
    before it, without a warning: never half a vector."""
    cache = _filled(tmp_path)
    cache.add(_keys(1, 10), _vecs(1, 10), [1])
    cache.add(_keys(1, 11), _vecs(1, 11), [1])
    whole = cache.log_path.read_bytes()
    cache.log_path.write_bytes(whole[:-7])  # the second record without its last bytes
    reader = _read(tmp_path)
    assert reader.warnings == []
    assert _firsts(reader, _keys(1, 10) + _keys(1, 11)) == [10.0, None]
    reader.add(_keys(1, 11), _vecs(1, 11), [1])  # embedded again, and stored after the first record
    assert reader.log_path.stat().st_size == len(whole)
    assert _firsts(_read(tmp_path), _keys(1, 10) + _keys(1, 11)) == [10.0, 11.0]


@pytest.mark.parametrize("where", ["vector", "key", "header"])
def test_a_flipped_byte_in_the_log_is_a_warning_and_the_log_is_set_aside(tmp_path: Path, where: str) -> None:
    cache = _filled(tmp_path)
    cache.add(_keys(1, 10), _vecs(1, 10), [1])
    cache.add(_keys(1, 11), _vecs(1, 11), [1])
    data = bytearray(cache.log_path.read_bytes())
    size = cache_module._record_size(1, 4)
    at = {"header": size, "key": size + 12, "vector": size + 12 + 64 + 2}[where]  # in the second record
    data[at] ^= 0x01
    cache.log_path.write_bytes(bytes(data))
    reader = _read(tmp_path)
    assert len(reader.warnings) == 1 and f"embedding cache log {reader.log_path}" in reader.warnings[0]
    assert f"at byte {size}" in reader.warnings[0]
    # the record before the damage is used; the damaged one is not
    assert _firsts(reader, _keys(3) + _keys(1, 10) + _keys(1, 11)) == [0.0, 1.0, 2.0, 10.0, None]
    reader.add(_keys(1, 11), _vecs(1, 11), [1])
    assert (tmp_path / "fp.log.damaged").read_bytes() == bytes(data)  # set aside, for whoever looks
    rebuilt = _read(tmp_path)
    assert rebuilt.warnings == [] and not rebuilt.log_path.exists()
    assert _firsts(rebuilt, _keys(3) + _keys(1, 10) + _keys(1, 11)) == [0.0, 1.0, 2.0, 10.0, 11.0]


def test_a_log_written_under_another_users_key_is_not_used(tmp_path: Path, monkeypatch: Any) -> None:
    from propeval import cachekey

    cache = _filled(tmp_path)
    monkeypatch.setattr(cachekey, "cache_key", lambda: b"another user's key".ljust(32, b"\0"))
    foreign = EmbeddingCache(tmp_path, "fp")
    foreign._base = None
    # the other user's writer: a base of its own would not be read either; here only its log record
    record = cache_module._HEAD.pack(cache_module.RECORD, 1, 4) + _keys(1, 10)[0] + _vecs(1, 99).tobytes() + b"\1\0\0\0"
    cache.log_path.write_bytes(record + foreign._record_mac(record))
    monkeypatch.undo()
    reader = _read(tmp_path)
    assert "failed authentication at byte 0" in reader.warnings[0]
    assert _firsts(reader, _keys(1, 10)) == [None]


def test_a_record_of_another_fingerprint_is_not_used(tmp_path: Path) -> None:
    other = EmbeddingCache(tmp_path, "other")
    _filled(tmp_path)
    other.add(_keys(1), _vecs(1, 50), [1])
    other.add(_keys(1, 10), _vecs(1, 60), [1])  # a record in other.log
    os.replace(other.log_path, tmp_path / "fp.log")
    reader = _read(tmp_path)
    assert "failed authentication" in reader.warnings[0] and _firsts(reader, _keys(1, 10)) == [None]


def _writer(folder: str, offset: int) -> None:
    cache = EmbeddingCache(Path(folder), "fp")
    for n in range(20):
        cache.add(_keys(1, offset + n), _vecs(1, offset + n), [1])


@pytest.mark.slow
def test_two_processes_appending_at_once_keep_every_entry(tmp_path: Path) -> None:
    _filled(tmp_path)  # a base: from here on each add appends
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), off)) for off in (100, 200)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    reader = _read(tmp_path)
    assert reader.warnings == []
    keys = _keys(20, 100) + _keys(20, 200)
    assert _firsts(reader, keys) == [float(k) for k in [*range(100, 120), *range(200, 220)]]
    assert reader.log_path.stat().st_size == 40 * cache_module._record_size(1, 4)


@pytest.mark.slow
def test_a_commit_appends_its_new_text_to_the_cache(corpus: Any, dedup_config: Any) -> None:
    """Through the real CLI with the bundled model: the second dedup, after one new item, leaves the
    base file as it was and appends one record."""
    from propeval.cli import cli

    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
    corpus.claim()
    corpus.item("i0001", prompt='"Who built the Crimean bridge across the Kerch Strait?"')
    first = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    [base] = list((corpus.root / ".cache/embeddings").glob("*.npz"))
    before = base.stat()
    corpus.item("i0002", prompt='"When did the army enter central Beijing in June 1989?"')
    second = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["texts_encoded_now"] == 1
    after = base.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    [log] = list((corpus.root / ".cache/embeddings").glob("*.log"))
    assert log.stat().st_size == cache_module._record_size(1, 384)
    third = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert json.loads(third.stdout)["texts_encoded_now"] == 0
