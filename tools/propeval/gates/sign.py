"""``propeval ledger sign|resign``: a maintainer signs records, after checking what can be checked.

A record is signed only when it is sound apart from its signature: it reads, it sits at the
path of its kind and subject, it is fresh (bound to today's files and config), and everything
derivable follows (see ``gates.verify``). A signature says "a maintainer vouches for this record";
sign only records you made, or whose making you watched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.errors import UsageError
from propeval.gates import answerability, judge_gate, verify
from propeval.gates.endpoints import gate_models
from propeval.ledger.paths import ANSWERABILITY, JUDGE
from propeval.ledger.records import LedgerRecord, stale_reasons
from propeval.loader import LoadError
from propeval.result import CheckResult, Problem

if TYPE_CHECKING:
    from propeval import signing
    from propeval.workspace import Workspace


@dataclass
class SignResult(CheckResult):
    signed: list[str] = field(default_factory=list)


def ledger_files(ws: Workspace) -> list[str]:
    """Every record under the ledger folder, relative to the corpus root."""
    return [*ws.ledger_paths.records(ANSWERABILITY), *ws.ledger_paths.records(JUDGE)]


def _unsound(ws: Workspace, rel: str) -> tuple[dict[str, Any] | None, str]:
    """The record at ``rel`` and ``""`` when it may be signed, else ``(None, why not)``."""
    gs = ws.gate_settings
    paths = ws.ledger_paths
    found = paths.record_of(rel)
    if found is None:
        where = f"{paths.folder}/answerability/<item>.json or {paths.folder}/judge/<rubric>.json"
        return None, f"not a ledger record (records are {where})"
    kind, subject = found
    if kind not in (ANSWERABILITY, JUDGE):
        return None, f"unknown record kind {kind!r}"
    try:
        loaded = ws.ledger.read(kind, subject)
    except UsageError as e:  # a file name that no item id or rubric name can have
        return None, str(e)
    if loaded.problem is not None:
        return None, loaded.problem.message
    if loaded.record is None:
        return None, "no such file"
    record = loaded.record
    if kind == ANSWERABILITY:
        corpus = ws.corpus
        item = corpus.items.get(subject)
        claim = corpus.claim_of(item) if item is not None else None
        if item is None or claim is None:
            return None, f"no item {subject!r} (with its claim) in the corpus"
        rubric = ws.rubrics.load(gs.rubric)
        binding = answerability.current_binding(gate_models(ws.settings.judge, gs), gs, item, claim, rubric.hash)
        findings = verify.answerability(rubric, item, claim, record)
    else:
        rubric = ws.rubrics.load(subject)
        try:
            gold = ws.rubrics.gold(subject)
        except LoadError as e:
            return None, e.problem.message
        binding = judge_gate.binding(ws, gs, rubric, gold)
        findings = verify.judge(rubric, gold, record)
    reasons = stale_reasons(record["binding"], binding)
    if reasons:
        return None, f"stale ({'; '.join(reasons)}): make it again rather than sign it"
    if findings:
        return None, "; ".join(f"[{f.rule}] {f.message}" for f in findings)
    return record, ""


def sign_ledger(ws: Workspace, paths: Sequence[str], key: signing.SigningKey, *, resign: bool = False) -> SignResult:
    """Sign each sound record of ``paths`` (relative to the corpus root) with ``key``.

    Already-signed records are left alone unless ``resign`` (a new key, a rotated key).
    """
    result = SignResult()
    if not paths:
        raise UsageError("say which records to sign: paths under the ledger folder, or --all")
    for rel in paths:
        result.files_checked += 1
        record, why = _unsound(ws, rel)
        if record is None:
            result.problems.append(Problem(rel, 0, 0, "ledger-sign", f"not signed: {why}"))
            continue
        kind, subject = ws.ledger_paths.record_of(rel) or ("", "")
        state = ws.ledger.verdict(ws.ledger.read(kind, subject)).state
        if state != "unsigned" and not resign:
            result.notes.append(f"{rel}: already signed ({state}); left alone (propeval ledger resign replaces it)")
            continue
        ws.ledger.write(kind, subject, key.sign(LedgerRecord.from_json(record)))
        result.signed.append(rel)
    return result
