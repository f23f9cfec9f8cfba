"""The answerability gate: an item may merge only if a strong model can answer it from public information.

A reference model answers the item; the judge grades the answer with ``facts-v1``; the item passes
when its fact score is at least ``min_fact_score``. The evidence (answer, verdict, score) is kept in
``ledger/answerability/<item_id>.json``, bound to the item's and claim's content hashes, the rubric
hash, both models and their settings. Offline, the gate only reads those records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval import gitutil, names
from propeval.config import Config
from propeval.corpus import Claim, Corpus, Item, load_corpus
from propeval.errors import UsageError
from propeval.gates import engine, verify
from propeval.gates.ledger import Loaded, make_record, read_record, stale_reasons, write_record
from propeval.gates.settings import GateSettings, load_gate_settings
from propeval.result import CheckResult, Problem, Severity
from propeval.signing import SigningKey

KIND = "answerability"
RULE = "answerability"


@dataclass
class GateResult(CheckResult):
    """A gate's problems, plus its mode and what it ran online."""

    gate: str = KIND
    mode: str = "required"
    ran: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Selection:
    """Which items to look at: ids given, every active item, or what changed since a ref."""

    item_ids: Sequence[str] = ()
    all_items: bool = False
    changed_since: str | None = None


def ledger_path(config: Config, gs: GateSettings, item_id: str) -> Path:
    return config.root / gs.ledger_dir / KIND / f"{names.item_id(item_id, 'item')}.json"


def _command(item_id: str) -> str:
    return f"propeval gate answerability --online {item_id}"


def _records(item_id: str, again: bool = False) -> str:
    """Who makes the record, and how: a contributor cannot (``--online`` needs a maintainer's
    endpoint and key), so the advice says so instead of handing them a command that exits 2."""
    return (
        f"a maintainer records this{' again' if again else ''} ({_command(item_id)}, from a trusted install: "
        "SECURITY.md); nothing for a contributor to run"
    )


def select_items(config: Config, corpus: Corpus, gs: GateSettings, sel: Selection, notes: list[str]) -> list[Item]:
    """The active items the selection names, sorted by id."""
    active = {i.id: i for i in corpus.active_items()}
    if sel.item_ids:
        unknown = [i for i in sel.item_ids if i not in corpus.items]
        if unknown:
            raise UsageError(f"no item {unknown[0]!r} in the corpus; give an item id such as i0001")
        for iid in sel.item_ids:
            if iid not in active:
                notes.append(f"{iid} is not active; retired items need no answerability record")
        return [active[i] for i in sorted(set(sel.item_ids)) if i in active]
    if sel.all_items:
        return [active[i] for i in sorted(active)]
    if sel.changed_since is None:
        raise UsageError("say which items to gate: item ids, --changed-since REF, or --all")
    base = gitutil.merge_base(config.root, sel.changed_since)
    changed = set(gitutil.changed_paths(config.root, base))
    rubric_dir = f"{engine.rubrics_dir(config)}/{gs.rubric}/"
    global_changes = sorted(p for p in changed if p == "pyproject.toml" or p.startswith(rubric_dir))
    if global_changes:
        notes.append(
            f"{', '.join(global_changes)} changed since {sel.changed_since}: "
            "every active item's record is checked, since models, settings or the rubric may differ"
        )
        return [active[i] for i in sorted(active)]
    ledger_prefix = f"{gs.ledger_dir}/{KIND}/"
    out = []
    for iid, item in sorted(active.items()):
        claim_path = f"{config.questions_dir}/{item.claim_id}/claim.yaml"
        if {item.doc.relpath, claim_path, f"{ledger_prefix}{iid}.json"} & changed:
            out.append(item)
    return out


def current_binding(config: Config, gs: GateSettings, item: Item, claim: Claim, rubric_hash: str) -> dict[str, Any]:
    """What a fresh record for ``item`` must be bound to, from today's files and config."""
    models = engine.models(config, gs)
    return {
        "item_hash": item.hash,
        "claim_hash": claim.hash,
        "rubric": gs.rubric,
        "rubric_hash": rubric_hash,
        "answer_model": models.answer_model,
        "judge_model": models.judge_model,
        "settings": models.settings,
    }


Verdict = tuple[str, str, str, str]  # (state, message, rule, pointer)


