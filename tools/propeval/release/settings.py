"""``[tool.propeval.release]``: the dataset's name, licence and task categories, and where the ledgers lie.

The model, its defaults and its checks are :class:`propeval.settings.release.ReleaseSettings`.
"""

from __future__ import annotations

from propeval.settings import ReleaseSettings

__all__ = ["ReleaseSettings"]
