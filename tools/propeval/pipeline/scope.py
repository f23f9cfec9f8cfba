"""What a pipeline step looks at: the whole corpus (``run``), or what changed since a ref (``ci``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Scope:
    """The part of the corpus a step covers, and where the report step writes.

    ``base`` None: the whole corpus, every active item, every rubric (``propeval run``). A ref: what
    changed since the merge base with it (``propeval ci --base REF``), each step narrowing as far as
    is sound and saying so when it has nothing to look at.
    """

    base: str | None = None
    report: Path | None = None
    # ``propeval run --record``: the dedup step writes its record; without it, run changes no tracked file.
    record: bool = False

    @property
    def whole(self) -> bool:
        return self.base is None
