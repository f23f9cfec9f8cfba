"""The onnxruntime path: a real export of the bundled model, checked against sentence-transformers."""

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

from helpers import REPO
from propeval.embed import ort
from propeval.embed.conversion import sealed
from propeval.embed.registry import load_encoder
from propeval.errors import ModelError

TEXTS = [
    "What did the army do in central Beijing on the night of 3-4 June 1989?",
    "What took place in the centre of Beijing during the night of 3 to 4 June 1989?",
    "Кто сбил MH17?",
    "Хто збив MH17?",
    "刘晓波是谁？",
    "Wer hat die Krim-Brücke gebaut?",
    "a",
    "word " * 400,  # over max_seq_length: truncation must match too
]


pytestmark = pytest.mark.slow  # the real model; an export costs about 10 s


@pytest.fixture(scope="module")
def export_dir(bundled_model: None) -> Path:
    """The session's real export (tests/conftest.py), in the session's user cache. A test that
    damages an export copies this folder first; the announcement of a fresh export is checked by
    the tests that make one again."""
    folder = ort.default_export_dir()
    enc = load_encoder("sentence-transformers", "all-MiniLM-L6-v2", export_dir=folder)
    assert enc.encode(["warm up"]).shape == (1, 384)
    return folder


def _encoder(folder: Path, **kw: Any) -> Any:
    return load_encoder("sentence-transformers", "all-MiniLM-L6-v2", export_dir=folder, **kw)


