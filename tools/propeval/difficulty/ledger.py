"""``ledger/difficulty.json``: its format, its self-hash, and reading it back."""

from __future__ import annotations

from typing import Any

from propeval.config import Config
from propeval.corpus import content_hash
from propeval.errors import UsageError
from propeval.loader import Limits, LoadError

LEDGER = "ledger/difficulty.json"
FORMAT = "propeval-difficulty/1"
# A ledger for tens of thousands of items is larger than the loader's default 1 MiB cap.
LEDGER_LIMITS = Limits(max_bytes=64 * 1_048_576, max_depth=32, max_nodes=5_000_000)


def seal(ledger: dict[str, Any]) -> dict[str, Any]:
    """The ledger with ``ledger_hash``: the content hash of everything else, so hand edits show."""
    body = {k: v for k, v in ledger.items() if k != "ledger_hash"}
    return {**body, "ledger_hash": content_hash(body)}


def load_ledger(config: Config) -> dict[str, Any]:
    """Read and verify ``ledger/difficulty.json``; a missing, corrupt or edited ledger is a UsageError."""
    from propeval.loader import load_file

    path = config.root / LEDGER
    if not path.is_file():
        raise UsageError(f"{LEDGER} does not exist; run `propeval difficulty` first")
    try:
        doc = load_file(path, root=config.root, limits=LEDGER_LIMITS)
    except LoadError as e:
        raise UsageError(f"{LEDGER} cannot be read: {e}; recompute it with `propeval difficulty`") from e
    problem = verify(doc.data)
    if problem:
        raise UsageError(f"{LEDGER} {problem}")
    return doc.data


def verify(data: dict[str, Any]) -> str | None:
    """Why a loaded ledger cannot be trusted, or None. Light enough for `propeval check`."""
    if data.get("format") != FORMAT:
        return f"has format {data.get('format')!r}, not {FORMAT!r}; recompute it with `propeval difficulty`"
    body = {k: v for k, v in data.items() if k != "ledger_hash"}
    if data.get("ledger_hash") != content_hash(body):
        return "does not match its ledger_hash (edited by hand?); recompute it with `propeval difficulty`"
    items = data.get("items")
    if not isinstance(items, dict) or not all(isinstance(v, dict) for v in items.values()):
        return "has no items mapping; recompute it with `propeval difficulty`"
    return None
