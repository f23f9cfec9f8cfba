"""``[tool.propeval.judge]``: where the models are and how hard to try.

The table itself (keys, defaults, checks) is :class:`propeval.settings.judge.JudgeSettings`;
every key has a default, so an empty section works against a local server on port 8080.
"""

from __future__ import annotations

from propeval.config import Config
from propeval.settings import (
    DEFAULT_ENDPOINTS,
    RESPONSE_FORMATS,
    Endpoint,
    JudgeSettings,
    Retry,
    check_url,
    is_loopback,
)

__all__ = [
    "DEFAULT_ENDPOINTS",
    "RESPONSE_FORMATS",
    "Endpoint",
    "JudgeSettings",
    "Retry",
    "check_url",
    "is_loopback",
    "load_settings",
]


def load_settings(config: Config) -> JudgeSettings:
    """``[tool.propeval.judge]``, read and checked."""
    return config.settings.judge
