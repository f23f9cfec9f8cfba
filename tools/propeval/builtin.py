"""The built-in schema and policy, shipped as package data (as check-jsonschema ships its
``--builtin-schema``s): a corpus repository gets safe defaults with no copied file.

- ``schema = "builtin"`` in ``[tool.propeval]`` (or no ``schema`` key and no schema.json at the
  corpus root) checks claims and items against the schema this version of propeval ships.
- Unset ``source_blocklist`` and ``max_claims_per_source`` take the values of ``data/policy.toml``.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any

BUILTIN = "builtin"
DATA = Path(__file__).resolve().parent / "data"
SCHEMA = DATA / "schema.json"
POLICY = DATA / "policy.toml"


@functools.cache
def policy() -> dict[str, Any]:
    """The built-in policy table (read once; it is part of the package, not user input)."""
    with POLICY.open("rb") as f:
        return tomllib.load(f)


def blocklist() -> tuple[str, ...]:
    return tuple(policy()["source_blocklist"])
