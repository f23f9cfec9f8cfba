"""An id this branch adds must not be taken at the base tip by another file.

Runs only with ``--changed-since REF`` (and so in ``propeval ci --base REF``). Two branches made
side by side can both pick ``i0172`` for different items; each passes on its own and git merges
them cleanly, into a corpus with one id twice. The merge base cannot see this, since the other
branch landed after it; so every id that is new since the merge base is looked up in REF's own tip.

* REF has the id at another path: error.
* REF has the same path with other content (both branches added ``questions/c0012/claim.yaml``):
  error.
* REF has the very same file (this branch's commit is already on REF): fine.

Failing: this branch adds ``questions/c0002/i0172.yaml``; ``origin/main`` gained
``questions/c0001/i0172.yaml`` since the branch forked. Gives::

    questions/c0002/i0172.yaml:1:5 [id-collision] item id 'i0172' is new on this branch, but origin/main
    already has it for questions/c0001/i0172.yaml; ids are unique: renumber yours with
    `propeval renumber questions/c0002/i0172.yaml --base origin/main`
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.checks.stable_ids import ids_of
from propeval.corpus import CLAIM_FILE
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "id-collision"
DESCRIPTION = "(with --changed-since REF) no id this branch adds is taken at REF's tip by another file"


def check(ctx: Context) -> Iterator[Problem]:
    if ctx.base_paths is None or ctx.tip_paths is None:
        return
    before = set(ids_of(ctx.base_paths))
    tip = ids_of(ctx.tip_paths)
    docs = [*(c.doc for c in ctx.corpus.all_claims), *(i.doc for i in ctx.corpus.all_items)]
    for doc in docs:
        rel = doc.relpath
        kind = "claim" if doc.path.name == CLAIM_FILE else "item"
        name = doc.path.parent.name if kind == "claim" else doc.path.stem
        if name in before or name not in tip:
            continue
        there = tip[name]
        if there == rel:
            blob = ctx.tip_blob(there) if ctx.tip_blob is not None else None
            if blob is not None and blob.decode("utf-8", "replace") == doc.text:
                continue  # the same file is already on REF
            where = f"{there} with other content"
        else:
            where = f"for {there}"
        target = rel.rsplit("/", 1)[0] if kind == "claim" else rel
        yield doc.problem(
            "/id",
            ID,
            f"{kind} id {name!r} is new on this branch, but {ctx.base_ref} already has it {where}; "
            f"ids are unique: renumber yours with `propeval renumber {target} --base {ctx.base_ref}`",
        )
