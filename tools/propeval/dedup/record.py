"""``<ledger_dir>/dedup.json``: the record of the last full dedup run, which the dataset card shows.

``propeval dedup --record`` (and ``propeval run --record``) writes it as a ledger record (``ledger.records``'
format: kind ``dedup``, subject ``corpus``, a digest, and a maintainer's signature when a key is
at hand), at :attr:`propeval.ledger.paths.LedgerPaths.dedup`. Its binding is what the run's result depends on:

* ``corpus_hash``: the content hash of every item's and claim's hash (the texts compared);
* ``allowlist_hash``: the sha256 of the allowlist file (the reviewed pairs);
* ``settings_hash``: the hash of what in ``[tool.propeval.dedup]`` decides which pairs are flagged, resolved
  (:meth:`propeval.settings.DedupSettings.decisive`: the scoring model, each language pair's threshold
  and grey zone, ...), so that upgrading, which adds keys at their defaults, leaves a record current.

``propeval export`` and ``propeval report`` recompute the binding: a record whose binding differs
is shown as **not current** (the card says what changed, and export warns); a record whose
digest or signature does not match is shown as **not checked**. Neither stops an export: the card
states what the evidence is worth instead. A record is re-made by running dedup again, which
costs minutes, not money, so export never re-runs it.

This module imports nothing heavy: export reads the record without the dedup extra.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.corpus import content_hash

if TYPE_CHECKING:
    from propeval.dedup.result import DedupResult
    from propeval.ledger.records import LedgerRecord
    from propeval.settings import DedupSettings
    from propeval.signing import SigningKey
    from propeval.workspace import Workspace

KIND = "dedup"
SUBJECT = "corpus"

# How a maintainer makes the record current (the card, the report and export say it).
RECORD_HINT = "a maintainer records it with `propeval run --record` (or `propeval dedup --record`) and commits it"


def record_path(ws: Workspace) -> Path:
    return ws.ledger_paths.dedup


def binding(ws: Workspace) -> dict[str, Any]:
    """What a dedup result depends on, computed from today's files and config."""
    config, corpus = ws.config, ws.corpus
    settings = config.settings.dedup
    allow = config.root / settings.allowlist
    allow_hash = "sha256:" + hashlib.sha256(allow.read_bytes()).hexdigest() if allow.is_file() else None
    texts = {i.id: i.hash for i in corpus.items.values()} | {c.id: c.hash for c in corpus.claims.values()}
    languages = {i.language for i in corpus.items.values()}
    return {
        "corpus_hash": content_hash(dict(sorted(texts.items()))),
        "allowlist_hash": allow_hash,
        # the resolved settings: a key added with its default, or a threshold written out as the
        # table's own value, leaves a record current; a changed value does not
        "settings_hash": content_hash(settings.decisive(languages)),
    }


def encoder_name(settings: DedupSettings) -> str:
    from propeval.embed.registry import BACKENDS

    return BACKENDS[settings.backend].encoder_name(settings)


