"""``propeval ledger sign|resign``: a maintainer signs records, after checking what can be checked.

A record is signed only when it is sound apart from its signature: it reads, it sits at the
path of its kind and subject, it is fresh (bound to today's files and config), and everything
derivable follows (see ``gates.verify``). A signature says "a maintainer vouches for this record";
sign only records you made, or whose making you watched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval import signing
from propeval.config import Config
from propeval.corpus import load_corpus
from propeval.errors import UsageError
from propeval.gates import answerability, engine, judge_gate, verify
from propeval.gates.ledger import read_record, stale_reasons, write_record
from propeval.gates.settings import GateSettings, load_gate_settings
from propeval.loader import LoadError
from propeval.result import CheckResult, Problem


@dataclass
class SignResult(CheckResult):
    signed: list[str] = field(default_factory=list)


def ledger_files(config: Config, gs: GateSettings) -> list[str]:
    """Every record under the ledger folder, relative to the corpus root."""
    out = []
    for kind in ("answerability", "judge"):
        folder = config.root / gs.ledger_dir / kind
        if folder.is_dir():
            out += [p.relative_to(config.root).as_posix() for p in sorted(folder.glob("*.json"))]
    return out


def _unsound(config: Config, gs: GateSettings, rel: str, corpus: Any) -> tuple[dict[str, Any] | None, str]:
    """The record at ``rel`` and ``""`` when it may be signed, else ``(None, why not)``."""
    parts = Path(rel).parts
    prefix = Path(gs.ledger_dir).parts
    if len(parts) != len(prefix) + 2 or parts[: len(prefix)] != prefix or not rel.endswith(".json"):
        where = f"{gs.ledger_dir}/answerability/<item>.json or {gs.ledger_dir}/judge/<rubric>.json"
        return None, f"not a ledger record (records are {where})"
    kind, subject = parts[-2], Path(parts[-1]).stem
    if kind not in ("answerability", "judge"):
        return None, f"unknown record kind {kind!r}"
    loaded = read_record(config.root / rel, root=config.root, kind=kind, subject=subject)
    if loaded.problem is not None:
        return None, loaded.problem.message
    if loaded.record is None:
        return None, "no such file"
    record = loaded.record
    if kind == "answerability":
        item = corpus.items.get(subject)
        claim = corpus.claim_of(item) if item is not None else None
        if item is None or claim is None:
            return None, f"no item {subject!r} (with its claim) in the corpus"
        rubric = engine.load_rubric(config, gs.rubric)
        binding = answerability.current_binding(config, gs, item, claim, rubric.hash)
        findings = verify.answerability(rubric, item, claim, record)
    else:
        rubric = engine.load_rubric(config, subject)
        try:
            cases, gold_hash = judge_gate.load_gold(config, rubric)
        except LoadError as e:
            return None, e.problem.message
        judge_model, settings = engine.judge_binding(config, gs)
        binding = {
            "rubric": subject,
            "rubric_hash": rubric.hash,
            "gold_hash": gold_hash,
            "judge_model": judge_model,
            "settings": settings,
        }
        findings = verify.judge(rubric, cases, record, rubric.spec.agreement_fields)
    reasons = stale_reasons(record["binding"], binding)
    if reasons:
        return None, f"stale ({'; '.join(reasons)}): make it again rather than sign it"
    if findings:
        return None, "; ".join(f"[{f.rule}] {f.message}" for f in findings)
    return record, ""


def sign_ledger(config: Config, paths: Sequence[str], key: signing.SigningKey, *, resign: bool = False) -> SignResult:
    """Sign each sound record of ``paths`` (relative to the corpus root) with ``key``.

    Already-signed records are left alone unless ``resign`` (a new key, a rotated key).
    """
    gs = load_gate_settings(config)
    result = SignResult()
    if not paths:
        raise UsageError("say which records to sign: paths under the ledger folder, or --all")
    corpus = load_corpus(config)
    for rel in paths:
        result.files_checked += 1
        record, why = _unsound(config, gs, rel, corpus)
        if record is None:
            result.problems.append(Problem(rel, 0, 0, "ledger-sign", f"not signed: {why}"))
            continue
        state = signing.verify(record, gs.signers).state
        if state != "unsigned" and not resign:
            result.notes.append(f"{rel}: already signed ({state}); left alone (propeval ledger resign replaces it)")
            continue
        write_record(config.root / rel, key.sign(record))
        result.signed.append(rel)
    return result
