"""``[tool.propeval.release]``: the dataset card of ``propeval export`` and the ledgers it shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from propeval.settings.judge import RUBRICS_DIR_MOVED, RUNS_DIR_MOVED
from propeval.settings.table import Table, Text, TextList, derived, key


@dataclass(frozen=True)
class ReleaseSettings(Table):
    NAME = "release"
    DOC = "`propeval export`: the dataset card and its optional inputs (each read only when present)."
    MOVED: ClassVar[dict[str, str]] = {"runs_dir": RUNS_DIR_MOVED, "rubrics_dir": RUBRICS_DIR_MOVED}

    name: str = key(Text(nonempty=True), "propeval", "the dataset's name in the card title and HF pretty_name")
    license: str = key(Text(nonempty=True), "mit", "the card's license (a Hugging Face license id)")
    task_categories: tuple[str, ...] = key(
        TextList(nonempty=True), ("question-answering", "text-generation"), "Hugging Face task categories"
    )
    version: str = key(Text(nonempty=True), "0.1.0", "the dataset's version, in the card's front matter and citation")
    tags: tuple[str, ...] = key(
        TextList(nonempty=True),
        ("censorship", "propaganda", "llm-evaluation", "factuality", "multilingual"),
        "Hugging Face tags of the card",
    )
    dedup_report: str = key(
        Text(nonempty=True), "ledger/dedup.json", "the dedup record (propeval dedup --record) the card shows"
    )
    difficulty_ledger: str = key(Text(nonempty=True), "ledger/difficulty.json", "difficulty bands per item")
    judge_ledger: str = key(Text(nonempty=True), "ledger/judge", "one <rubric>.json judge-gate record per rubric")
    rubrics_dir: str = derived("rubrics", "[tool.propeval.judge] rubrics_dir")
    runs_dir: str = derived("runs", "[tool.propeval.judge] runs_dir")
