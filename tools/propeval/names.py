"""Names that become parts of paths: claim and item ids, run ids, rubric names.

Each is checked against a strict pattern before anything is read or written with it, so
``new --id ../..`` or ``answer --run-id ../..`` is a usage error (exit 2), never a file outside
the repository. The patterns admit no path separator, no leading dot and nothing but ASCII.
"""

from __future__ import annotations

import re

from propeval.errors import ConfigError, UsageError

CLAIM_ID = re.compile(r"c([0-9]{4,})")
ITEM_ID = re.compile(r"i([0-9]{4,})")
# Run ids and rubric names: a letter or digit first, then letters, digits, '.', '_' and '-'.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _shown(value: str) -> str:
    return repr(value if len(value) <= 80 else value[:80] + "…")


def claim_id(value: str, option: str = "--id") -> str:
    """``value`` if it is a claim id (``c0042``); else UsageError naming ``option``."""
    if not CLAIM_ID.fullmatch(value):
        raise UsageError(f"{option} {_shown(value)} is not a claim id; write c and at least 4 digits, e.g. c0042")
    return value


def item_id(value: str, option: str = "--id") -> str:
    """``value`` if it is an item id (``i0042``); else UsageError naming ``option``."""
    if not ITEM_ID.fullmatch(value):
        raise UsageError(f"{option} {_shown(value)} is not an item id; write i and at least 4 digits, e.g. i0042")
    return value


def folder(value: str, key: str) -> str:
    """``value`` if it is a relative path that stays inside the repository; else ConfigError naming ``key``.

    For configured folders and files (``questions_dir``, ``runs_dir``, ``ledger_dir``, ...): a pull
    request's own pyproject.toml must not point a write outside the checkout.
    """
    parts = value.replace("\\", "/").split("/")
    if not value or value.startswith(("/", "~")) or ".." in parts or ":" in value:
        raise ConfigError(
            f"[tool.propeval] {key} = {_shown(value)} must be a relative path inside the repository, without '..'",
            key=key,
        )
    return value


def name(value: str, option: str) -> str:
    """``value`` if it can be one folder or file name (a run id, a rubric); else UsageError."""
    if not NAME.fullmatch(value):
        raise UsageError(
            f"{option} {_shown(value)} cannot be used as a folder name; use letters, digits, '.', '_' and '-', "
            "starting with a letter or digit, at most 128 characters"
        )
    return value