def make(ws: Workspace, result: DedupResult, passes: tuple[str, ...]) -> LedgerRecord:
    """The record of a full dedup ``result`` (unsigned; the caller signs it)."""
    from propeval import gitutil
    from propeval.dedup.lexical import lang
    from propeval.ledger.records import make_record
    from propeval.settings import language_pair

    settings = result.settings
    languages = sorted(k for k in result.embedded if k != "und")  # "und": facts, which have their own threshold
    pair_thresholds = {}
    for n, a in enumerate(languages):
        for b in languages[n:]:
            value, source = settings.pair_limit(a, b)
            pair_thresholds[language_pair(a, b)] = {"value": value, "source": source}
    thresholds = {
        "exact": 1.0,
        "lexical": settings.lexical_threshold,
        "fact_semantic": settings.semantic_limit(kind="fact"),
    }
    rows = []
    for name in passes:
        flagged = [p for p in result.pairs if name in p.scores]
        rows.append(
            {
                "name": name,
                "threshold": "per language pair" if name == "semantic" else thresholds[name],
                "found": len(flagged),
                "allowlisted": sum(p.reviewed for p in flagged),
                "unreviewed": sum(not p.reviewed for p in flagged),
            }
        )
    head = gitutil.head_commit(ws.root)
    result_doc = {
        "commit": head[0] if head else None,
        "encoder": encoder_name(settings),
        "passes": rows,
        "pair_thresholds": dict(sorted(pair_thresholds.items())),
        "thresholds": thresholds,
        "thresholds_provenance": result.thresholds_provenance or None,
        "texts": result.units,
        "embedded_by_language": dict(sorted(result.embedded.items())),
        "not_embedded_by_language": dict(sorted(result.not_embedded.items())),
        "pairs": [
            {
                "a": p.a.id,
                "b": p.b.id,
                "languages": [lang(p.a), lang(p.b)],
                "passes": dict(sorted(p.scores.items())),
                "semantic": p.semantic,
                "lexical": p.lexical,
                "allowlisted": p.reviewed,
            }
            for p in result.pairs
        ],
    }
    return make_record(KIND, SUBJECT, binding(ws), result_doc)


def write(ws: Workspace, record: LedgerRecord, key: SigningKey | None) -> Path:
    return ws.ledger.write(KIND, SUBJECT, key.sign(record) if key is not None else record)


def _pairs_of(record: dict[str, Any]) -> set[tuple[str, str]]:
    pairs = record["result"].get("pairs")
    return {(p["a"], p["b"]) for p in _valid_pairs(pairs)}


def differences(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Why the record ``new`` of this run differs from the ``old`` one on disk, one phrase each
    (empty: same corpus, settings and findings, whatever the commit)."""
    from propeval.ledger.records import stale_reasons

    if old is None:
        return ["there is no record yet"]
    out = [_plain(r) for r in stale_reasons(old["binding"], new["binding"])]
    before, after = _pairs_of(old), _pairs_of(new)
    if before != after:
        gained, lost = sorted(after - before), sorted(before - after)
        parts = [f"{len(after)} flagged pair(s) now, {len(before)} recorded"]
        if gained:
            parts.append("new: " + ", ".join(f"{a}~{b}" for a, b in gained[:5]) + (" …" if len(gained) > 5 else ""))
        if lost:
            parts.append("gone: " + ", ".join(f"{a}~{b}" for a, b in lost[:5]) + (" …" if len(lost) > 5 else ""))
        out.append("; ".join(parts))
    rest = {k for k in set(old["result"]) | set(new["result"]) if k not in ("commit", "pairs")}
    changed = sorted(k for k in rest if old["result"].get(k) != new["result"].get(k))
    if before == after and old["result"].get("pairs") != new["result"].get("pairs"):
        changed.append("the pairs' scores")
    if changed and before == after:
        out.append("the recorded figures differ (" + ", ".join(changed) + ")")
    return out


def _plain(reason: str) -> str:
    return (
        reason.replace("corpus_hash changed", "the corpus changed")
        .replace("allowlist_hash changed", "the allowlist changed")
        .replace("settings_hash changed", "[tool.propeval.dedup] changed")
    )


def record_run(
    ws: Workspace, result: DedupResult, passes: tuple[str, ...], *, sign: bool, write_record: bool = True
) -> str:
    """Write the record of a whole-corpus run (signed when ``sign`` and a key is at hand); return a note.

    With ``write_record`` false (``propeval run`` without ``--record``) nothing is written: the
    note says whether the record on disk still stands, and if not, what this run would change and why.
    """
    from propeval.signing import load_key

    record = make(ws, result, passes)
    rel = ws.ledger_paths.dedup_rel
    loaded = ws.ledger.read(KIND, SUBJECT)
    old = loaded.record
    why = (
        differences(old, record.to_json())
        if loaded.problem is None
        else [f"it does not load ({loaded.problem.message})"]
    )
    if not why:
        # Same corpus, settings and findings: the record stands, and the tree stays clean.
        return f"{rel} already records this result (made {old.get('created') if old else '-'}); left as it is"
    if not write_record:
        return (
            f"{rel} not written ({'; '.join(why)}): the report and `propeval export` show it as not current "
            f"until a maintainer records this run with `propeval run --record` (or `propeval dedup --record`) "
            f"and commits {rel}"
        )
    key = load_key(required=False) if sign else None
    write(ws, record, key)
    return f"recorded this run in {rel} ({'signed' if key is not None else 'unsigned'}; {'; '.join(why)})"


@dataclass
class DedupEvidence:
    """The dedup record as the card states it."""

    path: str
    status: str  # current | not current | not checked | not run
    detail: str = ""
    trust: str = "missing"  # signed | unsigned | unknown-key | edited | missing
    signer: str | None = None
    created: str | None = None
    commit: str | None = None
    encoder: str | None = None
    passes: list[dict[str, Any]] = field(default_factory=list)
    pair_thresholds: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def similarities(self) -> list[float]:
        return [float(p["semantic"]) for p in self.pairs if isinstance(p.get("semantic"), (int, float))]

    def neighbours(self) -> dict[str, list[dict[str, Any]]]:
        """Item or fact id -> its flagged pairs (the other id, scores, whether allowlisted)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for p in self.pairs:
            for me, other in ((p.get("a"), p.get("b")), (p.get("b"), p.get("a"))):
                if isinstance(me, str) and isinstance(other, str):
                    out.setdefault(me, []).append({**p, "other": other})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "ledger": self.path,
            "status": self.status,
            "detail": self.detail,
            "trust": self.trust,
            "signer": self.signer,
            "created": self.created,
            "commit": self.commit,
            "encoder": self.encoder,
            "passes": self.passes,
            "pair_thresholds": self.pair_thresholds,
            "pairs": len(self.pairs),
        }