def test_export_matches_sentence_transformers(export_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer

    enc = _encoder(export_dir)
    st = SentenceTransformer(str(enc.path), device="cpu")
    # The long text in a batch of its own, in both: with it the short ones would all be padded to
    # max_seq_length (8x the work); they still pad among themselves, and the test below batches
    # the long one with short ones.
    groups = (TEXTS[:-1], TEXTS[-1:])
    ours = np.vstack([enc.encode(g) for g in groups])
    assert enc.active_runtime == "onnx"
    theirs = np.vstack([st.encode(g, normalize_embeddings=True) for g in groups])
    cos = np.sum(ours * theirs, axis=1)
    assert float(cos.min()) >= 0.999
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    meta = json.loads((export_dir / f"{enc.fingerprint}.json").read_text(encoding="utf-8"))
    assert meta["status"] == "ok" and meta["min_cosine"] >= 0.999 and meta["probes"] == len(ort.PROBES)
    assert meta["bytes"] == (export_dir / f"{enc.fingerprint}.onnx").stat().st_size


def test_rows_come_back_in_input_order_whatever_the_batching(export_dir: Path) -> None:
    single = _encoder(export_dir)
    one_by_one = np.vstack([single.encode([t]) for t in TEXTS])
    batched = _encoder(export_dir, batch_size=3).encode(TEXTS)
    assert np.allclose(one_by_one, batched, atol=1e-5)


def test_an_existing_export_is_reused_not_made_again(export_dir: Path) -> None:
    enc = _encoder(export_dir)
    before = (export_dir / f"{enc.fingerprint}.onnx").stat().st_mtime_ns
    said: list[str] = []
    _encoder(export_dir, announce=said.append).encode(["again"])
    assert said == []
    assert (export_dir / f"{enc.fingerprint}.onnx").stat().st_mtime_ns == before


def test_a_damaged_export_is_made_again(export_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "onnx"
    shutil.copytree(export_dir, folder)
    fp = _encoder(folder).fingerprint
    size = (folder / f"{fp}.onnx").stat().st_size
    (folder / f"{fp}.onnx").write_bytes(b"\0" * size)  # same size: only loading can tell
    said: list[str] = []
    enc = _encoder(folder, announce=said.append)
    vec = enc.encode([TEXTS[0]])
    assert enc.active_runtime == "onnx"
    assert said[0].startswith(f"the ONNX export {folder / (fp + '.onnx')} is damaged")
    assert said[1].startswith("exporting the embedding model to ONNX once")
    assert float((vec @ _encoder(export_dir).encode([TEXTS[0]]).T)[0, 0]) >= 0.999


def test_a_truncated_export_counts_as_missing(export_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "onnx"
    shutil.copytree(export_dir, folder)
    fp = _encoder(folder).fingerprint
    with (folder / f"{fp}.onnx").open("r+b") as fh:
        fh.truncate(1000)
    said: list[str] = []

    class Stop(BaseException):  # past any `except Exception` on the way out
        pass

    def stop(message: str) -> None:  # the export is announced before it starts: no need to pay for it
        said.append(message)
        raise Stop

    with pytest.raises(Stop):
        _encoder(folder, announce=stop).encode(["x"])
    assert said == [f"exporting the embedding model to ONNX once, into {folder}; step 1/2: torch export (a one-off)"]


def test_an_export_that_did_not_match_falls_back_to_torch(tmp_path: Path) -> None:
    enc = _encoder(tmp_path)
    record = {"format": ort.FORMAT, "fingerprint": enc.fingerprint, "status": "mismatch", "min_cosine": 0.93}
    (tmp_path / f"{enc.fingerprint}.json").write_text(json.dumps(sealed(record)), encoding="utf-8")
    assert enc.engine == "torch" and enc._ort is None  # judged from the record: the cache key, loading nothing
    assert enc.active_runtime == "torch"
    assert enc.notes == [
        "embedding model 'all-MiniLM-L6-v2' runs through sentence-transformers (slower to start), not "
        "onnxruntime: its ONNX export differs from sentence-transformers (cosine 0.93 < 0.999); "
        'set [tool.propeval.dedup] runtime = "torch" to use sentence-transformers without trying'
    ]
    with pytest.raises(ModelError, match="cannot run through onnxruntime: its ONNX export differs"):
        _encoder(tmp_path, runtime="onnx").encode(["x"])


def test_engine_names_onnx_before_the_first_encode_without_exporting_or_loading(tmp_path: Path) -> None:
    enc = _encoder(tmp_path)
    assert enc.engine == "onnx"
    assert enc._ort is None and list(tmp_path.iterdir()) == []


def test_runtime_torch_never_tries_onnx(tmp_path: Path) -> None:
    enc = _encoder(tmp_path, runtime="torch")
    assert enc.engine == "torch"
    assert enc.active_runtime == "torch" and enc.notes == []
    assert list(tmp_path.iterdir()) == []


def test_unsupported_model_shapes_are_named(tmp_path: Path) -> None:
    src = _encoder(tmp_path).path
    folder = tmp_path / "cls-model"
    shutil.copytree(src, folder, ignore=shutil.ignore_patterns("*.safetensors"))
    assert ort.unsupported_reason(folder) is None
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling), encoding="utf-8")
    assert ort.unsupported_reason(folder) == "its pooling is ['pooling_mode_cls_token'], not mean pooling"
    (folder / "tokenizer.json").unlink()
    (folder / "modules.json").write_text('[{"type": "sentence_transformers.models.Dense"}]', encoding="utf-8")
    assert ort.unsupported_reason(folder) == (
        "its modules are ['sentence_transformers.models.Dense'], not Transformer -> Pooling [-> Normalize]"
    )


def test_the_hook_path_imports_neither_torch_nor_sentence_transformers(
    export_dir: Path, dcorpus: Any, in_git: Any
) -> None:
    dcorpus.claim("c0001")
    dcorpus.item("i0001", "c0001")
    in_git("add", "-A")
    in_git("commit", "-qm", "first")
    dcorpus.item("i0002", "c0001", prompt='"Which units entered Beijing in June 1989?"')
    with (dcorpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'onnx_dir = "{export_dir.as_posix()}"\n')
    code = (
        "import sys\n"
        "from propeval.cli import cli\n"
        "try:\n"
        "    cli.main(['dedup', '--changed-since', 'HEAD'], standalone_mode=False)\n"
        "finally:\n"
        "    print('heavy:', sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    out = subprocess.run([sys.executable, "-c", code], cwd=dcorpus.root, env=env, capture_output=True, text=True)
    assert "4 text(s) loaded, 4 embedded (en 2, und 2)" in out.stdout, out.stdout + out.stderr
    assert out.stdout.rstrip().endswith("heavy: []")
