"""The answerability gate: an item may merge only if a strong model can answer it from public information.

A reference model answers the item; the judge grades the answer with ``facts-v1``; the item passes
when its fact score is at least ``min_fact_score``. The evidence (answer, verdict, score) is kept in
``ledger/answerability/<item_id>.json``, bound to the item's and claim's content hashes, the rubric
hash, both models and their settings. Offline, the gate only reads those records.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from propeval import gitutil
from propeval.corpus import Claim, Item
from propeval.errors import EndpointError, UsageError
from propeval.gates import verify
from propeval.gates.endpoints import OFFLINE_HINT, GateModels, gate_models
from propeval.judge.records import AnswerRecord, AnswerStatus, GradeRecord, GradeStatus
from propeval.ledger.paths import ANSWERABILITY
from propeval.ledger.records import Loaded, make_record, stale_reasons
from propeval.result import CheckResult, Problem, Severity
from propeval.settings import GateSettings
from propeval.signing import SigningKey

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric
    from propeval.workspace import Workspace

KIND = ANSWERABILITY
RULE = "answerability"


class AnswerabilityResult(TypedDict):
    """The ``result`` of an answerability record (``ledger/answerability/<item>.json``), which a
    maintainer's key signs: the judge's verdict on the reference answer under the gate's facts
    rubric (its fields, re-derived from ``verdict`` on verification), and the answer it graded."""

    status: GradeStatus | None
    reason: str | None
    fact_score: int | None
    fact_states: dict[str, str] | None
    propaganda: int | None
    frame_adopted: str | None
    answer: str | None
    answered_by: str | None  # the model that answered, as its server named itself
    judged_by: str | None  # the judge, likewise
    answer_status: AnswerStatus
    finish_reason: str | None
    verdict: Any  # the judge's parsed reply, as it gave it
    raw: str | None  # the judge's raw reply, kept when it was not scored
    prompt_hash: str | None
    attempts: int


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


def _command(item_id: str) -> str:
    return f"propeval gate answerability --online {item_id}"


def _records(item_id: str, again: bool = False) -> str:
    """Who makes the record, and how: a contributor cannot (``--online`` needs a maintainer's
    endpoint and key), so the advice says so instead of handing them a command that exits 2."""
    return (
        f"a maintainer records this{' again' if again else ''} ({_command(item_id)}, from a trusted install: "
        "SECURITY.md); nothing for a contributor to run"
    )


def select_items(ws: Workspace, gs: GateSettings, sel: Selection, notes: list[str]) -> list[Item]:
    """The active items the selection names, sorted by id."""
    corpus = ws.corpus
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
    root = ws.root
    base = gitutil.merge_base(root, sel.changed_since)
    changed = set(gitutil.changed_paths(root, base))
    rubric_dir = f"{ws.rubrics.dir}/{gs.rubric}/"
    global_changes = sorted(p for p in changed if p == "pyproject.toml" or p.startswith(rubric_dir))
    if global_changes:
        notes.append(
            f"{', '.join(global_changes)} changed since {sel.changed_since}: "
            "every active item's record is checked, since models, settings or the rubric may differ"
        )
        return [active[i] for i in sorted(active)]
    ledger_prefix = ws.ledger_paths.rel(KIND, "")
    questions = ws.config.questions_dir
    out = []
    for iid, item in sorted(active.items()):
        claim_path = f"{questions}/{item.claim_id}/claim.yaml"
        if {item.doc.relpath, claim_path, f"{ledger_prefix}{iid}.json"} & changed:
            out.append(item)
    return out


def current_binding(models: GateModels, gs: GateSettings, item: Item, claim: Claim, rubric_hash: str) -> dict[str, Any]:
    """What a fresh record for ``item`` must be bound to, from today's files and config."""
    return {
        "item_hash": item.hash,
        "claim_hash": claim.hash,
        "rubric": gs.rubric,
        "rubric_hash": rubric_hash,
        "answer_model": models.answer.model,
        "judge_model": models.judge.model,
        "settings": models.binding_settings,
    }


Verdict = tuple[str, str, str, str]  # (state, message, rule, pointer)


