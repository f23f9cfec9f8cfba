"""Shared fixtures; the helpers they use are in helpers.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers import GIT_ENV, CorpusDir, git


@pytest.fixture(scope="session", autouse=True)
def onnx_export() -> None:
    """Make the bundled model's ONNX export in the user cache before any test runs, as a first
    `propeval dedup` on a new machine would: tests that compare a command's whole output then
    never see the one-off "exporting the embedding model" line. Costs about 10 s, once a machine."""
    try:
        from propeval.embed.registry import load_encoder

        encoder = load_encoder("sentence-transformers", "all-MiniLM-L6-v2")
    except ImportError:
        return  # the dedup extra is not installed; those tests fail on their own
    if encoder.active_runtime != "onnx":
        pytest.fail(f"the bundled model does not run through onnxruntime here: {encoder.notes}")


@pytest.fixture(autouse=True)
def own_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user config folder: no test reads or writes the real one
    (signing keys, the maintainer's endpoints)."""
    folder = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    for var in ("PROPEVAL_CONFIG", "PROPEVAL_SIGNING_KEY"):
        monkeypatch.delenv(var, raising=False)
    return folder


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CorpusDir:
    """An empty corpus root; the current directory is set to it."""
    c = CorpusDir(tmp_path / "corpus")
    monkeypatch.chdir(c.root)
    return c


@pytest.fixture
def good_corpus(corpus: CorpusDir) -> CorpusDir:
    """One claim with a neutral English item."""
    corpus.claim()
    corpus.item()
    return corpus


@pytest.fixture
def in_git(corpus: CorpusDir, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """Make the corpus a real git repository with a first commit on main; yields git(*args)."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    git(corpus.root, "init", "-q", "-b", "main")
    git(corpus.root, "config", "commit.gpgsign", "false")

    def run(*args: str) -> str:
        return git(corpus.root, *args)

    yield run
