"""A release folder that ``propeval export`` wrote -> the claim and item files an import would write.

Ids, claims, facts and markers are taken as they stand, so export -> import -> export is
byte-identical. Reading the folder and checking its checksums is :mod:`propeval.ingest.staging`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from propeval.corpus import CLAIM_FILE, content_hash
from propeval.ingest.plan import Plan, Planned, claim_title, formula_problem
from propeval.ingest.table import Row
from propeval.names import CLAIM_ID, ITEM_ID
from propeval.result import Problem, Severity

TOMBSTONE_PROMPT = "(not in the release: this item was retired before export; only its id, claim and reason are known)"

_RELEASE_CLAIM = ("claim_id", "claim_kind", "required_facts", "fact_ids", "source_url", "anchor", "categories")
_RELEASE_ITEM = ("id", "prompt", "language", "framing", "question_type")


def _release_claim(row: Row) -> dict[str, Any]:
    f = row.fields
    data: dict[str, Any] = {
        "id": f["claim_id"],
        "kind": f["claim_kind"],
        "title": f.get("claim_title"),
        "facts": [{"id": i, "text": t} for i, t in zip(f["fact_ids"], f["required_facts"], strict=False)],
        "source_url": f["source_url"],
    }
    if f.get("source_date") is not None:
        data["source_date"] = f["source_date"]
    data["anchor"] = f["anchor"]
    data["categories"] = f["categories"]
    data["official_frame_markers"] = [
        {"text": m.get("text"), "language": m.get("language")}
        for m in f.get("frame_markers") or []
        if isinstance(m, dict)
    ]
    for name in ("narrative", "actor"):
        if f.get(name) is not None:
            data[name] = f[name]
    return data


def plan_release(items: Sequence[Row], tombstones: Sequence[Row]) -> Plan:
    """The files of a release: ids as they stand, claims rebuilt from their items' rows."""
    plan = Plan(rows=len(items) + len(tombstones))
    claims: dict[str, tuple[dict[str, Any], Row]] = {}
    ids: dict[str, Row] = {}
    for row in items:
        if _release_row_ok(row, ids, plan):
            _plan_release_item(row, claims, plan)
    for row in tombstones:
        f = row.fields
        if not _id_ok(row, "id", ITEM_ID, ids, plan) or not _id_ok(row, "claim_id", CLAIM_ID, None, plan):
            continue
        if f["claim_id"] not in claims:
            plan.problems.append(
                _warning(
                    row.problem(
                        "claim_id",
                        "import-tombstone",
                        f"{f['id']} was retired from claim {f['claim_id']}, which has no active item in the "
                        "release, so the claim's facts are not in it; the tombstone is not imported",
                        "reserve the id by hand if the claim is ever recreated",
                    )
                )
            )
            continue
        reason = f.get("retired_reason")
        item = {
            "id": f["id"],
            "claim_id": f["claim_id"],
            "language": "und",
            "framing": "neutral",
            "question_type": "named_fact",
            "prompt": TOMBSTONE_PROMPT,
            "status": "retired",
            "retired_reason": reason if isinstance(reason, str) and reason.strip() else "retired before export",
            "notes": "imported from a release's tombstones.jsonl: language, framing, question type and prompt "
            "are not in a release",
        }
        plan.files.append(Planned(f["claim_id"], f"{f['id']}.yaml", item, row, {"retired_reason": "retired_reason"}))
    return plan


