"""Blinded sheets for a second rater: a seeded sample with the model hidden, and its key.

`agree sample` draws the rows (:func:`blind_sample`) and writes a sheet and a separate key
(:func:`write_sheet`); `agree unblind` puts the filled sheet's labels back under the unit ids
(:func:`unblind`), ready for `propeval agree`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.errors import UsageError
from propeval.fsutil import atomic_write
from propeval.loader import LoadError, dumps_json, load_written
from propeval.result import Problem

MAX_KEY_BYTES = 1 << 30  # a key holds a few ids per sampled row; a source file is capped at this size too
HIDDEN_FIELDS = ("model", "judge_model", "base_url", "run_id", "raw", "verdict", "reason")


def sample_rows(rows: Sequence[dict[str, Any]], *, fraction: float, seed: int) -> list[int]:
    """Indices of a seeded random ``fraction`` of ``rows`` (at least one), in shuffled order."""
    if not 0 < fraction <= 1:
        raise UsageError(f"--fraction must be in (0, 1], not {fraction}")
    rng = random.Random(seed)
    k = max(1, round(fraction * len(rows))) if rows else 0
    picked = rng.sample(range(len(rows)), k)
    rng.shuffle(picked)
    return picked


@dataclass
class Sheet:
    """A blinded sheet for a second rater and the key that maps it back."""

    rows: list[dict[str, Any]]
    key: dict[str, Any]


def blind_sample(
    rows: Sequence[dict[str, Any]],
    *,
    fields: Sequence[str],
    fraction: float,
    seed: int,
    show: Sequence[str] = ("prompt", "answer", "language"),
    id_fields: Sequence[str] = ("item_id", "model"),
    source: str = "",
) -> Sheet:
    """Pick a seeded ``fraction`` of ``rows``, shuffle them, hide who answered, blank the labels.

    Sheet rows carry only ``row`` (a fresh id), the ``show`` fields and the blank ``fields``. The
    key maps each row id to the source line's ``id_fields`` and must be kept away from the rater.
    """
    leaked = sorted(set(show) & {*HIDDEN_FIELDS, *id_fields, *fields})
    if leaked:
        raise UsageError(f"--show must not reveal {leaked}: they identify the model or hold the labels")
    picked = sample_rows(rows, fraction=fraction, seed=seed)
    width = max(3, len(str(len(picked))))
    out_rows: list[dict[str, Any]] = []
    key_rows: dict[str, Any] = {}
    for n, idx in enumerate(picked, start=1):
        rid = f"r{n:0{width}d}"
        src = rows[idx]
        out_rows.append({"row": rid, **{f: src.get(f) for f in show}, **{f: None for f in fields}})
        key_rows[rid] = {f: src.get(f) for f in id_fields}
    key = {"source": source, "seed": seed, "fraction": fraction, "fields": list(fields), "rows": key_rows}
    return Sheet(out_rows, key)


def default_key_path(sheet_path: Path) -> Path:
    """Where a sheet's key goes when no ``--key`` is given: the user's data folder, outside any
    repository (``keys/<sheet>-<hash of the sheet's path>.key.json``), so it is never committed."""
    import hashlib

    from platformdirs import user_data_dir

    digest = hashlib.sha256(str(sheet_path.resolve()).encode("utf-8")).hexdigest()[:12]
    return Path(user_data_dir("propeval")) / "keys" / f"{sheet_path.stem}-{digest}.key.json"


def write_sheet(sheet: Sheet, sheet_path: Path, key_path: Path) -> None:
    """Write the sheet (JSON Lines) and its key (JSON) to two different files."""
    if sheet_path.resolve() == key_path.resolve():
        raise UsageError("the key file must be a different file from the sheet")
    atomic_write(sheet_path, "".join(dumps_json(r) + "\n" for r in sheet.rows))
    atomic_write(key_path, json_pretty(sheet.key))


def unblind(sheet_path: Path, key_path: Path, *, root: Path | None = None) -> list[dict[str, Any]]:
    """The filled sheet's labels under the original unit ids, ready for ``propeval agree``.

    The sheet was filled by a person and is read by the strict loader; the key was written by
    :func:`write_sheet` and kept by whoever drew the sample, so it is read with the standard parser.
    """
    key = load_written(key_path, root=root, max_bytes=MAX_KEY_BYTES)
    rows = key.get("rows")
    fields = key.get("fields")
    if not isinstance(rows, dict) or not isinstance(fields, list):
        raise LoadError(Problem(key_path.as_posix(), 1, 1, "labels", "not a sheet key: it needs 'rows' and 'fields'"))
    out = []
    from propeval.review.rating import label_rows

    for line, row in label_rows(sheet_path, root):
        rid = row.get("row")
        if not isinstance(rid, str) or rid not in rows:
            raise LoadError(
                Problem(sheet_path.as_posix(), line, 1, "labels", f"row {rid!r} is not in the key; wrong key file?")
            )
        out.append({**rows[rid], **{f: row.get(f) for f in fields}})
    return out


def json_pretty(data: Any) -> str:
    """Readable, stable JSON for files people review in a diff."""
    import json

    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