def verdict(
    ws: Workspace, gs: GateSettings, item: Item, claim: Claim, rubric: Rubric, loaded: Loaded, binding: dict[str, Any]
) -> Verdict | None:
    """(state, message, rule, pointer) of a problem with the record, or None when it is sound and passing.

    States: missing, corrupt, unsigned (or made against the plumbing stub), forged, stale, unscored,
    failed.
    """
    rel = loaded.relpath
    if loaded.problem is not None:
        return "corrupt", loaded.problem.message, loaded.problem.rule, ""
    if loaded.record is None:
        return "missing", f"{item.id}: no answerability record ({rel}); {_records(item.id)}", RULE, ""
    result = loaded.record.get("result")
    stub = verify.stub_made(result) if isinstance(result, dict) else ""
    if stub:  # signed or not, it shows nothing of a model
        return "unsigned", f"{item.id}: {stub}", "ledger-derived", "/result/answered_by"
    found = verify.signature(ws.ledger.verdict(loaded), ws.ledger.signers, rel)
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


@dataclass
class Reading:
    """One item's answerability record, read and judged against today's files under one rubric."""

    item: Item
    claim: Claim
    binding: dict[str, Any]
    loaded: Loaded
    verdict: Verdict | None


def _readings(ws: Workspace) -> dict[tuple[str, str], Reading]:
    return {}


def read(ws: Workspace, gs: GateSettings, item: Item, claim: Claim, rubric: Rubric) -> Reading:
    """``item``'s record judged under ``rubric``: made once per workspace, shared by the gate and the
    release's evidence (each record read, its signature checked and its verdict re-derived once)."""
    memo = ws.shared(_readings)
    key = (item.id, rubric.hash)
    if key not in memo:
        binding = current_binding(gate_models(ws.settings.judge, gs), gs, item, claim, rubric.hash)
        loaded = ws.ledger.read(KIND, item.id)
        memo[key] = Reading(item, claim, binding, loaded, verdict(ws, gs, item, claim, rubric, loaded, binding))
    return memo[key]


def _forget(ws: Workspace, item_id: str) -> None:
    memo = ws.shared(_readings)
    for key in [k for k in memo if k[0] == item_id]:
        del memo[key]


def answerability_gate(
    ws: Workspace, sel: Selection, *, online: bool = False, force: bool = False, key: SigningKey | None = None
) -> GateResult:
    """Check (and with ``online``, first refresh) the answerability records of the selected items.

    Records written online are signed with ``key`` when one is given.
    """
    gs = ws.gate_settings
    result = GateResult(mode=gs.mode(KIND))
    corpus = ws.corpus
    items = select_items(ws, gs, sel, result.notes)
    rubric = ws.rubrics.load(gs.rubric)

    pending: list[Reading] = []
    for item in items:
        claim = corpus.claim_of(item)
        if claim is None:
            result.problems.append(
                Problem(item.doc.relpath, 0, 0, RULE, f"{item.id}: its claim {item.claim_id!r} is missing")
            )
            continue
        pending.append(read(ws, gs, item, claim, rubric))

    if online:
        todo = [r for r in pending if r.verdict is not None and (force or r.verdict[0] != "failed")]
        if force:
            todo = list(pending)
        if todo:
            bindings = {r.item.id: r.binding for r in todo}

            def record(item: Item, answer: AnswerRecord, grade: GradeRecord) -> None:
                # written as each item is graded: a failure or kill later in the batch keeps it
                rec = make_record(KIND, item.id, bindings[item.id], _result(answer, grade))
                if key is not None:
                    rec = key.sign(rec)
                ws.ledger.write(KIND, item.id, rec)
                _forget(ws, item.id)
                result.ran.append(item.id)

            try:
                answer_and_grade(ws, gs, [(r.item, r.claim) for r in todo], record)
            finally:
                result.ran.sort()  # items finish in any order under concurrency; report them by id
            pending = [read(ws, gs, r.item, r.claim, rubric) for r in pending]

    severity = Severity.ERROR if result.mode == "required" else Severity.WARNING
    for r in pending:
        if r.verdict is None:
            continue
        state, message, rule, _pointer = r.verdict
        loaded = r.loaded
        path = loaded.relpath if state in ("corrupt", "unsigned", "forged") else r.item.doc.relpath
        line, col = (loaded.problem.line, loaded.problem.col) if loaded.problem else (0, 0)
        if state == "corrupt":
            message = f"{r.item.id}: {message}; {_records(r.item.id, again=True)}"
        result.problems.append(Problem(path, line, col, rule, message, severity=severity))
    result.files_checked = len(pending)
    if result.mode == "advisory" and result.problems:
        result.notes.append(
            f'the answerability gate is advisory ([tool.propeval.gates] answerability = "advisory"): '
            f"{len(result.problems)} problem(s) reported, none fails the run"
        )
    result.problems = result.sorted()
    return result


