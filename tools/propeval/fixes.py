"""``propeval check --fix``: the safe fixes, applied in place, the rest of each file left byte for byte.

A fix is safe when it cannot change what an item asks or what a claim states: today that is a
language tag written in a non-canonical form of the same tag (``ru_RU`` -> ``ru-RU``, ``RU`` ->
``ru``, ``iw`` -> ``he``). A guess for a tag that is not valid (``ua``: did you mean ``uk``?) is
only suggested: a person picks the language. Fixes run tags first; a later kind of fix
is one more function in :data:`FIXERS`.

Each value is replaced where the strict loader says it stands (its line and column), inside its
quotes if it has them; nothing else in the file is re-serialised, so comments, key order, quoting
and indentation stay as they were. The new text is loaded back through the strict loader and must
equal the old data with only the fixed values changed, then it is written atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.fsutil import atomic_write
from propeval.loader import Document, LoadError, load_text

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass(frozen=True)
class Fix:
    """One value to replace: where, what it was, what it becomes."""

    path: str
    line: int
    col: int
    pointer: str
    old: str
    new: str
    rule: str

    def describe(self) -> str:
        return f"{self.path}:{self.line}:{self.col} [{self.rule}] {self.old!r} -> {self.new!r}"


@dataclass
class FixResult:
    applied: list[Fix] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why a file was left as it was


def language_fixes(doc: Document) -> Iterator[tuple[str, str, str, str]]:
    """(pointer, old, new, rule) for every language tag with a known canonical replacement."""
    from propeval.checks.language import ID, pointers
    from propeval.langtags import canonical, problem

    for pointer, tag in pointers(doc.data):
        if isinstance(tag, str) and tag:
            found = problem(tag)
            # A canonical rewrite only (ru_RU -> ru-RU); a guess for an invalid tag (ua -> uk) is left to a person.
            if found is not None and found[1] is not None and canonical(tag) is not None:
                yield pointer, tag, found[1], ID


# In order: tags first.
FIXERS: tuple[Callable[[Document], Iterator[tuple[str, str, str, str]]], ...] = (language_fixes,)


def fix_corpus(ws: Workspace, paths: set[str] | None = None) -> FixResult:
    """Apply every safe fix to the corpus files (or to ``paths``, corpus-relative, when given).

    A file that does not load is left alone (``check`` reports why). The workspace is not
    updated: read the corpus again through a new one to see the fixed files."""
    result = FixResult()
    for doc in sorted(ws.corpus.documents(), key=lambda d: d.path):
        rel, path = doc.relpath, doc.path
        if paths is not None and rel not in paths:
            continue
        fixes = [
            Fix(rel, *doc.locate(pointer), pointer, old, new, rule)
            for fixer in FIXERS
            for pointer, old, new, rule in fixer(doc)
        ]
        if not fixes:
            continue
        text, why = apply(doc, fixes)
        if text is None:
            result.skipped.append(f"{rel}: not fixed: {why}")
            continue
        atomic_write(path, text)
        result.applied.extend(fixes)
    return result


def apply(doc: Document, fixes: list[Fix]) -> tuple[str | None, str]:
    """The text of ``doc`` with every fix in place, or (None, why) when that cannot be done exactly."""
    lines = doc.text.split("\n")
    # From the end of each line backwards, so earlier columns stay valid.
    for fix in sorted(fixes, key=lambda f: (f.line, f.col), reverse=True):
        line = lines[fix.line - 1]
        at = fix.col - 1
        rest = line[at:]
        for quote in ("", '"', "'"):
            token = f"{quote}{fix.old}{quote}"
            end = at + len(token)
            if rest.startswith(token) and (quote or end == len(line) or not _continues(line[end])):
                lines[fix.line - 1] = line[:at] + quote + fix.new + quote + line[end:]
                break
        else:
            return None, f"the value at line {fix.line} is not written as a plain or quoted scalar"
    text = "\n".join(lines)
    expected = _with(doc.data, {f.pointer: f.new for f in fixes})
    try:
        again = load_text(text, doc.relpath, kind="json" if doc.relpath.endswith(".json") else "yaml").data
    except LoadError as e:
        return None, str(e)
    if again != expected:
        return None, "the fixed file would not load back to the expected data"
    return text, ""


def _continues(ch: str) -> bool:
    # A plain scalar ends at a line end, a comment (" #"), or a flow indicator.
    return ch not in " \t,]}#"


def _with(data: Any, changes: dict[str, str]) -> Any:
    import copy

    out = copy.deepcopy(data)
    for pointer, value in changes.items():
        parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
        node = out
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(parts[-1])] = value
        else:
            node[parts[-1]] = value
    return out
