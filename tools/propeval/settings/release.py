"""``[tool.propeval.release]``: the dataset card of ``propeval export``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from propeval.settings.judge import RUBRICS_DIR_MOVED, RUNS_DIR_MOVED
from propeval.settings.table import Table, Text, TextList, derived, key


def _ledger_moved(name: str) -> str:
    return (
        f"moved: every ledger record lies under [tool.propeval.gates] ledger_dir (<ledger_dir>/{name}), the one "
        "place ledger paths come from; delete it here (and move the file there if it lay elsewhere)"
    )


# The release's former ledger keys (#36): some commands read them and others did not.
LEDGER_MOVED = {
    "dedup_report": _ledger_moved("dedup.json"),
    "difficulty_ledger": _ledger_moved("difficulty.json"),
    "judge_ledger": _ledger_moved("judge/<rubric>.json"),
}


@dataclass(frozen=True)
class ReleaseSettings(Table):
    NAME = "release"
    DOC = (
        "`propeval export`: the dataset card. Its optional inputs (the dedup record, the difficulty bands, the "
        "gate records) are read from `[tool.propeval.gates] ledger_dir`, each only when present."
    )
    MOVED: ClassVar[dict[str, str]] = {"runs_dir": RUNS_DIR_MOVED, "rubrics_dir": RUBRICS_DIR_MOVED, **LEDGER_MOVED}

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
    rubrics_dir: str = derived("rubrics", "[tool.propeval.judge] rubrics_dir")
    runs_dir: str = derived("runs", "[tool.propeval.judge] runs_dir")
