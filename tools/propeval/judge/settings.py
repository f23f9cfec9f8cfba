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
    "optional_sampling",
]


def load_settings(config: Config) -> JudgeSettings:
    """``[tool.propeval.judge]``, read and checked."""
    return config.settings.judge


def optional_sampling(top_p: float | None, seed: int | None, reasoning_effort: str) -> dict[str, object]:
    """The sampling settings sent only when set (temperature and the token cap always are): what
    ``propeval answer`` adds to its request, and each harness adapter to its harness's config."""
    out: dict[str, object] = {}
    if top_p is not None:
        out["top_p"] = top_p
    if seed is not None:
        out["seed"] = seed
    if reasoning_effort:
        out["reasoning_effort"] = reasoning_effort
    return out
