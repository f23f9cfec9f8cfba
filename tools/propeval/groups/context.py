"""What every ``propeval groups`` rule sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from propeval.config import Config
from propeval.corpus import Corpus, Item
from propeval.embed.protocol import Encoder
from propeval.groups.matrix import ClaimMatrix
from propeval.settings import GroupsSettings


@dataclass
class GroupsContext:
    """What every groups rule may look at; ``items`` and ``matrices`` hold the selected claims'
    items (those with a valid framing and question type) and tables, by claim id, in id order.

    A rule looks only at what the run selected (``items``, ``matrices``, ``scoped``), and reaches
    other claims only by lookups (``corpus.items[...]``): so a run narrowed to the claims a
    change touched costs what those claims cost, not what the corpus does."""

    config: Config
    corpus: Corpus
    settings: GroupsSettings
    encoder: Encoder | None
    in_scope: Callable[[str], bool]
    notes: list[str]
    # Notes that are the same on every run (propeval.standing): a rule skipped by configuration.
    standing: list[str] = field(default_factory=list)
    # every loaded item (valid or not, holding its id or not) in a selected claim's folder, by path
    scoped: list[Item] = field(default_factory=list)
    items: dict[str, list[Item]] = field(default_factory=dict)
    matrices: dict[str, ClaimMatrix] = field(default_factory=dict)
