"""Gate fixtures: a small corpus with the shipped rubrics, configured for a loopback judge."""

from __future__ import annotations

from typing import Any

import pytest
from gatekit import make_gate_corpus

from serverkit import loopback  # noqa: F401  (the fixture, for every gate test)


@pytest.fixture
def gate_corpus(corpus: Any) -> Any:
    """One claim, two active items and a retired one, the shipped rubrics, a loopback config."""
    return make_gate_corpus(corpus)
