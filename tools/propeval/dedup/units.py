"""The texts dedup compares: active items' prompts and claim facts, as :class:`Unit` records."""

from __future__ import annotations

from typing import NamedTuple

from propeval import textnorm
from propeval.config import Config
from propeval.corpus import Corpus
from propeval.result import Problem
from propeval.settings import DedupSettings


class Unit(NamedTuple):
    """One text that takes part in the comparison: an item's prompt or one claim fact.

    A named tuple, not a frozen dataclass: a commit's hook makes 30k of them, and a frozen
    dataclass sets each of its 14 fields through ``object.__setattr__`` (6x the time)."""

    id: str  # item id, or "<claim_id>/<fact_id>"
    kind: str  # "item" | "fact"
    claim_id: str
    text: str
    path: str
    line: int
    col: int
    language: str
    source_url: str
    anchor: str
    norm: str
    key: str  # sha256 hex of the normalised text
    claim_kind: str = ""  # the claim's kind (censorship, narrative, audit), for facts
    translation_of: str = ""  # an item's source item (one claim), when it translates one
    framing: str = ""  # an item's framing and question type: what `propeval move` needs to match
    question_type: str = ""

    @property
    def hash(self) -> str:
        return f"sha256:{self.key}"


def load_units(
    config: Config, settings: DedupSettings, *, facts: bool = True, corpus: Corpus | None = None
) -> tuple[list[Unit], list[Problem]]:
    """Active items' prompts, then (optionally) every claim fact, in a stable order, plus the
    problems of files that did not load: from ``corpus`` when a caller has it loaded already (a
    Workspace's: ``propeval run`` and ``ci`` read each file once), else from the corpus loaded now
    (through the load cache, which keeps each unchanged file's compared texts)."""
    if corpus is None:
        from propeval.corpus import load_corpus

        corpus = load_corpus(config)
    return units_of_corpus(corpus, facts=facts), list(corpus.problems)


def units_of_corpus(corpus: Corpus, *, facts: bool = True) -> list[Unit]:
    """The units of the texts the corpus compares (:meth:`propeval.corpus.Corpus.compared`): each
    item's prompt, then each claim's facts, skipping empty texts."""
    items, claims = corpus.compared()
    out: list[Unit] = []
    for item in items:
        for _, text, line, col, norm, key in item.texts:
            if not text.strip():
                continue
            claim = corpus.claims.get(item.claim_id)
            out.append(
                Unit(
                    item.id,
                    "item",
                    item.claim_id,
                    text,
                    item.doc.relpath,
                    line,
                    col,
                    item.language,
                    claim.source_url if claim else "",
                    str(claim.doc.get("anchor", "")) if claim else "",
                    norm,
                    key,
                    "",
                    item.translation_of or "",
                    item.framing,
                    item.question_type,
                )
            )
    if facts:
        for claim in claims:
            source_url, anchor, kind = claim.source_url, str(claim.doc.get("anchor", "")), claim.kind
            for fid, text, line, col, norm, key in claim.texts:
                if text.strip():
                    out.append(
                        Unit(
                            f"{claim.id}/{fid}",
                            "fact",
                            claim.id,
                            text,
                            claim.doc.relpath,
                            line,
                            col,
                            "",
                            source_url,
                            anchor,
                            norm,
                            key,
                            kind,
                        )
                    )
    return out


def make_unit(
    uid: str,
    kind: str,
    claim_id: str,
    text: str,
    path: str,
    line: int,
    col: int,
    language: str,
    source_url: str,
    anchor: str,
    claim_kind: str = "",
    *,
    translation_of: str = "",
) -> Unit:
    """A Unit of a text from outside the corpus (an external dataset's, a calibration file's)."""
    norm, key = textnorm.normalised(text)
    return Unit(
        uid, kind, claim_id, text, path, line, col, language, source_url, anchor, norm, key, claim_kind, translation_of
    )
