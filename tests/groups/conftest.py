"""Fixtures for the groups tests: a CLI runner and a deterministic fake encoder."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from click.testing import CliRunner, Result

from propeval.cli import cli


class TableEncoder:
    """A deterministic encoder: each text maps to a fixed vector; any other text gets (0, 0, 1)."""

    name = "table encoder"

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([self.table.get(t, (0.0, 0.0, 1.0)) for t in texts], dtype=np.float32)


@pytest.fixture
def groups() -> Callable[..., Result]:
    """Run ``propeval groups ARGS`` in the current directory (the corpus root)."""

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["groups", *args], catch_exceptions=False)

    return run


@pytest.fixture
def table_encoder() -> type[TableEncoder]:
    return TableEncoder
