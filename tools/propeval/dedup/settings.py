"""``[tool.propeval.dedup]``: the model lives in :mod:`propeval.settings.dedup`, in the one settings layer."""

from __future__ import annotations

from propeval.settings import DEFAULT_SEMANTIC
from propeval.settings import DedupSettings as Settings

PASSES = ("exact", "lexical", "semantic")

__all__ = ["DEFAULT_SEMANTIC", "PASSES", "Settings"]
