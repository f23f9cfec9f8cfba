"""Ids are stable: an id present at the git base must still be present now.

Runs only with ``--changed-since REF``. A file deleted, or renamed to another id, is an error; a
file moved to another path that keeps its id is fine. The way out is to retire an item
(``status: retired`` with a ``retired_reason``), never to delete it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.corpus import CLAIM_FILE, ids_of
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "stable-ids"
RULE = Rule(
    ID,
    "check",
    description="(with --changed-since) no id present at REF is deleted or renamed",
    wrong="an id present at the base branch is gone",
    fix="restore the file and retire it",
    draft=True,
    narrowed=False,
)


def check(ctx: Context) -> Iterator[Problem]:
    if ctx.base_paths is None:
        return
    # An id can be gone only where a path of the base is: a commit that adds files costs one set
    # difference, not the ids of every file twice
    if not set(ctx.base_paths).difference(ctx.corpus.files):
        return
    before = ids_of(ctx.base_paths)
    now = {c.id for c in ctx.corpus.all_claims} | {i.id for i in ctx.corpus.all_items}
    now |= set(ids_of(ctx.corpus.files))  # an unparseable file still keeps its id
    for gone in sorted(set(before) - now):
        kind = "claim" if before[gone].endswith("/" + CLAIM_FILE) else "item"
        way_out = (
            "restore the file and set status: retired with a retired_reason"
            if kind == "item"
            else "restore the claim; retire its items instead of deleting them"
        )
        yield RULE.problem(
            before[gone],
            0,
            0,
            f"{kind} id {gone!r} existed at {ctx.base_ref} and is gone now; "
            f"ids are never deleted or renamed: {way_out}",
        )