def _valid_pairs(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [p for p in value if isinstance(p, dict) and isinstance(p.get("a"), str) and isinstance(p.get("b"), str)]


def read(ws: Workspace) -> DedupEvidence:
    """Read the dedup record and say whether it is current for today's corpus and settings."""
    from propeval.ledger.records import stale_reasons

    loaded = ws.ledger.read(KIND, SUBJECT)
    ev = DedupEvidence(loaded.relpath, "not run")
    if loaded.problem is not None:
        ev.status, ev.trust, ev.detail = "not checked", "edited", loaded.problem.message
        return ev
    if loaded.record is None:
        ev.detail = f"no record; {RECORD_HINT}"
        return ev
    record = loaded.record
    res = record["result"]
    ev.created = record.get("created") if isinstance(record.get("created"), str) else None
    ev.commit = res.get("commit") if isinstance(res.get("commit"), str) else None
    ev.encoder = res.get("encoder") if isinstance(res.get("encoder"), str) else None
    ev.passes = (
        [p for p in res.get("passes") or [] if isinstance(p, dict)] if isinstance(res.get("passes"), list) else []
    )
    raw = res.get("pair_thresholds")
    ev.pair_thresholds = {str(k): v for k, v in raw.items() if isinstance(v, dict)} if isinstance(raw, dict) else {}
    ev.pairs = _valid_pairs(res.get("pairs"))
    v = ws.ledger.verdict(loaded)
    ev.trust = {"signed": "signed", "unsigned": "unsigned", "unknown-key": "unknown-key"}.get(v.state, "edited")
    ev.signer = v.signer if v.state == "signed" else None
    if ev.trust == "edited":
        ev.status, ev.detail = "not checked", "its signature does not match its content"
        return ev
    reasons = stale_reasons(record["binding"], binding(ws))
    if reasons:
        ev.status = "not current"
        ev.detail = "; ".join(_plain(r) for r in reasons) + f"; {RECORD_HINT}"
        return ev
    ev.status = "current"
    return ev
