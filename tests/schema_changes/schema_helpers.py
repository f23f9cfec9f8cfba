"""Helpers for schema-change tests: migration modules, schema edits, text positions."""

from __future__ import annotations

import textwrap
from pathlib import Path

RENAME_FRAMING = '''
"""2.0.0 renames an item's `framing` to `frame`."""

from propeval.migrations.ops import rename_field

FROM = "1.0.0"
TO = "2.0.0"


def migrate(doc, kind):
    if kind == "item":
        rename_field(doc, "framing", "frame")
'''


def write_migration(folder: Path, source: str, target: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"v{source.replace('.', '_')}__to__v{target.replace('.', '_')}.py"
    path = folder / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def edit_schema(root: Path, *pairs: tuple[str, str]) -> str:
    """Replace each (old, new) text once in schema.json; returns the new text."""
    path = root / "schema.json"
    text = path.read_text(encoding="utf-8")
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return text


def at(text: str, needle: str, *, nth: int = 0) -> str:
    """'line:col' of the nth occurrence of ``needle`` in ``text`` (1-based)."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"{line}:{col}"
