"""The reviewed-pair allowlist (``dedup-allowlist.yaml``): read it, write an entry, find stale ones.

An entry binds two ids to the hashes of their texts at review; it applies while both texts are
unchanged. Entries are read through the strict loader, since people write them.
"""

from __future__ import annotations

import datetime as _dt
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from propeval.config import Config
from propeval.dedup.settings import Settings
from propeval.dedup.units import Unit, load_units
from propeval.errors import UsageError
from propeval.loader import LoadError, load_file
from propeval.result import Problem, Severity

ALLOWLIST_FIELDS = ("a", "a_hash", "b", "b_hash", "reviewer", "reason", "date")
BOILERPLATE_FIELDS = ("fact", "fact_hash", "reviewer", "reason", "date")


@dataclass
class AllowEntry:
    a: str
    a_hash: str
    b: str
    b_hash: str
    reviewer: str
    reason: str
    date: str
    line: int = 0


@dataclass
class BoilerplateEntry:
    """A fact reviewed and kept though many claims require a near-duplicate of it; it applies
    while the fact's text is unchanged (``fact_hash``)."""

    fact: str
    fact_hash: str
    reviewer: str
    reason: str
    date: str
    line: int = 0


def load_boilerplate_allowlist(path: Path, root: Path) -> tuple[list[BoilerplateEntry], list[Problem]]:
    """The ``boilerplate:`` entries of the allowlist file (its problems are reported by
    :func:`load_allowlist`, with the pairs')."""
    if not path.is_file():
        return [], []
    try:
        doc = load_file(path, root=root)
    except LoadError:
        return [], []
    raw = doc.data.get("boilerplate")
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [doc.problem("/boilerplate", "dedup-allowlist", "'boilerplate' must be a list of reviewed facts")]
    out, problems = [], []
    for n, entry in enumerate(raw):
        ptr = f"/boilerplate/{n}"
        ok = isinstance(entry, dict) and set(entry) == set(BOILERPLATE_FIELDS)
        if not ok or not all(isinstance(entry[k], str) and entry[k].strip() for k in BOILERPLATE_FIELDS):
            problems.append(
                doc.problem(
                    ptr,
                    "dedup-allowlist",
                    "each boilerplate entry is a mapping with exactly "
                    + ", ".join(BOILERPLATE_FIELDS)
                    + " (non-empty)",
                )
            )
            continue
        line, _ = doc.locate(ptr)
        out.append(BoilerplateEntry(**{k: str(entry[k]) for k in BOILERPLATE_FIELDS}, line=line))
    return out, problems


