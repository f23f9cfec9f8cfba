"""Active items carry a current difficulty band (``<ledger_dir>/difficulty.json``).

Silent when the corpus has no ``ledger/difficulty.json`` at all: bands come from graded runs,
which a new corpus does not have yet. Once the ledger exists, each active item gets a warning
when the ledger gives it no band, or when the item changed since its band was computed (the
item's content hash differs from the one in the ledger). A ledger that does not load, or whose
``ledger_hash`` does not match its content (edited by hand), is reported once and not trusted.

Failing (``i0002`` was added after the last ``propeval difficulty``)::

    questions/c0001/i0002.yaml:1:1 [difficulty] (warning) i0002 has no difficulty band; ...

Reads the ledger through ``propeval.loader``; imports neither numpy nor scipy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.difficulty import BANDS, read_ledger, verify
from propeval.result import Problem, Rule, Severity

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "difficulty"
RULE = Rule(
    ID,
    "check",
    description="active items have a current band in ledger/difficulty.json",
    severity=Severity.WARNING,
    wrong=(
        "an active item has no band in `ledger/difficulty.json`, its band is stale (the item changed since), or the "
        "ledger is unreadable or was edited by hand"
    ),
    fix="grade runs that include the item, then run `propeval difficulty` again",
    also=(Severity.ERROR,),  # `run`'s difficulty step: a ledger it cannot load
)

_RECOMPUTE = "run `propeval difficulty` on graded runs that include it"


def check(ctx: Context) -> Iterator[Problem]:
    doc, error = read_ledger(ctx.ws)
    if error is not None:
        p = error.problem
        yield RULE.problem(p.path, p.line, p.col, f"the difficulty ledger cannot be read: {p.message}")
        return
    if doc is None:
        return
    why = verify(doc.data)
    if why:
        yield RULE.problem(doc.relpath, 1, 1, f"the difficulty ledger {why}")
        return
    entries = doc.data["items"]
    for item in ctx.items():
        if not item.active:
            continue
        entry = entries.get(item.id)
        if entry is None or entry.get("band") not in BANDS:
            yield item.doc.problem("/id", RULE, f"{item.id} has no difficulty band; {_RECOMPUTE}")
        elif entry.get("item_hash") != item.hash:
            yield item.doc.problem(
                "/id",
                RULE,
                f"{item.id} changed since its difficulty band ({entry['band']}) was computed; "
                f"the band is stale: {_RECOMPUTE}",
            )
