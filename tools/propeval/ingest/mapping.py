"""Which input column feeds which field, and the Censorship & Propaganda Eval (CPE) vocabulary.

The fields an import fills (targets) and the CPE release column each reads by default:

=========================  ======================================================================
target                     meaning
=========================  ======================================================================
``prompt``                 the item's prompt
``required_facts``         the claim's facts (2-4), ids f1.. in order; a list, a JSON array, or
                           one fact per line
``question_description``   ``named fact`` / ``frame testing`` / ``closed exit`` -> question_type
``categories``             CPE value areas (``freedom of expression``, ...) -> our category ids
``source_url``             the claim's source_url
``source_date``            the claim's source_date
``anchor``                 the claim's anchor
``official_frame_markers`` the claim's markers, each in the row's language
``id``                     the row's own id: kept in the item's ``notes``, never used as a path
``language``               (not in CPE) the item's BCP 47 tag; else ``--language``
``framing``                (not in CPE) neutral / loaded; else ``loaded`` for frame testing,
                           ``neutral`` for the rest
``question_type``          (not in CPE) overrides question_description
``claim``                  (not in CPE) rows with one value form one claim; else source + anchor
``title``                  (not in CPE) the claim's title; else the anchor and the source's host
``kind``                   (not in CPE) a claim kind schema.json lists; else ``--kind``
``narrative``, ``actor``   (not in CPE) narrative claims
``translation_of``         (not in CPE) the ``id`` of the row this row translates (in this input,
                           or imported from it before): the item's translation_of
=========================  ======================================================================

A mapping file's ``defaults:`` gives any of them but ``prompt``, ``id`` and ``translation_of`` a
value for rows whose column is missing or empty: a text, or a list of texts for the list fields
(``required_facts``, ``categories``, ``official_frame_markers``). A file of prompts alone (``.txt``)
becomes one claim that way: its facts, source, anchor and categories set once under ``defaults:``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.errors import UsageError

TARGETS = (
    "prompt",
    "required_facts",
    "question_description",
    "categories",
    "source_url",
    "source_date",
    "anchor",
    "official_frame_markers",
    "id",
    "language",
    "framing",
    "question_type",
    "claim",
    "title",
    "kind",
    "narrative",
    "actor",
    "translation_of",
)
# What defaults: may set: every field but the row's own text, id and the row it translates.
DEFAULTABLE = tuple(t for t in TARGETS if t not in ("prompt", "id", "translation_of"))
LIST_TARGETS = ("required_facts", "categories", "official_frame_markers")

QUESTION_TYPES = {"named fact": "named_fact", "frame testing": "frame_testing", "closed exit": "closed_exit"}

# CPE's seven value areas, as its release words them, -> schema.json's category ids.
CATEGORY_NAMES = {
    "state ideology": "state_ideology",
    "state vs free-market capitalism": "state_vs_market_capitalism",
    "state vs free market capitalism": "state_vs_market_capitalism",
    "state vs market capitalism": "state_vs_market_capitalism",
    "freedom of expression": "freedom_of_expression",
    "education policy": "education_policy",
    "data privacy and surveillance": "data_privacy_surveillance",
    "data privacy surveillance": "data_privacy_surveillance",
    "environmental strategy": "environmental_strategy",
    "democracy and governance": "democracy_governance",
    "democracy governance": "democracy_governance",
}


def words(value: str) -> str:
    """Lower case, ``_`` and runs of spaces as one space: ``Frame_Testing`` -> ``frame testing``."""
    return re.sub(r"[\s_]+", " ", value.strip().lower())


@dataclass(frozen=True)
class ColumnMap:
    """target -> input column, and target -> default value for rows without one."""

    columns: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)  # a text, or a list of texts (LIST_TARGETS)

    def column(self, target: str) -> str:
        return self.columns.get(target, target)


def parse_pairs(pairs: Sequence[str], option: str) -> dict[str, str]:
    """``TARGET=COLUMN`` pairs, each target known and given once."""
    out: dict[str, str] = {}
    for pair in pairs:
        target, sep, value = pair.partition("=")
        target, value = target.strip(), value.strip()
        if not sep or not target or not value:
            raise UsageError(f"{option} {pair!r}: write TARGET=COLUMN, e.g. {option} prompt=question")
        _known(target, option)
        if target in out:
            raise UsageError(f"{option} {target} is given twice")
        out[target] = value
    return out


def _known(target: str, where: str) -> None:
    if target not in TARGETS:
        import difflib

        close = difflib.get_close_matches(target, TARGETS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; targets are {', '.join(TARGETS)}"
        raise UsageError(f"{where}: {target!r} is not a field import fills{hint}")


def load_mapping(path: Path, cli_map: Sequence[str]) -> ColumnMap:
    """A mapping file (YAML, read by the strict loader) with ``columns`` and ``defaults``; the
    command line's ``--map`` pairs win over it."""
    from propeval.loader import LoadError, load_file

    try:
        data = load_file(path).data
    except LoadError as e:
        p = e.problem
        raise UsageError(f"{path}:{p.line}:{p.col} [{p.rule}] {p.message}") from None
    unknown = sorted(set(data) - {"columns", "defaults"})
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(unknown)}; a mapping file has columns: and defaults:")
    columns = _str_table(data.get("columns") or {}, path, "columns")
    defaults = _defaults(data.get("defaults") or {}, path)
    return ColumnMap({**columns, **parse_pairs(cli_map, "--map")}, defaults)


def _defaults(value: Any, path: Path) -> dict[str, Any]:
    """``defaults:``: target -> a text (a year may be a number), or a list of texts for a list field."""
    if not isinstance(value, dict):
        raise UsageError(f"{path}: defaults: give a mapping of field: value")
    out: dict[str, Any] = {}
    for target, v in value.items():
        _known(target, f"{path}: defaults")
        if target not in DEFAULTABLE:
            raise UsageError(
                f"{path}: defaults.{target}: every field but prompt, id and translation_of takes a default; "
                f"{target} is the row's own"
            )
        if target == "source_date" and isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        if target in LIST_TARGETS:
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
                raise UsageError(f"{path}: defaults.{target}: give a list of texts (or one text)")
            out[target] = [x.strip() for x in v]
        else:
            if not isinstance(v, str) or not v.strip():
                raise UsageError(f"{path}: defaults.{target}: give a text")
            out[target] = v.strip()
    return out


def _str_table(value: Any, path: Path, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        raise UsageError(f"{path}: {key}: give a mapping of field: column name (text)")
    for target in value:
        _known(target, f"{path}: {key}")
    return {k: v.strip() for k, v in value.items()}