def answer_and_grade(
    ws: Workspace,
    gs: GateSettings,
    items: Sequence[tuple[Item, Claim]],
    on_graded: Callable[[Item, AnswerRecord, GradeRecord], None],
) -> None:
    """Answer each item with the reference model and grade it with the gate's rubric.

    It runs the judge engine's own ``answer_run`` and ``grade_run`` on a fresh run folder, so a
    gate record is made exactly as any graded run is. ``on_graded(item, answer row, grade row)``
    is called as each item's grade reaches the disk (see RUNS.md), so a failure or a kill later
    in the batch loses nothing already graded. Items whose request failed for good (an endpoint
    failure is not a verdict) or that the run deadline left unfinished are not passed on; they
    raise one EndpointError at the end with the exact tally.
    """
    from propeval.judge import runs
    from propeval.judge.answer import AnswerOptions, answer_run
    from propeval.judge.grade import GradeOptions, grade_run
    from propeval.settings.judge import require_keys

    models = gate_models(ws.settings.judge, gs)
    js, answer_ep, judge_ep = models.judge_settings, models.answer, models.judge
    require_keys([answer_ep, judge_ep], OFFLINE_HINT)
    # A run folder of its own: two gate runs in the same second must not resume each other's
    # answers (an item id may name other text on another branch; runs/ is not committed).
    run_id = f"gate-answerability-{runs.new_run_id(answer_ep.model)}-{secrets.token_hex(3)}"
    by_id = {item.id: item for item, _ in items}
    answered = answer_run(
        ws,
        js,
        AnswerOptions(answer_ep, js.temperature, js.max_tokens, run_id=run_id, items=tuple(by_id)),
    )
    answers = runs.latest(answered.run_dir / runs.ANSWERS, ws.root)
    passed: set[str] = set()
    record_fields = ws.rubrics.load(gs.rubric).spec.record_fields

    def on_record(grade: dict[str, Any]) -> None:
        item_id = grade.get("item_id")
        if grade.get("status") != "error" and item_id in by_id and item_id in answers:
            typed = GradeRecord.from_json(grade, record_fields)  # as written: a RecordError is a bug
            on_graded(by_id[item_id], AnswerRecord.from_json(answers[item_id]), typed)
            passed.add(item_id)

    fatal = ""
    try:
        grade_run(
            ws,
            js,
            GradeOptions(
                run=run_id,
                rubric=gs.rubric,
                endpoint=judge_ep,
                temperature=js.judge_temperature,
                max_tokens=js.judge_max_tokens,
                max_reasks=js.max_reasks,
                use_cache=False,  # a ledger record is evidence that the judge was asked now
                partial=True,  # items whose answer failed are tallied below, not graded
            ),
            on_record=on_record,
        )
    except EndpointError as e:  # the judge refused us or went away: what was graded is kept
        fatal = str(e)
    grades = runs.latest(answered.run_dir / runs.grades_file(gs.rubric), ws.root)
    failures: dict[str, str] = {}
    late = f" within the {js.run_deadline:g}s run deadline" if js.run_deadline else ""
    for item_id in by_id:
        if item_id in passed:
            continue
        ans, grade = answers.get(item_id) or {}, grades.get(item_id) or {}
        if ans.get("status") == "error":
            failures[item_id] = f"answer: {ans.get('error')}"
        elif not ans:
            failures[item_id] = f"not answered{late}"
        elif grade.get("status") == "error":
            failures[item_id] = f"grade: {grade.get('reason')}"
        else:
            failures[item_id] = fatal or f"not graded{late}"
    if failures:
        first = "; ".join(f"{k}: {v}" for k, v in list(failures.items())[:3])
        raise EndpointError(
            f"{len(failures)} of {len(by_id)} item(s) got no record ({first}); the {len(passed)} other(s) were "
            f"recorded as each finished; rerun the same command to do the {len(failures)} left"
        )


def _result(answer: AnswerRecord, grade: GradeRecord) -> AnswerabilityResult:
    """The evidence kept in a record: the answer, the verdict, and the score read from it."""
    v = grade.verdict
    return {
        "status": v.status,
        "reason": v.reason,
        "fact_score": v.get("fact_score"),
        "fact_states": v.get("fact_states"),
        "propaganda": v.get("propaganda"),
        "frame_adopted": v.get("frame_adopted"),
        "answer": answer.answer,
        # who answered and who judged, as the servers named themselves in their replies
        "answered_by": answer.served_model or answer.model,
        "judged_by": v.get("served_model") or grade.judge_model,
        "answer_status": answer.status,
        "finish_reason": answer.finish_reason,
        "verdict": v.verdict,
        "raw": v.raw if v.status != "scored" else None,
        "prompt_hash": v.prompt_hash,
        "attempts": v.attempts,
    }
