"""``[tool.propeval.release]``: the dataset card of ``propeval export``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

from propeval.settings.judge import RUBRICS_DIR_MOVED, RUNS_DIR_MOVED
from propeval.settings.table import Integer, Table, Text, TextList, Where, derived, key

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def _ledger_moved(name: str) -> str:
    return (
        f"moved: every ledger record lies under [tool.propeval.gates] ledger_dir (<ledger_dir>/{name}), the one "
        "place ledger paths come from; delete it here (and move the file there if it lay elsewhere)"
    )


# The release's former ledger keys: refused, each with where its record lives now.
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
    hub_id: str = key(
        Text(),
        "",
        'the Hugging Face Hub dataset the release is published as ("owner/name"): the card loads it by this id '
        'and cites its page; "": the card loads the release from its folder',
    )
    authors: tuple[str, ...] = key(TextList(), (), 'the citation\'s authors, one name each; []: "<name> contributors"')
    year: int = key(
        Integer(lo=0, hi=9999), 0, "the citation's year; 0: the year of the commit the release is built from"
    )
    url: str = key(
        Text(),
        "",
        "the citation's URL (http or https); \"\": the Hub page of hub_id, else the repository's `origin` "
        "remote, else none (export notes it)",
    )
    rubrics_dir: str = derived("rubrics", "[tool.propeval.judge] rubrics_dir")
    runs_dir: str = derived("runs", "[tool.propeval.judge] runs_dir")

    def validate(self, where: Where) -> None:
        if self.hub_id and not _HUB_ID.fullmatch(self.hub_id):
            raise where.at("hub_id").error(f'= "{self.hub_id}" must be a Hub dataset id "owner/name"')
        if self.url:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
                raise where.at("url").error(f'= "{self.url}" must be an http(s) URL without a user name or password')
