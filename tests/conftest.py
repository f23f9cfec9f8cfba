"""Shared fixtures; the helpers they use are in helpers.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers import GIT_ENV, CorpusDir, git


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
