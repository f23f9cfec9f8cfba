"""A claim's completeness table: languages x (framing, question type), and the cells it must fill."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from propeval.corpus import Claim, Corpus, Item
from propeval.langtags import canonical, language_key
from propeval.settings import GroupsSettings, primary_subtag

FRAMINGS = ("neutral", "loaded")
QUESTION_TYPES = ("named_fact", "frame_testing", "closed_exit")
COLUMNS: tuple[tuple[str, str], ...] = tuple((f, q) for f in FRAMINGS for q in QUESTION_TYPES)


@dataclass(frozen=True)
class MissingCell:
    """A cell of a claim's matrix that must be filled, and the item to translate it from."""

    claim_id: str
    language: str
    framing: str
    question_type: str
    source: str | None
    reason: str  # "required" (the kind's languages) or "control" (a loaded item's neutral control)

    @property
    def command(self) -> str:
        cmd = (
            f"propeval new item --claim {self.claim_id} --language {self.language} "
            f"--framing {self.framing} --question-type {self.question_type}"
        )
        return cmd + (f" --translation-of {self.source}" if self.source else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "framing": self.framing,
            "question_type": self.question_type,
            "source": self.source,
            "reason": self.reason,
            "command": self.command,
        }


@dataclass
class ClaimMatrix:
    """One claim's completeness table: languages (rows) x (framing, question type) (columns)."""

    claim_id: str
    kind: str
    title: str
    path: str
    required: tuple[str, ...]
    languages: list[str] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    cells: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    missing: list[MissingCell] = field(default_factory=list)

    def items_at(self, language: str, framing: str, question_type: str) -> list[str]:
        return self.cells.get((language, framing, question_type), [])

    def missing_at(self, language: str, framing: str, question_type: str) -> MissingCell | None:
        for m in self.missing:
            if (m.language, m.framing, m.question_type) == (language, framing, question_type):
                return m
        return None

    def is_required(self, language: str) -> bool:
        return primary_subtag(language) in {primary_subtag(r) for r in self.required}

    @property
    def complete(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "kind": self.kind,
            "title": self.title,
            "path": self.path,
            "required_languages": list(self.required),
            "languages": self.languages,
            "columns": [{"framing": f, "question_type": q} for f, q in self.columns],
            "cells": [
                {"language": lang, "framing": f, "question_type": q, "items": self.items_at(lang, f, q)}
                for lang in self.languages
                for f, q in self.columns
            ],
            "missing": [m.to_dict() for m in self.missing],
            "complete": self.complete,
        }


def lang_key(tag: str) -> str:
    """The row a tag falls in: the one rule for languages (:func:`propeval.langtags.language_key`)."""
    return language_key(tag)


def build_matrix(claim: Claim, items: Iterable[Item], settings: GroupsSettings, corpus: Corpus) -> ClaimMatrix:
    """The completeness table of one claim, with its missing cells and the commands that fill them."""
    active = [i for i in items if i.active]
    required = settings.languages.get(claim.kind, ())
    matrix = ClaimMatrix(claim.id, claim.kind, str(claim.data.get("title", "")), claim.doc.relpath, tuple(required))
    # Rows: each language tag used by an active item (as first written), then required languages
    # that no used tag covers (matched on the primary subtag).
    tags: dict[str, str] = {}
    for item in sorted(active, key=lambda i: i.id):
        # Labelled by the first tag's canonical form: a fix never repeats "--language ru_RU".
        tags.setdefault(lang_key(item.language), canonical(item.language) or lang_key(item.language))
        matrix.cells.setdefault((tags[lang_key(item.language)], item.framing, item.question_type), []).append(item.id)
    used_primary = {primary_subtag(t) for t in tags.values()}
    rows = list(tags.values()) + [r for r in required if primary_subtag(r) not in used_primary]
    req_primary = [primary_subtag(r) for r in required]
    matrix.languages = sorted(
        rows, key=lambda t: (req_primary.index(primary_subtag(t)) if primary_subtag(t) in req_primary else 99, t)
    )

    used = {(i.framing, i.question_type) for i in active}
    needed = set(used)
    if not any(f == "neutral" for f, _ in needed):
        needed.add(("neutral", "named_fact"))

    def neutral_in(p: str) -> bool:
        return any(i.framing == "neutral" and primary_subtag(i.language) == p for i in active)

    for lang in required:
        p = primary_subtag(lang)
        have = {(i.framing, i.question_type) for i in active if primary_subtag(i.language) == p}
        control_reported = not neutral_in(p) and any(primary_subtag(i.language) == p for i in active)
        for f, q in sorted(needed - have, key=COLUMNS.index):
            if f == "neutral" and control_reported:
                continue  # the loaded items' groups-control problems ask for the neutral item first
            row = next((t for t in matrix.languages if primary_subtag(t) == p), lang)
            matrix.missing.append(MissingCell(claim.id, row, f, q, _best_source(active, p, f, q), "required"))
    # A loaded item is scored against a neutral control in its language (any question type).
    for tag in tags.values():
        p = primary_subtag(tag)
        if neutral_in(p) or any(m.language == tag and m.reason == "control" for m in matrix.missing):
            continue
        loaded_types = sorted({i.question_type for i in active if i.framing == "loaded" and i.language == tag})
        if not loaded_types:
            continue
        q, src = _control_source(active, p, loaded_types[0])
        matrix.missing.append(MissingCell(claim.id, tag, "neutral", q, src, "control"))
        needed.add(("neutral", q))
    matrix.columns = [c for c in COLUMNS if c in needed or c in used]
    return matrix


def _best_source(active: Sequence[Item], primary: str, framing: str, qt: str) -> str | None:
    """The item a missing cell should translate: same framing and type, another language.

    An original (no translation_of) beats a translation, English beats other languages, then the lowest id.
    """
    candidates = [
        i for i in active if i.framing == framing and i.question_type == qt and primary_subtag(i.language) != primary
    ]
    if not candidates:
        return None
    best = min(candidates, key=lambda i: (i.translation_of is not None, primary_subtag(i.language) != "en", i.id))
    return best.id


def _control_source(active: Sequence[Item], primary: str, loaded_type: str) -> tuple[str, str | None]:
    """Question type and source of the neutral control to add: the loaded item's type when another
    language has a neutral item of that type, else the type of any neutral item elsewhere."""
    src = _best_source(active, primary, "neutral", loaded_type)
    if src is not None:
        return loaded_type, src
    for q in QUESTION_TYPES:
        src = _best_source(active, primary, "neutral", q)
        if src is not None:
            return q, src
    return "named_fact", None
