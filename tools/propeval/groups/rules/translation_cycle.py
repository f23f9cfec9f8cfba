"""``translation_of`` chains have no cycle: the original item of a chain has no ``translation_of``.

Failing: ``i0001`` says ``translation_of: i0002`` and ``i0002`` says ``translation_of: i0001``.
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.result import Problem, Rule

ID = "groups-translation-cycle"
RULE = Rule(
    ID,
    "groups",
    description="translation_of chains have no cycle",
    wrong="`translation_of` leads back to the item",
    fix="remove `translation_of` from the original",
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    items = ctx.corpus.items
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    # Every cycle the run may report has its head in scope, so starting from the items in scope
    # finds each one (a walk that enters a cycle goes round it), without walking other claims.
    starts = sorted({i.id for i in ctx.scoped if items.get(i.id) is i})
    for start in starts:
        path: list[str] = []
        node: str | None = start
        while node is not None and node in items and state.get(node) is None:
            state[node] = 1
            path.append(node)
            node = items[node].translation_of
        if node is not None and state.get(node) == 1:
            cycle = path[path.index(node) :]
            head = min(cycle)
            k = cycle.index(head)
            ordered = [*cycle[k:], *cycle[:k], head]
            problem = items[head].doc.problem(
                "/translation_of",
                RULE,
                f"translation_of forms a cycle: {' -> '.join(ordered)}; the original item has no "
                "translation_of: remove it from the item that was written first",
            )
            if ctx.in_scope(problem.path):
                yield problem
        for n in path:
            state[n] = 2
