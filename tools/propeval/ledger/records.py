"""Ledger records: the evidence of a costly evaluation, bound to the content it judged.

A record is one JSON file, written for people to read in a pull request::

    {
      "kind": "answerability",              # or "judge"
      "format": 1,
      "subject": "i0001",                   # the item id, or the rubric name
      "binding": {                          # what the result depends on
        "item_hash": "sha256:...", "claim_hash": "sha256:...",
        "rubric": "facts-v1", "rubric_hash": "sha256:...",
        "answer_model": "...", "judge_model": "...", "settings": {...}
      },
      "result": {...},                      # the answer, the verdict, the score
      "created": "2025-01-01T00:00:00Z",
      "digest": "sha256:...",               # content_hash of the record without "digest" and "signature"
      "signature": {"alg": "ed25519", "key": "ssh-ed25519 ...", "value": "..."}
    }

The record is *fresh* when every binding equals the value computed from today's files and
config. The digest catches a record edited by hand (or a merge that mangled it), but anyone can
recompute it: what makes a record count is the maintainer's Ed25519 signature over all of it
(``propeval.signing``), checked against ``[tool.propeval.signers]``, plus the re-derivation of
everything derivable (``gates.verify``). Where each record lies is :mod:`propeval.ledger.paths`;
a run reads records through :class:`propeval.ledger.view.LedgerView`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from propeval.corpus import content_hash
from propeval.errors import RecordError
from propeval.fsutil import atomic_write
from propeval.loader import Document, LoadError, load_file, relative_path
from propeval.result import Problem

FORMAT = 1

# binding key -> how a change of it reads in a message
BINDING_NAMES = {
    "item_hash": "the item changed (its prompt or fields)",
    "claim_hash": "the claim changed (its facts or source)",
    "rubric_hash": "the rubric changed",
    "gold_hash": "the gold set changed",
    "answer_model": "the reference model changed",
    "judge_model": "the judge model changed",
    "settings": "the model settings changed",
    "rubric": "the rubric name changed",
}


def digest(record: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of ``record`` without its ``digest`` and ``signature`` fields."""
    return content_hash({k: v for k, v in record.items() if k not in ("digest", "signature")})


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class LedgerRecord:
    """One ledger record, typed: what ``make_record`` makes, a maintainer's key signs
    (:meth:`propeval.signing.SigningKey.sign`) and :func:`write_record` writes. Its JSON is the
    module docstring's; ``from_json`` refuses a record whose fields are not of their types."""

    kind: str
    subject: str
    binding: dict[str, Any]
    result: dict[str, Any]
    created: str
    format: int = FORMAT
    digest: str = ""
    signature: dict[str, Any] | None = None  # None: unsigned

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "format": self.format,
            "subject": self.subject,
            "binding": self.binding,
            "result": self.result,
            "created": self.created,
            "digest": self.digest,
        }
        if self.signature is not None:
            out["signature"] = self.signature
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> LedgerRecord:
        """The record ``d`` as read (RecordError names the first field that is not of its type)."""
        for key, kind in (("kind", str), ("subject", str), ("binding", dict), ("result", dict), ("created", str)):
            if not isinstance(d.get(key), kind):
                raise RecordError(f"the ledger record's {key!r} is {d.get(key)!r}; make the record again")
        fmt, dig, sig = d.get("format"), d.get("digest", ""), d.get("signature")
        if not isinstance(fmt, int) or isinstance(fmt, bool) or not isinstance(dig, str):
            raise RecordError("the ledger record's format or digest is not what propeval writes; make it again")
        if sig is not None and not isinstance(sig, dict):
            raise RecordError(f"the ledger record's 'signature' is {sig!r}; sign it again (propeval ledger sign)")
        return cls(d["kind"], d["subject"], d["binding"], d["result"], d["created"], fmt, dig, sig)


