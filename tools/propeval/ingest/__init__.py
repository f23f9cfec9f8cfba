"""``propeval import``: claims and items from a release folder, a CPE-layout file, or any CSV/JSONL.

Modules: :mod:`~propeval.ingest.table` (reading rows, each located), :mod:`~propeval.ingest.mapping`
(columns -> fields, the CPE vocabulary), the two importers :mod:`~propeval.ingest.from_table` and
:mod:`~propeval.ingest.from_release` (rows -> a :mod:`~propeval.ingest.plan` of files),
:mod:`~propeval.ingest.staging` (render, stage, validate, move into place) and
:mod:`~propeval.ingest.overlap` (``propeval overlap``: near-duplicates of an external dataset).
"""

from propeval.ingest.from_table import Options, guess_language
from propeval.ingest.mapping import TARGETS, ColumnMap, load_mapping, parse_pairs
from propeval.ingest.staging import ImportResult, Validation, import_source, is_release

__all__ = [
    "TARGETS",
    "ColumnMap",
    "ImportResult",
    "Options",
    "Validation",
    "guess_language",
    "import_source",
    "is_release",
    "load_mapping",
    "parse_pairs",
]
