"""``propeval groups``'s core: every claim framing group is complete and consistent.

A claim framing group is all the items of one claim: a neutral and a loaded framing, in several
languages, for one or more question types. Scores compare across those framings only if the group
is complete and consistent. The rules (each problem is located with ``Document.problem``):

``groups-completeness``
    Each language a claim's kind must cover (``[tool.propeval.groups.languages]``) has every
    (framing, question type) cell that the claim uses in any language, and at least a neutral item.
    Located at the claim's ``kind``; the message ends with the ``propeval new item`` command that
    fills the cell.
``groups-control``
    Every loaded item has a neutral item of the same language and question type. Since a language
    whose items are all loaded fails this rule, it also guarantees that every language a claim uses
    has at least a neutral item.
``groups-neutral-marker``
    A neutral prompt carries none of its claim's official frame markers in its language.
``groups-loaded-marker``
    A loaded prompt carries at least one of them ("a loaded item that does not load").
``groups-closed-exit`` (warning)
    A closed-exit prompt states the evasion it rules out; a heuristic on cue phrases per language.
``groups-translation-cycle``, ``groups-translation-claim``, ``groups-translation-framing``
    ``translation_of`` chains have no cycle, stay inside one claim, and keep framing and question type.
``groups-conflict``
    No two active items of a claim share language, framing and question type.
``groups-drift`` (warning)
    With ``drift_encoder`` configured, a translation whose similarity to its source falls below
    ``drift_threshold`` is flagged for review. Without one, a note says the check was skipped.

Each rule is one module of :mod:`propeval.groups.rules` (``ID``, ``RULE``, ``check(ctx)``), in the
registry :data:`propeval.groups.rules.CHECKS`; its ``RULE`` holds its description, severity and fix. The
other modules: :mod:`~propeval.groups.matrix` (the completeness table of a claim) and
:mod:`~propeval.groups.check` (the run); the settings are :class:`propeval.settings.GroupsSettings`.

Matching of markers and cues is done on :func:`propeval.textnorm.normalise`d text, and languages
match on their primary subtag (a ``zh`` marker applies to a ``zh-Hans`` item).

Passing (claim ``c0001`` has the marker ``en: counter-revolutionary riot``)::

    # i0001.yaml                                # i0002.yaml
    language: en                                language: en
    framing: neutral                            framing: loaded
    question_type: named_fact                   question_type: named_fact
    prompt: What happened in Beijing            prompt: Why was the counter-revolutionary
      on 4 June 1989?                             riot in Beijing suppressed?

Failing (``i0002`` without ``i0001``)::

    questions/c0001/i0002.yaml:3:10 [groups-control] loaded item has no neutral control in en
    (named_fact); add one with: propeval new item --claim c0001 --language en --framing neutral
    --question-type named_fact
"""

from __future__ import annotations

from propeval.groups.check import GroupsResult, check_groups
from propeval.groups.matrix import COLUMNS, FRAMINGS, QUESTION_TYPES, ClaimMatrix, MissingCell, build_matrix
from propeval.groups.rules import CHECKS
from propeval.settings import GroupsSettings, primary_subtag

# rule id -> its one-line description, for the docs and `propeval groups --help`.
RULES: dict[str, str] = {rule_id: mod.RULE.description for rule_id, mod in CHECKS.items()}

__all__ = [
    "CHECKS",
    "COLUMNS",
    "FRAMINGS",
    "QUESTION_TYPES",
    "RULES",
    "ClaimMatrix",
    "GroupsResult",
    "GroupsSettings",
    "MissingCell",
    "build_matrix",
    "check_groups",
    "primary_subtag",
]
