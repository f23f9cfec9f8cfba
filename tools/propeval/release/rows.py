"""The rows of ``items.jsonl`` and ``tombstones.jsonl``, and the values their fields take."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from propeval.corpus import Corpus, Item

if TYPE_CHECKING:
    from propeval.release.inputs import ReleaseInputs

QUESTION_DESCRIPTIONS = {
    "named_fact": "named fact",
    "frame_testing": "frame testing",
    "closed_exit": "closed exit",
}
FRAMINGS = ("neutral", "loaded")

# Every column of an items row and its Hugging Face feature type: "string", ["string"] (a list of
# strings) or {"field": "string", ...} inside a list (a list of structs). The Parquet files'
# schema and the card's dataset_info are both made from this one table.
FEATURES: tuple[tuple[str, Any], ...] = (
    ("id", "string"),
    ("prompt", "string"),
    ("required_facts", ["string"]),
    ("question_description", "string"),
    ("categories", ["string"]),
    ("source_url", "string"),
    ("source_date", "string"),
    ("anchor", "string"),
    ("official_frame_markers", ["string"]),
    ("language", "string"),
    ("framing", "string"),
    ("question_type", "string"),
    ("claim_id", "string"),
    ("claim_kind", "string"),
    ("claim_title", "string"),
    ("fact_ids", ["string"]),
    ("frame_markers", [{"language": "string", "text": "string"}]),
    ("translation_of", "string"),
    ("narrative", "string"),
    ("actor", "string"),
    ("difficulty_band", "string"),
    ("item_hash", "string"),
    ("claim_hash", "string"),
)

SPLIT = "test"  # the one split: every item is for evaluation; the card's configs declare it


def data_files(languages: list[str]) -> dict[str, str]:
    """Config name -> its Parquet file: ``default`` (every item), then one per language."""
    return {"default": f"data/{SPLIT}.parquet"} | {lang: f"data/{lang}/{SPLIT}.parquet" for lang in languages}


def active_items(corpus: Corpus) -> list[Item]:
    """Active items whose claim exists, sorted by id."""
    return sorted((i for i in corpus.active_items() if i.claim_id in corpus.claims), key=lambda i: i.id)


def item_row(inputs: ReleaseInputs, item: Item) -> dict[str, Any]:
    """One ``items.jsonl`` row: the CPE release fields, then ours."""
    claim = inputs.corpus.claims[item.claim_id]
    c = claim.data
    facts = claim.facts
    return {
        # Censorship & Propaganda Eval release format
        "id": item.id,
        "prompt": item.prompt,
        "required_facts": [f.text for f in facts],
        "question_description": QUESTION_DESCRIPTIONS.get(item.question_type, item.question_type),
        "categories": [str(x) for x in c.get("categories") or []],
        "source_url": claim.source_url,
        "source_date": str(c["source_date"]) if c.get("source_date") is not None else None,
        "anchor": str(c.get("anchor", "")),
        "official_frame_markers": [text for _, text in claim.markers],
        # propeval's own fields
        "language": item.language,
        "framing": item.framing,
        "question_type": item.question_type,
        "claim_id": item.claim_id,
        "claim_kind": claim.kind,
        "claim_title": str(c.get("title", "")),
        "fact_ids": [f.id for f in facts],
        "frame_markers": [{"language": lang, "text": text} for lang, text in claim.markers],
        "translation_of": item.translation_of,
        "narrative": str(c["narrative"]) if c.get("narrative") is not None else None,
        "actor": str(c["actor"]) if c.get("actor") is not None else None,
        "difficulty_band": inputs.bands.get(item.id),
        "item_hash": item.hash,
        "claim_hash": claim.hash,
    }


def to_jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)


def tombstone_rows(corpus: Corpus) -> list[dict[str, Any]]:
    retired = sorted((i for i in corpus.items.values() if i.status == "retired"), key=lambda i: i.id)
    return [
        {"id": i.id, "claim_id": i.claim_id, "retired_reason": str(i.data.get("retired_reason", ""))} for i in retired
    ]


def to_parquet(rows: Sequence[dict[str, Any]]) -> bytes:
    """The rows as one Parquet file with the :data:`FEATURES` schema.

    The bytes depend only on the rows and the pyarrow version: no pandas metadata, no timestamps.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        from propeval.errors import DependencyError

        raise DependencyError("pyarrow", "stats") from e

    def arrow(t: Any) -> Any:
        if t == "string":
            return pa.string()
        if isinstance(t, list):
            return pa.list_(arrow(t[0]))
        return pa.struct([(k, arrow(v)) for k, v in t.items()])

    schema = pa.schema([(name, arrow(t)) for name, t in FEATURES])
    table = pa.Table.from_pylist([{name: r.get(name) for name, _ in FEATURES} for r in rows], schema=schema)
    import io

    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()
