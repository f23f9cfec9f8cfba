"""The whole ``[tool.propeval]``: every table read and checked, as one :class:`ProjectSettings`."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

from propeval.settings.core import CoreSettings
from propeval.settings.dedup import DedupSettings
from propeval.settings.difficulty import DifficultySettings
from propeval.settings.gates import GateSettings, read_signers
from propeval.settings.groups import GroupsSettings, read_groups
from propeval.settings.judge import Endpoint, JudgeSettings, read_judge
from propeval.settings.release import ReleaseSettings
from propeval.settings.table import Table, Where, read_table

DEFAULT_SOURCE = "pyproject.toml"
# Every table, in the order of docs/settings.md.
TABLES: tuple[type[Table], ...] = (
    CoreSettings,
    DedupSettings,
    GroupsSettings,
    JudgeSettings,
    Endpoint,
    GateSettings,
    DifficultySettings,
    ReleaseSettings,
)
SUBTABLES = ("dedup", "groups", "judge", "gates", "signers", "difficulty", "release")


@dataclass(frozen=True)
class ProjectSettings:
    """Every table of ``[tool.propeval]``, read and checked."""

    core: CoreSettings
    dedup: DedupSettings
    groups: GroupsSettings
    judge: JudgeSettings
    gates: GateSettings
    difficulty: DifficultySettings
    release: ReleaseSettings


def read_settings(
    raw: Any,
    source: str = DEFAULT_SOURCE,
    *,
    claim_kinds: Callable[[CoreSettings], Collection[str] | None] | None = None,
) -> ProjectSettings:
    """Read and check every table of ``[tool.propeval]``.

    Args:
        raw: the parsed TOML table.
        source: the file every error names.
        claim_kinds: the claim kinds of the schema ``[tool.propeval]`` names (None: unknown), asked
            only when ``[tool.propeval.groups.languages]`` gives a kind; unset, any kind is taken.
    """
    top = Where(source, "")
    core = read_table(CoreSettings, raw, top, tables=SUBTABLES)

    def sub(name: str) -> tuple[Any, Where]:
        return raw.get(name, {}), Where(source, name)

    judge = read_judge(*sub("judge"))
    gates = replace(read_table(GateSettings, *sub("gates")), signers=read_signers(*sub("signers")))
    difficulty = replace(read_table(DifficultySettings, *sub("difficulty")), runs_dir=judge.runs_dir)
    release = replace(
        read_table(ReleaseSettings, *sub("release")), runs_dir=judge.runs_dir, rubrics_dir=judge.rubrics_dir
    )
    return ProjectSettings(
        core=core,
        dedup=read_table(DedupSettings, *sub("dedup")),
        groups=read_groups(*sub("groups"), (lambda: claim_kinds(core)) if claim_kinds is not None else None),
        judge=judge,
        gates=gates,
        difficulty=difficulty,
        release=release,
    )
