"""Every ``[tool.propeval.*]`` table of pyproject.toml as one typed model.

One small layer over dataclasses: each key is a dataclass field whose metadata holds its
:class:`ValueType` (how a TOML value is checked and converted) and a one-line description. From the
same fields come the reader (:func:`read_table`), the errors and the reference
``docs/settings.md`` (:func:`render_docs`; ``python -m propeval.settings > docs/settings.md``).

The rules every table follows:

* an unknown key is refused, with the file and the key named and the closest known key suggested:
  ``pyproject.toml: [tool.propeval.dedup] unknown key 'treshold'; did you mean 'threshold'?``;
  so is a claim kind in ``[tool.propeval.groups.languages]`` that the corpus's schema does not allow;
* a value of the wrong type or out of range names the key and what it must be;
* each setting lives in one table: a key that moved (``runs_dir`` in ``[tool.propeval.difficulty]``)
  is refused with where it lives now, and the tables that need it read it from there;
* every error is a :class:`~propeval.errors.ConfigError` (exit 2, no traceback).

Modules:

* :mod:`~propeval.settings.table`: :class:`Where`, the value types, :class:`Table`, :func:`read_table`;
* one module per table: :mod:`~propeval.settings.core` (``[tool.propeval]``),
  :mod:`~propeval.settings.dedup`, :mod:`~propeval.settings.groups`, :mod:`~propeval.settings.judge`
  (with its endpoints), :mod:`~propeval.settings.gates` (with the signers),
  :mod:`~propeval.settings.difficulty`, :mod:`~propeval.settings.release`;
* :mod:`~propeval.settings.project`: :class:`ProjectSettings` and :func:`read_settings`, every table;
* :mod:`~propeval.settings.docs`: :func:`render_docs`.

Every name is importable from here (``from propeval.settings import DedupSettings``).

Why not pydantic: it is not a dependency of the base install, its import costs 80-150 ms on every
hook call (``check``), and its errors would have to be translated into these anyway.

Hostile-input guards (size cap, 4,300-digit integers, deep nesting) sit in :mod:`propeval.config`,
where the TOML is parsed. This package imports nothing heavy.
"""

from __future__ import annotations

from propeval.settings.core import CoreSettings
from propeval.settings.dedup import (
    DEFAULT_BACKEND,
    DEFAULT_SEMANTIC,
    DEFAULT_THREADS,
    DedupSettings,
)
from propeval.settings.difficulty import DifficultySettings
from propeval.settings.docs import render_docs
from propeval.settings.gates import GATE_MODES, GATES, THRESHOLDS, GateSettings, read_signers
from propeval.settings.groups import (
    DEFAULT_CUES,
    DEFAULT_DRIFT_THRESHOLD,
    DEFAULT_LANGUAGES,
    DRIFT_ENCODERS,
    ClaimKinds,
    GroupsSettings,
    read_groups,
)
from propeval.settings.judge import (
    DEFAULT_ENDPOINTS,
    REASONING_EFFORTS,
    RESPONSE_FORMATS,
    RUBRICS_DIR_MOVED,
    RUNS_DIR_MOVED,
    THINKING,
    Endpoint,
    JudgeSettings,
    Prices,
    Retry,
    check_url,
    is_loopback,
    optional_sampling,
    read_endpoints,
    read_judge,
)
from propeval.settings.project import DEFAULT_SOURCE, SUBTABLES, TABLES, ProjectSettings, read_settings
from propeval.settings.release import ReleaseSettings
from propeval.settings.table import (
    Boolean,
    Integer,
    ListMap,
    Number,
    Pair,
    PairRanges,
    PairThresholds,
    T,
    Table,
    Text,
    TextList,
    ValueType,
    Where,
    derived,
    key,
    language_pair,
    primary_subtag,
    read_table,
    unknown_key,
)

__all__ = [
    "DEFAULT_BACKEND",
    "DEFAULT_CUES",
    "DEFAULT_DRIFT_THRESHOLD",
    "DEFAULT_ENDPOINTS",
    "DEFAULT_LANGUAGES",
    "DEFAULT_SEMANTIC",
    "DEFAULT_SOURCE",
    "DEFAULT_THREADS",
    "DRIFT_ENCODERS",
    "GATES",
    "GATE_MODES",
    "REASONING_EFFORTS",
    "RESPONSE_FORMATS",
    "RUBRICS_DIR_MOVED",
    "RUNS_DIR_MOVED",
    "SUBTABLES",
    "TABLES",
    "THINKING",
    "THRESHOLDS",
    "Boolean",
    "ClaimKinds",
    "CoreSettings",
    "DedupSettings",
    "DifficultySettings",
    "Endpoint",
    "GateSettings",
    "GroupsSettings",
    "Integer",
    "JudgeSettings",
    "ListMap",
    "Number",
    "Pair",
    "PairRanges",
    "PairThresholds",
    "Prices",
    "ProjectSettings",
    "ReleaseSettings",
    "Retry",
    "T",
    "Table",
    "Text",
    "TextList",
    "ValueType",
    "Where",
    "check_url",
    "derived",
    "is_loopback",
    "key",
    "language_pair",
    "optional_sampling",
    "primary_subtag",
    "read_endpoints",
    "read_groups",
    "read_judge",
    "read_settings",
    "read_signers",
    "read_table",
    "render_docs",
    "unknown_key",
]
