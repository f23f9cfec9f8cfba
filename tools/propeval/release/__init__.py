"""Release export, dataset card and corpus statistics.

``export_release`` writes a release folder that is reproducible byte for byte from the repository:

    items.jsonl        one row per active item, in the Censorship & Propaganda Eval release format
                       plus our own fields (language, framing, claim_id, fact_ids, difficulty_band, ...)
    tombstones.jsonl   one row per retired item: id, claim_id, retired_reason
    rubrics/<name>/    the judge rubrics, copied as they are
    README.md          a dataset card with Hugging Face YAML front matter and generated tables
    SHA256SUMS         the sha256 of every other file, in ``sha256sum -c`` format

Nothing in it depends on the clock: rows are sorted by id, JSON keys are sorted, and the only
provenance is the git commit the corpus was read at. The folder is built next to its destination
and renamed into place, so a reader never sees half a release.

The optional inputs (``ledger/difficulty.json``, the dedup report, ``ledger/judge/*.json``) are
written by other commands. Each is read defensively: a missing file means "not run", and a file
that cannot be understood becomes a warning, never a crash.

Modules: ``settings`` (``[tool.propeval.release]``), ``ledgers`` (the optional ledger inputs),
``inputs`` (the corpus and ledgers, read once), ``rows`` (the two JSONL files), ``stats`` (the
numbers ``propeval stats`` prints), ``card`` with ``templates/card.md.j2`` (the dataset card) and
``export`` (the release folder).
"""

from propeval.difficulty.bands import BANDS
from propeval.release.card import render_card, size_category
from propeval.release.evidence import AnswerabilityEvidence, JudgeEvidence
from propeval.release.export import RELEASE_FILES, SUMS_FILE, ExportResult, export_release
from propeval.release.inputs import ReleaseInputs, load_inputs
from propeval.release.rows import FRAMINGS, QUESTION_DESCRIPTIONS, active_items, item_row, tombstone_rows
from propeval.release.stats import UNBANDED, Stats, compute_stats
from propeval.settings import ReleaseSettings

__all__ = [
    "BANDS",
    "FRAMINGS",
    "QUESTION_DESCRIPTIONS",
    "RELEASE_FILES",
    "SUMS_FILE",
    "UNBANDED",
    "AnswerabilityEvidence",
    "ExportResult",
    "JudgeEvidence",
    "ReleaseInputs",
    "ReleaseSettings",
    "Stats",
    "active_items",
    "compute_stats",
    "export_release",
    "item_row",
    "load_inputs",
    "render_card",
    "size_category",
    "tombstone_rows",
]
