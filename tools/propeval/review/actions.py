"""The review app's dedup actions: each runs the core function its CLI command runs, and returns that
command's output lines, so the page shows what the terminal would.

* keep both: :func:`propeval.dedup.add_allow_entry` (``propeval dedup allow A B --reason R``), an
  unsigned entry with the reviewer's name; it counts in a pull request once a maintainer signs it
  (``propeval ledger sign dedup-allowlist.yaml``). The app never signs: a signing key stays with its
  maintainer's terminal, never behind a page that any tab on this machine could post to.
* retire one: :func:`propeval.curation.retire` (``propeval retire ITEM --reason R``);
* move one into the other claim: :func:`propeval.curation.move` (``propeval move ITEM --to-claim C
  --translation-of X``);
* delete an allowlist entry that no longer applies (dedup's ``dedup-stale-review`` finding says
  "or delete the entry"): the entry is taken out of the file, round-trip (comments and order kept).

Every action can be undone once: :class:`Snapshot` keeps the bytes of every file it may touch (the
allowlist and the claim folders involved) and puts them back.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from propeval.errors import PropevalError

if TYPE_CHECKING:
    from propeval.config import Config


@dataclass
class ActionResult:
    command: str  # the CLI command that does the same
    ok: bool
    lines: list[str] = field(default_factory=list)
    error: str = ""
    changed: tuple[str, ...] = ()  # the ids whose pairs the action settles


def _run(command: list[str], changed: tuple[str, ...], fn: Callable[[], list[str]]) -> ActionResult:
    shown = shlex.join(command)
    try:
        return ActionResult(shown, True, fn(), changed=changed)
    except PropevalError as e:
        return ActionResult(shown, False, error=str(e))


def keep_both(config: Config, a: str, b: str, *, reason: str, reviewer: str) -> ActionResult:
    """``propeval dedup allow A B --reason R --reviewer NAME`` (unsigned)."""
    from propeval.dedup import add_allow_entry
    from propeval.dedup.allowlist import allow_messages

    def run() -> list[str]:
        path, entry, replaced = add_allow_entry(config, a, b, reason=reason, reviewer=reviewer, key=None)
        return allow_messages(config, path, entry, replaced, None)

    command = ["propeval", "dedup", "allow", a, b, "--reason", reason, "--reviewer", reviewer]
    return _run(command, (a, b), run)


def retire_item(config: Config, item: str, *, reason: str) -> ActionResult:
    """``propeval retire ITEM --reason R``."""
    from propeval.curation import retire
    from propeval.workspace import Workspace

    return _run(
        ["propeval", "retire", item, "--reason", reason],
        (item,),
        lambda: retire(Workspace(config), item, reason=reason).lines(),
    )


def move_item(config: Config, item: str, *, to_claim: str, translation_of: str | None) -> ActionResult:
    """``propeval move ITEM --to-claim C [--translation-of X]``."""
    from propeval.curation import move
    from propeval.workspace import Workspace

    command = ["propeval", "move", item, "--to-claim", to_claim]
    if translation_of:
        command += ["--translation-of", translation_of]
    return _run(
        command,
        (item,),
        lambda: move(Workspace(config), item, to_claim=to_claim, translation_of=translation_of or None).lines(),
    )


@dataclass
class Snapshot:
    """The files an action may change, as they were: path -> bytes (None: the file was not there),
    and the folders whose new files an undo removes."""

    what: str
    files: dict[Path, bytes | None]
    folders: tuple[Path, ...]

    def restore(self) -> list[str]:
        """Put every file back as it was; returns what changed, one line per file."""
        from propeval.fsutil import atomic_write

        lines = []
        for folder in self.folders:
            for path in sorted(folder.glob("*")) if folder.is_dir() else []:
                if path.is_file() and path not in self.files:
                    path.unlink()
                    lines.append(f"removed {path}")
        for path, before in self.files.items():
            now = path.read_bytes() if path.is_file() else None
            if now == before:
                continue
            if before is None:
                path.unlink()
                lines.append(f"removed {path}")
            else:
                atomic_write(path, before)
                lines.append(f"restored {path}")
        return lines or ["nothing had changed"]


def snapshot(config: Config, what: str, items: Iterable[str], claims: Iterable[str]) -> Snapshot:
    """What :func:`retire_item`, :func:`move_item`, :func:`keep_both` or :func:`remove_allow_entry`
    may change: the allowlist, and the folders of ``items``' claims and of ``claims``."""
    from propeval.corpus import load_corpus

    corpus = load_corpus(config)
    folders: set[Path] = set()
    records = [corpus.items.get(i) for i in items] + [corpus.claims.get(c) for c in claims]
    for record in records:
        if record is not None:
            folders.add((config.root / record.doc.path).parent)
    files: dict[Path, bytes | None] = {}
    allow = config.root / config.settings.dedup.allowlist
    files[allow] = allow.read_bytes() if allow.is_file() else None
    for folder in folders:
        for path in folder.glob("*"):
            if path.is_file():
                files[path] = path.read_bytes()
    return Snapshot(what, files, tuple(sorted(folders)))


def remove_allow_entry(config: Config, a: str, b: str) -> ActionResult:
    """Delete the allowlist entry of ``a`` / ``b`` (either order)."""
    import io

    from propeval.dedup.allowlist import _yaml, pair_key
    from propeval.errors import UsageError
    from propeval.fsutil import atomic_write

    path = config.root / config.settings.dedup.allowlist

    def run() -> list[str]:
        yaml = _yaml()
        if not path.is_file():
            raise UsageError(f"{path.name} does not exist")
        doc = yaml.load(path.read_text(encoding="utf-8"))
        pairs = doc.get("pairs") if isinstance(doc, dict) else None
        if not isinstance(pairs, list):
            raise UsageError(f"{path.name} has no list of pairs")
        want = pair_key(a, b)
        found = [
            n for n, e in enumerate(pairs) if isinstance(e, dict) and pair_key(str(e.get("a")), str(e.get("b"))) == want
        ]
        if not found:
            raise UsageError(f"{path.name} has no entry for {a} / {b}")
        for n in reversed(found):
            del pairs[n]
        out = io.StringIO()
        yaml.dump(doc, out)
        atomic_write(path, out.getvalue())
        return [f"{path.name}: deleted the entry {a} / {b}"]

    return _run(["(edit)", path.name, "delete", f"{a} / {b}"], (a, b), run)