def load_allowlist(path: Path, root: Path) -> tuple[list[AllowEntry], list[Problem]]:
    """Entries of the allowlist file (missing file: none). Bad entries are problems, not crashes."""
    if not path.is_file():
        return [], []
    try:
        doc = load_file(path, root=root)
    except LoadError as e:
        return [], [e.problem]
    entries: list[AllowEntry] = []
    problems: list[Problem] = load_boilerplate_allowlist(path, root)[1]
    pairs = doc.data.get("pairs")
    unknown = sorted(set(doc.data) - {"pairs", "boilerplate"})
    if unknown:
        problems.append(
            doc.problem(
                f"/{unknown[0]}",
                "dedup-allowlist",
                f"unknown key {unknown[0]!r}; keep only 'pairs' and 'boilerplate'",
                key=True,
            )
        )
    if pairs is None:
        return entries, problems
    if not isinstance(pairs, list):
        problems.append(doc.problem("/pairs", "dedup-allowlist", "'pairs' must be a list of reviewed pairs"))
        return entries, problems
    for n, raw in enumerate(pairs):
        ptr = f"/pairs/{n}"
        if not isinstance(raw, dict):
            problems.append(
                doc.problem(ptr, "dedup-allowlist", "each entry must be a mapping with " + ", ".join(ALLOWLIST_FIELDS))
            )
            continue
        missing = [k for k in ALLOWLIST_FIELDS if not isinstance(raw.get(k), str) or not raw.get(k, "").strip()]
        extra = sorted(set(raw) - set(ALLOWLIST_FIELDS))
        if missing or extra:
            what = []
            if missing:
                what.append(f"missing or empty: {', '.join(missing)}")
            if extra:
                what.append(f"unknown: {', '.join(extra)}")
            problems.append(
                doc.problem(
                    ptr,
                    "dedup-allowlist",
                    f"allowlist entry {'; '.join(what)}; write entries with `propeval dedup allow A B --reason ...`",
                )
            )
            continue
        line, _ = doc.locate(ptr)
        entries.append(AllowEntry(**{k: str(raw[k]) for k in ALLOWLIST_FIELDS}, line=line))
    return entries, problems


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def add_allow_entry(
    config: Config, a: str, b: str, *, reason: str, reviewer: str, date: str | None = None
) -> tuple[Path, AllowEntry, bool]:
    """Write (or refresh) the allowlist entry for ``a`` and ``b`` with their current text hashes.

    The file is edited round-trip (comments and order kept) and replaced atomically.
    Returns (path, entry, replaced_an_existing_entry).
    """
    from ruamel.yaml import YAML

    from propeval.fsutil import atomic_write

    settings = Settings.from_config(config)
    if a == b:
        raise UsageError("a pair needs two different ids")
    if not reason.strip():
        raise UsageError("--reason must say why the pair is kept")
    units = {u.id: u for u in load_units(config, settings, facts=True)[0]}
    for uid in (a, b):
        if uid not in units:
            raise UsageError(f"{uid!r} is neither an active item id nor a fact id like c0001/f1")
    ua, ub = units[a], units[b]
    if ua.claim_id == ub.claim_id:
        raise UsageError(f"{a} and {b} belong to the same claim {ua.claim_id}; such pairs are never flagged")
    path = config.root / settings.allowlist
    _, problems = load_allowlist(path, config.root)
    if problems:
        p = problems[0]
        raise UsageError(f"{p.path}:{p.line}:{p.col} {p.message}; fix the allowlist first")
    first, second = sorted((ua, ub), key=lambda u: u.id)
    entry = AllowEntry(
        a=first.id,
        a_hash=first.hash,
        b=second.id,
        b_hash=second.hash,
        reviewer=reviewer,
        reason=reason.strip(),
        date=date or _dt.date.today().isoformat(),
    )
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    data = yaml.load(path.read_text(encoding="utf-8")) if path.is_file() else None
    if data is None:
        from ruamel.yaml.comments import CommentedMap

        data = CommentedMap()
        data.yaml_set_start_comment(
            "Near-duplicate pairs reviewed and kept. Written by `propeval dedup allow A B --reason ...`.\n"
            "An entry stops applying when either text changes (its hash no longer matches)."
        )
    if data.get("pairs") is None:
        data["pairs"] = []
    replaced = False
    record = {k: getattr(entry, k) for k in ALLOWLIST_FIELDS}
    for n, old in enumerate(data["pairs"]):
        if pair_key(str(old.get("a")), str(old.get("b"))) == (first.id, second.id):
            data["pairs"][n] = record
            replaced = True
            break
    else:
        data["pairs"].append(record)
    buf = io.StringIO()
    yaml.dump(data, buf)
    atomic_write(path, buf.getvalue())
    return path, entry, replaced


def stale_reviews(
    allow: Mapping[tuple[str, str], AllowEntry],
    units: list[Unit],
    focus: set[int] | None,
    allow_path: str,
) -> list[Problem]:
    """Entries that no longer apply: a text changed since the review, or an id is gone. With a
    ``focus`` (the changed texts), only entries touching it are looked at."""
    by_id = {u.id: u for u in units}
    index_of = {u.id: n for n, u in enumerate(units)}
    out = []
    for key, e in allow.items():
        if focus is not None and not any(uid in index_of and index_of[uid] in focus for uid in key):
            continue
        changed_ids = [uid for uid, h in ((e.a, e.a_hash), (e.b, e.b_hash)) if uid in by_id and by_id[uid].hash != h]
        gone = [uid for uid in key if uid not in by_id]
        if not (changed_ids or gone):
            continue
        why = []
        if changed_ids:
            why.append(f"the text of {' and '.join(changed_ids)} changed since the review on {e.date}")
        if gone:
            why.append(f"{' and '.join(gone)} is no longer an active item or fact")
        out.append(
            Problem(
                allow_path,
                e.line,
                1,
                "dedup-stale-review",
                f"the review of {e.a} / {e.b} no longer applies: {'; '.join(why)}; review the pair again "
                f"and run `propeval dedup allow {e.a} {e.b} --reason ...`, or delete the entry",
                severity=Severity.WARNING,
            )
        )
    return out
