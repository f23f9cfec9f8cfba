"""The review app's dedup actions: each runs the core function its CLI command runs, and returns that
command's output lines, so the page shows what the terminal would.

* keep both: :func:`propeval.dedup.add_allow_entry` (``propeval dedup allow A B --reason R``), an
  unsigned entry with the reviewer's name; it counts in a pull request once a maintainer signs it
  (``propeval ledger sign dedup-allowlist.yaml``). The app never signs: a signing key stays with its
  maintainer's terminal, never behind a page that any tab on this machine could post to.
* retire one: :func:`propeval.curation.retire` (``propeval retire ITEM --reason R``);
* move one into the other claim: :func:`propeval.curation.move` (``propeval move ITEM --to-claim C
  --translation-of X``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
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