def make_record(kind: str, subject: str, binding: Mapping[str, Any], result: Mapping[str, Any]) -> LedgerRecord:
    """A new, unsigned record with its digest; ``binding`` and ``result`` are a gate's typed ones
    (TypedDicts), kept as the plain JSON objects they are on disk."""
    record = LedgerRecord(kind, subject, dict(binding), dict(result), now())
    record.digest = digest(record.to_json())
    return record


def write_record(path: Path, record: LedgerRecord) -> None:
    """Write ``record`` atomically as indented, key-sorted JSON (stable diffs)."""
    atomic_write(path, json.dumps(record.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n")


@dataclass
class Loaded:
    """A record read from disk, or the problem that stops it from being trusted."""

    relpath: str
    record: dict[str, Any] | None
    problem: Problem | None = None


def read_record(path: Path, *, root: Path, kind: str, subject: str) -> Loaded:
    """Read and verify one record. Corrupt, hand-edited or misfiled records come back untrusted."""
    rel = relative_path(path, root)  # never resolved: a linked record is named by its own path
    if not os.path.lexists(path):
        return Loaded(rel, None)
    try:
        doc = load_file(path, root=root)
    except LoadError as e:
        return unreadable(rel, e)
    return check_record(doc, kind=kind, subject=subject)


def unreadable(rel: str, e: LoadError) -> Loaded:
    """A record file the strict loader refused: a link or special file as such, else corrupt."""
    p = e.problem
    if p.rule.startswith("file-"):  # a link or special file: refused as such, never read
        return Loaded(rel, None, p)
    return Loaded(
        rel,
        None,
        Problem(
            rel, p.line, p.col, "ledger-format", f"ledger record is corrupt ({p.message}); delete it and make it again"
        ),
    )


def check_record(doc: Document, *, kind: str, subject: str) -> Loaded:
    """A loaded record file checked for its format, digest, kind and subject."""
    rel = doc.relpath
    record = doc.data

    def bad(pointer: str, message: str, rule: str = "ledger-format") -> Loaded:
        return Loaded(rel, None, doc.problem(pointer, rule, message))

    if record.get("format") != FORMAT:
        return bad("/format", f"ledger record format is {record.get('format')!r}, expected {FORMAT}; make it again")
    if "digest" not in record:
        return bad("", "ledger record has no digest, so propeval did not write it; make it again", "ledger-digest")
    if record.get("digest") != digest(record):
        return bad(
            "/digest",
            "ledger record was edited by hand: its digest does not match its content; "
            "restore it (git checkout) or make it again",
            "ledger-digest",
        )
    if record.get("kind") != kind or record.get("subject") != subject:
        return bad(
            "/subject",
            f"ledger record is for {record.get('kind')!r} {record.get('subject')!r}, "
            f"but this file is for {kind!r} {subject!r}; it was copied or renamed",
        )
    for key in ("binding", "result"):
        if not isinstance(record.get(key), dict):
            return bad(f"/{key}", f"ledger record's {key!r} must be an object; make it again")
    try:
        LedgerRecord.from_json(record)
    except RecordError as e:
        return bad("", str(e))
    return Loaded(rel, record)


def stale_reasons(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What changed between a record's binding and today's, one sentence each; empty when fresh."""
    out = []
    for key in sorted(set(recorded) | set(current)):
        old, new = recorded.get(key), current.get(key)
        if old == new:
            continue
        what = BINDING_NAMES.get(key, f"{key} changed")
        if key.endswith("_hash"):
            out.append(f"{what}: {key} {_short(old)} -> {_short(new)}")
        elif key == "settings":
            diff = _settings_diff(old, new)
            out.append(f"{what}: {diff}")
        else:
            out.append(f"{what}: {old!r} -> {new!r}")
    return out


def _short(h: Any) -> str:
    if isinstance(h, str) and h.startswith("sha256:"):
        return h[:19]
    return repr(h)


def _settings_diff(old: Any, new: Any) -> str:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return f"{old!r} -> {new!r}"
    parts = [f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    return ", ".join(parts)
