"""The texts dedup compares: active items' prompts and claim facts, as :class:`Unit` records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

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

    @property
    def hash(self) -> str:
        return f"sha256:{self.key}"


def load_units(
    config: Config, settings: DedupSettings, *, facts: bool = True, corpus: Corpus | None = None
) -> tuple[list[Unit], list[Problem]]:
    """Active items' prompts, then (optionally) every claim fact, in a stable order, plus the
    problems of files that did not load. From ``corpus`` when a caller has it loaded already (a
    Workspace's: ``propeval run`` and ``ci`` read each file once); else unchanged files come from
    the record cache (:mod:`propeval.dedup.records`) in the dedup cache folder."""
    from propeval.dedup.records import load_records, records_of_corpus

    if corpus is not None:
        # the record cache still serves: unchanged files' texts are not normalised and hashed again
        records = records_of_corpus(corpus, settings.cache_folder(config.root))
        return units_of_records(records.claims, records.items, facts=facts), records.problems
    records = load_records(config.root, config.questions, settings.cache_folder(config.root))
    return units_of_records(records.claims, records.items, facts=facts), records.problems


def units_of_records(
    claims: Sequence[dict[str, Any]], items: Sequence[dict[str, Any]], *, facts: bool = True
) -> list[Unit]:
    """Units from :func:`propeval.dedup.records.record_of` records; the first file with an id
    keeps it, as in :class:`propeval.corpus.Corpus`."""
    claim_by_id: dict[str, dict[str, Any]] = {}
    for c in claims:
        claim_by_id.setdefault(c["id"], c)
    item_by_id: dict[str, dict[str, Any]] = {}
    for i in items:
        item_by_id.setdefault(i["id"], i)
    out: list[Unit] = []
    for iid in sorted(item_by_id):
        item = item_by_id[iid]
        if not item["active"] or not item["prompt"].strip():
            continue
        claim = claim_by_id.get(item["claim_id"])
        if claim is not None and claim.get("draft"):
            continue  # a draft claim's items are not in the corpus yet
        out.append(
            make_unit(
                iid,
                "item",
                item["claim_id"],
                item["prompt"],
                item["path"],
                item["line"],
                item["col"],
                item["language"],
                claim["source_url"] if claim else "",
                claim["anchor"] if claim else "",
                translation_of=str(item.get("translation_of") or ""),
                normalised=item.get("norm"),
            )
        )
    if facts:
        for cid in sorted(claim_by_id):
            claim = claim_by_id[cid]
            if claim.get("draft"):
                continue
            for fid, text, line, col, *norm in claim["facts"]:
                if not text.strip():
                    continue
                out.append(
                    make_unit(
                        f"{cid}/{fid}",
                        "fact",
                        cid,
                        text,
                        claim["path"],
                        line,
                        col,
                        "",
                        claim["source_url"],
                        claim["anchor"],
                        str(claim.get("claim_kind", "")),
                        normalised=norm or None,
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
    normalised: Sequence[str] | None = None,
) -> Unit:
    """A Unit; ``normalised`` is ``[normalised text, its key]`` when a record cache holds them
    (:func:`propeval.textnorm.normalised`), else they are computed here."""
    norm, key = normalised if normalised else textnorm.normalised(text)
    return Unit(
        uid, kind, claim_id, text, path, line, col, language, source_url, anchor, norm, key, claim_kind, translation_of
    )
