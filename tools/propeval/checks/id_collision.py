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

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from propeval.corpus import CLAIM_FILE
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "id-collision"
RULE = Rule(
    ID,
    "check",
    description="(with --changed-since) no id this branch adds is taken at REF's tip",
    wrong="an id your branch adds was taken on the base branch since you forked (another file has it there)",
    fix="`propeval renumber <your file> --base <base>`",
    draft=True,
    narrowed=False,
)


def _by_id(paths: Iterable[str]) -> dict[str, set[str]]:
    """id -> every path that holds it (an id is its file's or folder's name)."""
    out: dict[str, set[str]] = defaultdict(set)
    for p in paths:
        # string operations, not PurePosixPath: this runs over every path of the corpus and its tip
        head, _, name = p.rstrip("/").rpartition("/")
        if name.endswith(".yaml") and name != ".yaml":
            out[head.rpartition("/")[2] if name == CLAIM_FILE else name[: -len(".yaml")]].add(p)
    return out


def check(ctx: Context) -> Iterator[Problem]:
    if ctx.base_paths is None:
        return
    base = set(ctx.base_paths)
    now = set(ctx.corpus.files)
    docs = [*(c.doc for c in ctx.corpus.all_claims), *(i.doc for i in ctx.corpus.all_items)]
    # Only a file this branch added can collide: a commit's few, found by one set difference
    added = now - base
    docs = [d for d in docs if d.relpath in added]
    if not docs:
        return
    tip = set(ctx.tip_paths or ())
    # The paths that can hold an added file's id (its name as a file, or as a claim's folder),
    # picked by suffix before any path is split
    ends = tuple(
        f"/{d.folder_name}/{CLAIM_FILE}" if d.relpath.endswith("/" + CLAIM_FILE) else f"/{d.stem}.yaml" for d in docs
    )
    now_ids = _by_id(p for p in now if p.endswith(ends))
    tip_ids = _by_id(p for p in tip if p.endswith(ends))
    for doc in docs:
        mine = doc.relpath
        kind = "claim" if doc.path.name == CLAIM_FILE else "item"
        name = doc.path.parent.name if kind == "claim" else doc.path.stem
        others = set()
        # Already merged with the base (a merge-commit checkout): another file here came from it.
        others |= {p for p in now_ids.get(name, ()) if p != mine and (p in base or p in tip)}
        # Not merged yet: the base's tip has it; a file this branch moved away is not a collision.
        others |= {p for p in tip_ids.get(name, ()) if p != mine and not (p in base and p not in now)}
        where = ""
        if others:
            where = f"for {', '.join(sorted(others))}"
        elif mine in tip:
            blob = ctx.tip_blob(mine) if ctx.tip_blob is not None else None
            if blob is None or blob.decode("utf-8", "replace") != doc.text:
                where = f"at {mine} with other content"
        if not where:
            continue
        target = mine.rsplit("/", 1)[0] if kind == "claim" else mine
        yield doc.problem(
            "/id",
            RULE,
            f"{kind} id {name!r} is new on this branch, but {ctx.base_ref} already has it {where}; "
            f"ids are unique: renumber yours with `propeval renumber {target} --base {ctx.base_ref}`",
        )
