"""Approval records: a maintainer's signed "I reviewed this policy change", bound to exact blobs.

A pull request that changes a policy file (:mod:`propeval.policy_files`) fails ``propeval ci``
with ``policy-change`` until a maintainer approves it. The approval is a ledger record,
``ledger/approvals/<id>.json``, made and signed by ``propeval ledger approve``::

    {"kind": "approval", "format": 1, "subject": "<id>",
     "binding": {"base": "<the merge base commit>", "head": "<the pull request's commit reviewed>",
                 "changes": [{"path": "Makefile", "before": "<blob at the merge base>",
                              "after": "<blob in the pull request>"}, ...]},
     "result": {"note": "..."}, "created": "...", "digest": "...", "signature": {...}}

A record signed by a key on the *base* branch's ``[tool.propeval.signers]`` applies to a pull
request whole or not at all: when its ``base`` is the pull request's merge base, its ``head`` is
the pull request's commit or one of its ancestors (the approval is committed on top of what was
reviewed), and every change it lists is one the pull request makes, path, ``before`` and
``after`` blob ids alike. Then each of those changes is approved. One more byte in one file,
another starting point, the bytes copied onto another branch, or a branch that makes only some of
the changes, and it approves nothing. The id is derived from what it binds, so two pull requests
never write the same file. A record
is read like every ledger record (strict loader, digest, its kind and subject); one the pull
request added or changed that does not verify is an error, an old one is simply not used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.ledger.paths import APPROVALS, LedgerPaths
from propeval.ledger.records import LedgerRecord, make_record, write_record
from propeval.loader import dumps_json
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.ledger.view import LedgerView
    from propeval.policy_files import FileChange

KIND = "approval"

Binding = tuple[str, str | None, str | None]  # (path, before, after)


def _binding(changes: Sequence[FileChange], base: str, head: str) -> dict[str, Any]:
    return {"base": base, "head": head, "changes": sorted((c.binding for c in changes), key=lambda b: str(b["path"]))}


def approval_id(changes: Sequence[FileChange], base: str, head: str) -> str:
    """16 hex digits of the sha256 of what an approval binds: the commits and the changes, in path order."""
    body = dumps_json(_binding(changes, base, head))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def make_approval(changes: Sequence[FileChange], note: str, base: str, head: str) -> LedgerRecord:
    """An unsigned approval record for ``changes``, made at merge base ``base`` on the pull
    request's commit ``head``."""
    subject = approval_id(changes, base, head)
    result = {"note": note, "what": {c.path: c.describe() for c in changes}}
    return make_record(KIND, subject, _binding(changes, base, head), result)


def write_approval(paths: LedgerPaths, record: LedgerRecord) -> str:
    """Write ``record`` to its path; the path relative to the corpus root."""
    subject = record.subject
    write_record(paths.approval(subject), record)
    return paths.rel(APPROVALS, f"{subject}.json")


@dataclass(frozen=True)
class Approval:
    """One valid (signed) approval: the merge base and pull request commit it was made at, the
    changes it approves, and where it is (``ledger/approvals/x.json (by NAME)``)."""

    base: str
    head: str
    changes: frozenset[Binding]
    label: str

    def applies(self, merge_base: str, made: set[Binding], reviewed: bool) -> bool:
        """Whether it approves its changes in a pull request whose merge base is ``merge_base``,
        which makes the changes ``made``, and whose commit is (or descends from) its ``head``
        (``reviewed``)."""
        return self.base == merge_base and reviewed and self.changes <= made


@dataclass
class Approvals:
    """The tree's valid approval records, and the problems of those the tree brought."""

    valid: list[Approval] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def covered(self, merge_base: str, made: set[Binding], reviewed: Callable[[str], bool]) -> dict[Binding, str]:
        """Each change of ``made`` an approval that applies approves -> that approval's label;
        ``reviewed(head)``: whether the pull request's commit is ``head`` or descends from it."""
        out: dict[Binding, str] = {}
        for a in self.valid:
            if a.applies(merge_base, made, reviewed(a.head)):
                for b in sorted(a.changes, key=str):
                    out.setdefault(b, a.label)
        return out


def _bindings(record: dict[str, Any]) -> list[Binding] | None:
    changes = record["binding"].get("changes")
    if not isinstance(changes, list) or not changes:
        return None
    out: list[Binding] = []
    for c in changes:
        ok = isinstance(c, dict) and set(c) == {"path", "before", "after"} and isinstance(c["path"], str)
        if not ok or not all(c[k] is None or isinstance(c[k], str) for k in ("before", "after")):
            return None
        out.append((c["path"], c["before"], c["after"]))
    return out


def read_approvals(view: LedgerView, changed: set[str]) -> Approvals:
    """Every approval record under the ledger folder, verified against the view's signers.

    ``changed``: paths (relative to the corpus root) the tree changed; only those records'
    problems are reported (an old record signed by a key since rotated out approves nothing, and
    that is no one's problem now).
    """
    out = Approvals()
    folder = view.paths.kind_folder(APPROVALS)
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        rel = view.paths.rel(APPROVALS, path.name)
        if path.suffix != ".json":
            continue
        loaded = view.read(KIND, path.stem)

        def bad(rule: str, message: str, pointer: str = "", rel: str = rel) -> None:
            if rel in changed:
                out.problems.append(Problem(rel, 0, 0, rule, message, pointer=pointer))

        if loaded.problem is not None:
            if rel in changed:
                out.problems.append(loaded.problem)
            continue
        record = loaded.record
        if record is None:
            continue
        bindings = _bindings(record)
        base, head = record["binding"].get("base"), record["binding"].get("head")
        if bindings is None or not isinstance(base, str) or not isinstance(head, str):
            bad(
                "ledger-format",
                "an approval binds its merge base, the pull request's commit and a list of {path, before, after}; "
                "make it with propeval ledger approve",
            )
            continue
        verdict = view.verdict(loaded)
        if verdict.state == "unsigned":
            bad(
                "ledger-unsigned",
                "unsigned approval: it approves nothing; a maintainer makes a signed one (propeval ledger approve)",
            )
            continue
        if verdict.state == "unknown-key":
            listed = ", ".join(sorted(view.signers)) or "none"
            bad(
                "ledger-signer",
                f"approval signed by a key that is not on the base branch's [tool.propeval.signers] ({listed}): "
                "it approves nothing",
                "/signature/key",
            )
            continue
        if verdict.state != "signed":
            bad(
                "ledger-signature",
                f"the approval's signature does not check out ({verdict.detail or 'changed after signing'}): "
                "it approves nothing",
                "/signature",
            )
            continue
        out.valid.append(Approval(base, head, frozenset(bindings), f"{rel} (by {verdict.signer})"))
    return out
