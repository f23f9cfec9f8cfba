"""Fixtures for the groups tests: a CLI runner and a deterministic fake encoder."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from propeval.cli import cli


class TableEncoder:
    """A deterministic encoder: each text maps to a fixed vector; any other text gets (0, 0, 1).
    The table's texts are matched as the drift rule embeds them, normalised (propeval.textnorm).

    It has the whole :class:`propeval.embed.Encoder` interface, so its vectors go through the
    embedding cache as a real model's do; its fingerprint names its table.
    """

    name = "table encoder"
    engine = "python"
    max_seq_length = 512

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        from propeval.textnorm import normalise

        self.table = {normalise(k): v for k, v in table.items()}
        self.fingerprint = "table-" + hashlib.sha256(repr(sorted(table.items())).encode()).hexdigest()[:16]
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([self.table.get(t, (0.0, 0.0, 1.0)) for t in texts], dtype=np.float32)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The embedding cache of every groups test is its own, never the user's."""
    folder = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


@pytest.fixture
def groups() -> Callable[..., Result]:
    """Run ``propeval groups --verbose ARGS`` in the current directory (the corpus root): with
    --verbose, the notes shown once per terminal session are shown every time, whatever ran before."""

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["groups", "--verbose", *args], catch_exceptions=False)

    return run


@pytest.fixture
def table_encoder() -> type[TableEncoder]:
    return TableEncoder
