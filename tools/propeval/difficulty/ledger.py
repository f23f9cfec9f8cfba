"""``<ledger_dir>/difficulty.json``: its format, its self-hash, and reading it back.

Its path is :attr:`propeval.ledger.paths.LedgerPaths.difficulty`, under ``[tool.propeval.gates]
ledger_dir`` like every ledger record: ``propeval difficulty`` writes it there and ``check``, ``run``,
``stats``, ``report`` and ``export`` read it there: one path, so the card reads what the command
wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from propeval.corpus import content_hash
from propeval.errors import UsageError
from propeval.loader import Document, Limits, LoadError

if TYPE_CHECKING:
    from propeval.workspace import Workspace

FORMAT = "propeval-difficulty/1"
# A ledger for tens of thousands of items is larger than the loader's default 1 MiB cap.
LEDGER_LIMITS = Limits(max_bytes=64 * 1_048_576, max_depth=32, max_nodes=5_000_000)


def seal(ledger: dict[str, Any]) -> dict[str, Any]:
    """The ledger with ``ledger_hash``: the content hash of everything else, so hand edits show."""
    body = {k: v for k, v in ledger.items() if k != "ledger_hash"}
    return {**body, "ledger_hash": content_hash(body)}


def read_ledger(ws: Workspace) -> tuple[Document | None, LoadError | None]:
    """The difficulty ledger's document through the workspace's ledger view (read once), or the
    LoadError that stopped it; (None, None) when there is none (no file at its path)."""
    paths = ws.ledger_paths
    if not paths.difficulty.is_file():
        return None, None
    return ws.ledger.document(paths.difficulty_rel, LEDGER_LIMITS)


def load_ledger(ws: Workspace) -> dict[str, Any]:
    """Read and verify the difficulty ledger; a missing, corrupt or edited ledger is a UsageError."""
    rel = ws.ledger_paths.difficulty_rel
    doc, error = read_ledger(ws)
    if error is not None:
        raise UsageError(f"{rel} cannot be read: {error}; recompute it with `propeval difficulty`") from error
    if doc is None:
        raise UsageError(f"{rel} does not exist; run `propeval difficulty` first")
    problem = verify(doc.data)
    if problem:
        raise UsageError(f"{rel} {problem}")
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
