"""``propeval import``: claims and items from a release folder, a CPE-layout file, or any CSV/JSONL.

Modules: :mod:`~propeval.ingest.table` (reading rows, each located), :mod:`~propeval.ingest.mapping`
(columns -> fields, the CPE vocabulary), :mod:`~propeval.ingest.build` (rows -> planned files),
:mod:`~propeval.ingest.run` (render, stage, validate, move into place) and
:mod:`~propeval.ingest.overlap` (``propeval overlap``: near-duplicates of an external dataset).
"""

from propeval.ingest.build import Options, guess_language
from propeval.ingest.mapping import TARGETS, ColumnMap, load_mapping, parse_pairs
from propeval.ingest.run import ImportResult, Validation, import_source, is_release

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
