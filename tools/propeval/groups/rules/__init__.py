"""The rules of ``propeval groups``, one module each, in one registry (the shape of ``checks/``).

Each module declares ``ID``, ``RULE`` (its :class:`~propeval.result.Rule`: description, severity,
what is wrong, how to fix it) and ``check(ctx) -> Iterator[Problem]``; :mod:`propeval.rules` collects
the ``RULE`` objects into the one registry of rule ids. Adding a rule is one module here and its
line in ``_MODULES``. A rule sees the whole :class:`GroupsContext`:
the claims the run selected (with their valid items and matrices) and the corpus; a rule over the
whole corpus reports only problems ``ctx.in_scope``. :data:`CHECKS` drives the run, the docs and
``propeval groups --help``.
"""

from __future__ import annotations

from types import ModuleType

from propeval.groups.context import GroupsContext
from propeval.groups.rules import (
    closed_exit,
    completeness,
    conflict,
    control,
    drift,
    loaded_marker,
    neutral_marker,
    translation_claim,
    translation_cycle,
    translation_framing,
)

__all__ = ["CHECKS", "GroupsContext"]

_MODULES: tuple[ModuleType, ...] = (
    completeness,
    control,
    neutral_marker,
    loaded_marker,
    closed_exit,
    translation_cycle,
    translation_claim,
    translation_framing,
    conflict,
    drift,
)
CHECKS: dict[str, ModuleType] = {mod.ID: mod for mod in _MODULES}
