"""``[tool.propeval.groups]``: the model lives in :mod:`propeval.settings.groups`, in the one settings layer."""

from __future__ import annotations

from propeval.settings import (
    DEFAULT_CUES,
    DEFAULT_DRIFT_THRESHOLD,
    DEFAULT_LANGUAGES,
    DRIFT_ENCODERS,
    GroupsSettings,
    primary_subtag,
)

__all__ = [
    "DEFAULT_CUES",
    "DEFAULT_DRIFT_THRESHOLD",
    "DEFAULT_LANGUAGES",
    "DRIFT_ENCODERS",
    "GroupsSettings",
    "primary_subtag",
]