def verdict(
    gs: GateSettings, item: Item, claim: Claim, rubric: Any, loaded: Loaded, binding: dict[str, Any]
) -> Verdict | None:
    """(state, message, rule, pointer) of a problem with the record, or None when it is sound and passing.

    States: missing, corrupt, unsigned, forged, stale, unscored, failed.
    """
    rel = loaded.relpath
    if loaded.problem is not None:
        return "corrupt", loaded.problem.message, loaded.problem.rule, ""
    if loaded.record is None:
        return "missing", f"{item.id}: no answerability record ({rel}); {_records(item.id)}", RULE, ""
    found = verify.signature(loaded.record, gs.signers, rel)
    if found is not None:
        state = "unsigned" if found.rule == "ledger-unsigned" else "forged"
        return state, f"{item.id}: {found.message}", found.rule, found.pointer
    reasons = stale_reasons(loaded.record["binding"], binding)
    if reasons:
        msg = f"{item.id}: answerability record is stale: {'; '.join(reasons)}; {_records(item.id, again=True)}"
        return "stale", msg, RULE, ""
    derived = verify.answerability(rubric, item, claim, loaded.record)
    if derived:
        first = derived[0]
        msg = f"{item.id}: {'; '.join(f.message for f in derived)}; a maintainer re-makes it: {_command(item.id)}"
        return "forged", msg, first.rule, first.pointer
    result = loaded.record["result"]
    status = result.get("status")
    score = result.get("fact_score")
    if status != "scored" or not isinstance(score, int) or isinstance(score, bool):
        why = result.get("reason") or f"status {status!r}"
        return (
            "unscored",
            f"{item.id}: the reference answer was not scored ({why}); a judge failure is not a verdict; "
            f"{_records(item.id, again=True)}",
            RULE,
            "",
        )
    if score < gs.min_fact_score:
        states = result.get("fact_states") or {}
        missed = [f"{k} {v}" for k, v in sorted(states.items()) if v != "stated"] if isinstance(states, dict) else []
        detail = f" ({', '.join(missed)})" if missed else ""
        return (
            "failed",
            f"{item.id}: fact score {score} is below {gs.min_fact_score}{detail}: the reference model could not "
            f"answer it from public information; read the answer in {rel}, reword the prompt or fix the facts, "
            f"then {_records(item.id, again=True)}",
            RULE,
            "",
        )
    return None


def answerability_gate(
    config: Config, sel: Selection, *, online: bool = False, force: bool = False, key: SigningKey | None = None
) -> GateResult:
    """Check (and with ``online``, first refresh) the answerability records of the selected items.

    Records written online are signed with ``key`` when one is given.
    """
    gs = load_gate_settings(config)
    result = GateResult(mode=gs.mode(KIND))
    corpus = load_corpus(config)
    items = select_items(config, corpus, gs, sel, result.notes)
    rubric = engine.load_rubric(config, gs.rubric)
    rubric_hash = rubric.hash

    pending: list[tuple[Item, Claim, dict[str, Any], Verdict | None, Loaded]] = []
    for item in items:
        claim = corpus.claim_of(item)
        if claim is None:
            result.problems.append(
                Problem(item.doc.relpath, 0, 0, RULE, f"{item.id}: its claim {item.claim_id!r} is missing")
            )
            continue
        binding = current_binding(config, gs, item, claim, rubric_hash)
        loaded = read_record(ledger_path(config, gs, item.id), root=config.root, kind=KIND, subject=item.id)
        pending.append((item, claim, binding, verdict(gs, item, claim, rubric, loaded, binding), loaded))

    if online:
        todo = [(i, c, b) for i, c, b, v, _ in pending if v is not None and (force or v[0] != "failed")]
        if force:
            todo = [(i, c, b) for i, c, b, _, _ in pending]
        if todo:
            bindings = {i.id: b for i, _, b in todo}

            def record(item: Item, answer: dict[str, Any], grade: dict[str, Any]) -> None:
                # written as each item is graded: a failure or kill later in the batch keeps it
                rec = make_record(KIND, item.id, bindings[item.id], _result(answer, grade))
                if key is not None:
                    rec = key.sign(rec)
                write_record(ledger_path(config, gs, item.id), rec)
                result.ran.append(item.id)

            try:
                engine.answer_and_grade(config, gs, [(i, c) for i, c, _ in todo], record)
            finally:
                result.ran.sort()  # items finish in any order under concurrency; report them by id
            pending = [
                (i, c, b, verdict(gs, i, c, rubric, lo, b), lo)
                for i, c, b, _, _ in pending
                for lo in [read_record(ledger_path(config, gs, i.id), root=config.root, kind=KIND, subject=i.id)]
            ]

    severity = Severity.ERROR if result.mode == "required" else Severity.WARNING
    for item, _claim, _binding, found, loaded in pending:
        if found is None:
            continue
        state, message, rule, _pointer = found
        path = loaded.relpath if state in ("corrupt", "unsigned", "forged") else item.doc.relpath
        line, col = (loaded.problem.line, loaded.problem.col) if loaded.problem else (0, 0)
        if state == "corrupt":
            message = f"{item.id}: {message}; {_records(item.id, again=True)}"
        result.problems.append(Problem(path, line, col, rule, message, severity=severity))
    result.files_checked = len(pending)
    if result.mode == "advisory" and result.problems:
        result.notes.append(
            f'the answerability gate is advisory ([tool.propeval.gates] answerability = "advisory"): '
            f"{len(result.problems)} problem(s) reported, none fails the run"
        )
    result.problems = result.sorted()
    return result


def _result(answer: dict[str, Any], grade: dict[str, Any]) -> dict[str, Any]:
    """The evidence kept in a record: the answer, the verdict, and the score read from it."""
    return {
        "status": grade.get("status"),
        "reason": grade.get("reason"),
        "fact_score": grade.get("fact_score"),
        "fact_states": grade.get("fact_states"),
        "propaganda": grade.get("propaganda"),
        "frame_adopted": grade.get("frame_adopted"),
        "answer": answer.get("answer"),
        "answer_status": answer.get("status"),
        "finish_reason": answer.get("finish_reason"),
        "verdict": grade.get("verdict"),
        "raw": grade.get("raw") if grade.get("status") != "scored" else None,
        "prompt_hash": grade.get("prompt_hash"),
        "attempts": grade.get("attempts"),
    }