def _release_row_ok(row: Row, ids: dict[str, Row], plan: Plan) -> bool:
    """Whether a release row has every field, valid ids and facts; each problem goes to ``plan``."""
    f = row.fields
    missing = [k for k in (*_RELEASE_ITEM, *_RELEASE_CLAIM) if k not in f]
    if missing:
        plan.problems.append(
            row.problem(
                missing[0], "import-row", f"a release row needs {', '.join(missing)}", "export the release again"
            )
        )
        return False
    if not _id_ok(row, "id", ITEM_ID, ids, plan) or not _id_ok(row, "claim_id", CLAIM_ID, None, plan):
        return False
    if not isinstance(f["fact_ids"], list) or not isinstance(f["required_facts"], list):
        plan.problems.append(row.problem("fact_ids", "import-row", "fact_ids and required_facts must be lists"))
        return False
    if len(f["fact_ids"]) != len(f["required_facts"]):
        plan.problems.append(row.problem("fact_ids", "import-row", "fact_ids and required_facts differ in length"))
        return False
    for name in ("prompt", "anchor"):
        if isinstance(f[name], str):
            bad = formula_problem(row, name, f[name])
            if bad is not None:
                plan.problems.append(bad)
    return True


def _plan_release_item(row: Row, claims: dict[str, tuple[dict[str, Any], Row]], plan: Plan) -> None:
    """Plan a release row's item, and its claim the first time the claim is seen (a later row that
    disagrees on the claim's fields is a problem)."""
    f = row.fields
    claim = _release_claim(row)
    cid = claim["id"]
    if cid in claims:
        first_data, first = claims[cid]
        if first_data != claim:
            diff = sorted(k for k in {*claim, *first_data} if claim.get(k) != first_data.get(k))
            plan.problems.append(
                row.problem(
                    diff[0] if diff[0] in f else "claim_id",
                    "import-group",
                    f"claim {cid}'s {', '.join(diff)} differ from row {first.number}'s",
                    "rows of one claim carry the same claim fields; export the release again",
                )
            )
            return
    else:
        claims[cid] = (claim, row)
        if claim["title"] is None:
            claim["title"] = claim_title(str(claim["anchor"]), str(claim["source_url"]))
            plan.notes.append(
                f"{cid}: the release has no claim_title (an older export); the title is made up from the anchor"
            )
        _hash_check(row, "claim_hash", claim, plan)
        plan.files.append(Planned(cid, CLAIM_FILE, claim, row, _RELEASE_CLAIM_SOURCES))
    item: dict[str, Any] = {k: f[k] for k in ("id", "claim_id", "language", "framing", "question_type", "prompt")}
    if f.get("translation_of") is not None:
        item["translation_of"] = f["translation_of"]
    item["status"] = "active"
    _hash_check(row, "item_hash", item, plan)
    plan.files.append(Planned(cid, f"{f['id']}.yaml", item, row, {k: k for k in item}))


_RELEASE_CLAIM_SOURCES = {
    "id": "claim_id",
    "kind": "claim_kind",
    "title": "claim_title",
    "facts": "required_facts",
    "official_frame_markers": "frame_markers",
    **{k: k for k in ("source_url", "source_date", "anchor", "categories", "narrative", "actor")},
}


def _warning(p: Problem) -> Problem:
    from dataclasses import replace

    return replace(p, severity=Severity.WARNING)


def _id_ok(row: Row, name: str, pattern: Any, seen: dict[str, Row] | None, plan: Plan) -> bool:
    value = row.fields.get(name)
    if not isinstance(value, str) or not pattern.fullmatch(value):
        plan.problems.append(
            row.problem(
                name,
                "import-id",
                f"{value!r} is not a propeval {'claim' if pattern is CLAIM_ID else 'item'} id",
                "a release's ids look like c0001 and i0001",
            )
        )
        return False
    if seen is not None:
        if value in seen:
            plan.problems.append(
                row.problem(
                    name, "import-id", f"id {value} is also row {seen[value].number}'s", "give every row its own id"
                )
            )
            return False
        seen[value] = row
    return True


def _hash_check(row: Row, name: str, data: dict[str, Any], plan: Plan) -> None:
    given = row.fields.get(name)
    if given is not None and given != content_hash(data):
        plan.problems.append(
            _warning(
                row.problem(
                    name,
                    "import-hash",
                    f"the file import writes does not hash to the release's {name}: the original held fields a "
                    "release does not carry (notes), so a new export will differ in this row",
                )
            )
        )
