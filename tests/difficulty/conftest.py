"""Fixtures for the difficulty tests."""

from __future__ import annotations

from typing import Any

import pytest
from difficulty_helpers import HAND, write_hand_runs


@pytest.fixture
def hand_corpus(corpus: Any) -> Any:
    """Four active items of one claim (i0001, i0003 in ru) and graded runs of four models."""
    corpus.claim()
    for n, iid in enumerate(HAND):
        corpus.item(iid, language="ru" if n % 2 == 0 else "en")
    write_hand_runs(corpus.root)
    return corpus
