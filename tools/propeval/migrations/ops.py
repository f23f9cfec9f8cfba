"""The operations a migration applies to one file's mapping: rename, split, set a default.

Each works on a ruamel round-trip ``CommentedMap`` (keeping the key's position and the comment
after it) and on a plain ``dict`` alike, and each is idempotent: applied to a file that is already
migrated, it does nothing. Each returns True when it changed something.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["MigrationConflictError", "recording", "rename_field", "set_default", "split_field"]

_LOG: ContextVar[list[str] | None] = ContextVar("propeval_migration_log", default=None)


class MigrationConflictError(ValueError):
    """The file holds both the old and the new form of a field; a person must merge them."""


@contextmanager
def recording() -> Iterator[list[str]]:
    """Collect a line per operation applied inside the block (for reports)."""
    log: list[str] = []
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def _note(message: str) -> None:
    log = _LOG.get()
    if log is not None:
        log.append(message)


def _replace(doc: MutableMapping[str, Any], old: str, new_items: list[tuple[str, Any]]) -> None:
    """Put ``new_items`` where ``old`` stood, carrying the comment that followed it."""
    keys = list(doc.keys())
    pos = keys.index(old)
    insert = getattr(doc, "insert", None)
    if insert is not None and hasattr(doc, "ca"):
        comment = doc.ca.items.pop(old, None)
        del doc[old]
        for i, (k, v) in enumerate(new_items):
            insert(pos + i, k, v)
        if comment is not None and new_items:
            doc.ca.items[new_items[-1][0]] = comment
        return
    items = list(doc.items())
    doc.clear()
    for k, v in items[:pos] + new_items + items[pos + 1 :]:
        doc[k] = v


def rename_field(doc: MutableMapping[str, Any], old: str, new: str) -> bool:
    """Rename ``old`` to ``new`` in place (same position, same value and comment).

    Raises:
        MigrationConflictError: both ``old`` and ``new`` are present.
    """
    if old not in doc:
        return False
    if new in doc:
        raise MigrationConflictError(f"both {old!r} and {new!r} are present; keep one of them by hand")
    _replace(doc, old, [(new, doc[old])])
    _note(f"renamed {old!r} to {new!r}")
    return True


def split_field(doc: MutableMapping[str, Any], field: str, split: Callable[[Any], Mapping[str, Any]]) -> bool:
    """Replace ``field`` with the fields ``split(value)`` returns, in that order, at its position.

    When one of the parts keeps ``field``'s name and every other part is already present, the
    file was split before, and nothing happens.

    Raises:
        MigrationConflictError: one of the new fields is already present beside ``field``.
    """
    if field not in doc:
        return False
    parts = dict(split(doc[field]))
    others = [k for k in parts if k != field]
    clash = [k for k in others if k in doc]
    if field in parts and others and len(clash) == len(others):
        return False  # split already, keeping the field's name for one part
    if clash:
        raise MigrationConflictError(f"{field!r} and {clash[0]!r} are both present; keep one of them by hand")
    _replace(doc, field, list(parts.items()))
    _note(f"split {field!r} into {', '.join(repr(k) for k in parts)}")
    return True


def set_default(doc: MutableMapping[str, Any], field: str, value: Any, *, after: str | None = None) -> bool:
    """Add ``field: value`` when absent: right after ``after`` when that key exists, else at the end."""
    if field in doc:
        return False
    insert = getattr(doc, "insert", None)
    keys = list(doc.keys())
    if after is not None and after in doc:
        pos = keys.index(after) + 1
        if insert is not None:
            insert(pos, field, value)
        else:
            items = list(doc.items())
            doc.clear()
            for k, v in [*items[:pos], (field, value), *items[pos:]]:
                doc[k] = v
    else:
        doc[field] = value
    _note(f"set {field!r} to {value!r}")
    return True
