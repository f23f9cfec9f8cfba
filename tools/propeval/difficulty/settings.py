"""``[tool.propeval.difficulty]``: the settings of ``propeval difficulty``, from the one settings layer.

The model, its defaults and its checks are
:class:`propeval.settings.difficulty.DifficultySettings`; this package calls it ``Settings``.
"""

from __future__ import annotations

from propeval.config import Config
from propeval.settings import DifficultySettings as Settings

__all__ = ["Settings", "load_settings"]


def load_settings(config: Config) -> Settings:
    """``[tool.propeval.difficulty]``, read and checked (``runs_dir`` is ``[tool.propeval.judge]``'s)."""
    return config.settings.difficulty
