"""Ids name their files, are unique, and point where they should.

* an item's ``id`` equals its file name, and a claim's ``id`` equals its folder;
* ids are unique across the corpus;
* an item's ``claim_id`` equals its folder, and that claim exists;
* fact ids are unique within a claim.

Failing (file ``questions/c0001/i0002.yaml``)::

    id: i0003

gives ``[ids] id 'i0003' does not match the file name i0002.yaml; rename the file or fix the id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.corpus import CLAIM_FILE
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "ids"
RULE = Rule(
    ID,
    "check",
    description="ids match file/folder names, are unique; claim_id names a claim",
    wrong="an id does not match its file or folder, is used twice, or `claim_id` names no claim",
    fix="rename the file or fix the id",
    draft=True,
)


def check(ctx: Context) -> Iterator[Problem]:
    corpus = ctx.corpus
    first_seen: dict[str, str] = {}

    for claim in corpus.all_claims:
        doc = claim.doc
        cid = doc.get("id")  # from the head of a cached file: its data stays packed
        if isinstance(cid, str):
            if cid != claim.folder:
                yield doc.problem(
                    "/id",
                    RULE,
                    f"claim id {cid!r} does not match its folder {claim.folder!r}; rename the folder or fix the id",
                )
            if cid in first_seen:
                yield doc.problem("/id", RULE, f"id {cid!r} is already used by {first_seen[cid]}; ids are unique")
            else:
                first_seen[cid] = doc.relpath
        if not ctx.wanted(doc):
            continue  # fact ids are unique within their claim: only a file the run reports on
        seen_facts: dict[str, int] = {}
        for n, fact in enumerate(doc.data.get("facts") or []):
            fid = fact.get("id") if isinstance(fact, dict) else None
            if isinstance(fid, str):
                if fid in seen_facts:
                    yield doc.problem(
                        f"/facts/{n}/id",
                        RULE,
                        f"fact id {fid!r} is used twice in this claim "
                        f"(also /facts/{seen_facts[fid]}); give each fact its own id",
                    )
                seen_facts.setdefault(fid, n)

    for item in corpus.all_items:
        doc = item.doc
        iid = doc.get("id")
        stem = doc.stem
        if isinstance(iid, str):
            if iid != stem:
                yield doc.problem(
                    "/id",
                    RULE,
                    f"id {iid!r} does not match the file name {doc.path.name}; rename the file or fix the id",
                )
            if iid in first_seen:
                yield doc.problem("/id", RULE, f"id {iid!r} is already used by {first_seen[iid]}; ids are unique")
            else:
                first_seen[iid] = doc.relpath
        cid = doc.get("claim_id")
        if isinstance(cid, str):
            if cid != item.folder:
                yield doc.problem(
                    "/claim_id",
                    RULE,
                    f"claim_id {cid!r} does not match the folder {item.folder!r}; "
                    "move the file into its claim's folder or fix claim_id",
                )
            elif cid not in corpus.claims and f"{item.doc.relpath.rsplit('/', 1)[0]}/{CLAIM_FILE}" not in corpus.files:
                yield doc.problem(
                    "/claim_id",
                    RULE,
                    f"claim {cid!r} does not exist; add questions/{cid}/{CLAIM_FILE} "
                    "(propeval new claim) or fix claim_id",
                )
