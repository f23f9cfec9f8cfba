"""The judge gate: a judge prompt may change only if it still agrees with human graders.

``rubrics/<rubric>/gold.jsonl`` holds answers with human verdicts. Online, the judge grades every
gold answer and ``ledger/judge/<rubric>.json`` keeps each case's human and judge labels, bound to
the rubric hash, the gold set's hash, the judge model and its settings. Offline, the gate
recomputes the agreement from the recorded labels (so a changed threshold needs no new run) and
fails when the record is stale, when a statistic is below its threshold, or when a statistic is
undefined: a gold set with a single class proves nothing.

Measures, for a ``facts`` rubric: accuracy per fact state and Cohen's kappa over fact states;
quadratic-weighted kappa and ordinal Krippendorff's alpha over the fact score and the propaganda
score; positive-class F1 for "any propaganda". For an ``audit`` rubric: kappa and nominal alpha
for each codebook metric, accuracy per factual-accuracy label, and F1 for "propaganda echoed or
endorsed".
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval import agreement as ag
from propeval.agreement import verdicts
from propeval.gates import verify
from propeval.gates.answerability import GateResult
from propeval.gates.endpoints import OFFLINE_HINT, gate_models
from propeval.judge.gold import RULE as GOLD_RULE
from propeval.ledger.paths import JUDGE
from propeval.ledger.records import LedgerRecord, Loaded, make_record, stale_reasons
from propeval.loader import LoadError
from propeval.result import Problem, Severity
from propeval.settings import GateSettings
from propeval.signing import SigningKey, Verdict

if TYPE_CHECKING:
    from propeval.judge.gold import GoldSet
    from propeval.judge.rubric import Rubric
    from propeval.workspace import Workspace

KIND = JUDGE
RULE = GOLD_RULE  # "judge-gate"


def _command(rubric: str) -> str:
    return f"propeval gate judge --rubric {rubric} --online"


def _records(rubric: str) -> str:
    """A contributor cannot make the record (``--online`` needs a maintainer's endpoint and key)."""
    return f"a maintainer records this ({_command(rubric)}, from a trusted install: SECURITY.md)"


def judge_labels(rubric: Rubric, grade: dict[str, Any]) -> dict[str, Any] | None:
    """The labels of a judge's grade row, or None when the judge left it unscored."""
    if grade.get("status") != "scored":
        return None
    return {f: grade.get(f) for f in rubric.spec.agreement_fields}


def measure(rubric: Rubric, cases: Sequence[dict[str, Any]]) -> list[ag.Stat]:
    """Every agreement statistic of judge against human over the recorded ``cases`` (the rubric's
    kind says which)."""
    scored = [c for c in cases if isinstance(c.get("judge"), dict)]
    return verdicts.measure(rubric.spec, rubric.labels, [c["human"] for c in scored], [c["judge"] for c in scored])


def threshold_key(stat_name: str) -> str:
    stat = stat_name.split(" ", 1)[1]
    if stat.startswith("accuracy"):
        return "judge_min_accuracy"
    if stat.startswith("cohen_kappa"):
        return "judge_min_kappa"
    if stat.startswith("krippendorff"):
        return "judge_min_alpha"
    return "judge_min_f1"


@dataclass
class Reading:
    """One rubric's judge-agreement record read offline, with every fact a verdict rests on.

    :func:`read` makes it, and both :func:`judge_gate` (problems for CI) and the release card
    (``release.evidence``: a verdict in plain words) decide from it, so they apply the same checks
    in the same way and differ only in how they word the outcome.
    """

    name: str
    loaded: Loaded  # the record as read: .record, .problem (corrupt, misfiled), .relpath
    rubric: Rubric | None = None
    gold: GoldSet | None = None
    load_error: Problem | None = None  # the rubric or its gold set does not load
    binding: dict[str, Any] | None = None  # what a fresh record is bound to today
    verification: Verdict | None = None  # who signed the record
    signature: verify.Finding | None = None  # None: signed by a listed maintainer key
    stale: list[str] = field(default_factory=list)
    # What does not follow from the gold file and the raw replies; only looked for in a record
    # that is signed by a listed key and fresh: re-deriving anything else proves nothing.
    derived: list[verify.Finding] = field(default_factory=list)
    # Why the record came from the plumbing stub ("" when it did not): signed or not, it shows
    # nothing of a judge, so it is not checked anywhere.
    stub: str = ""

    @property
    def fresh(self) -> bool:
        """A record an online run need not make again: current, signed, and re-derived cleanly."""
        return (
            self.loaded.record is not None
            and self.binding is not None
            and not self.stale
            and self.signature is None
            and not self.stub
            and not any(not f.warning for f in self.derived)
        )

    @property
    def cases(self) -> list[dict[str, Any]] | None:
        """The recorded cases, or None when the record holds no list of case objects."""
        record = self.loaded.record
        cases = record["result"].get("cases") if record is not None else None
        if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
            return None
        return cases

    def stats(self) -> list[ag.Stat]:
        """The agreement statistics over the recorded cases; the rubric file, never the record,
        says which (its kind)."""
        cases = self.cases
        return measure(self.rubric, cases) if self.rubric is not None and cases is not None else []


def _readings(ws: Workspace) -> dict[str, Reading]:
    return {}


def binding(ws: Workspace, gs: GateSettings, rubric: Rubric, gold: GoldSet) -> dict[str, Any]:
    """What a fresh judge-gate record of ``rubric`` is bound to today."""
    judge_model, settings = gate_models(ws.settings.judge, gs).judge_binding()
    return {
        "rubric": rubric.name,
        "rubric_hash": rubric.hash,
        "gold_hash": gold.hash,
        "judge_model": judge_model,
        "settings": settings,
    }


def read(ws: Workspace, gs: GateSettings, name: str) -> Reading:
    """Read ``name``'s record and check it offline against today's rubric, gold set and settings
    (once per workspace: the judge step and the release's evidence share it)."""
    memo = ws.shared(_readings)
    if name in memo:
        return memo[name]
    reading = Reading(name, ws.ledger.read(KIND, name))
    memo[name] = reading
    record = reading.loaded.record
    if record is not None:
        reading.stub = verify.stub_made(record["result"])
        reading.verification = ws.ledger.verdict(reading.loaded)
        reading.signature = verify.signature(reading.verification, ws.ledger.signers, reading.loaded.relpath)
    try:
        reading.rubric = ws.rubrics.load(name)
        reading.gold = ws.rubrics.gold(name)
    except LoadError as e:
        reading.load_error = e.problem
        return reading
    reading.binding = binding(ws, gs, reading.rubric, reading.gold)
    if record is None:
        return reading
    reading.stale = stale_reasons(record["binding"], reading.binding)
    if reading.signature is None and not reading.stale:
        reading.derived = verify.judge(reading.rubric, reading.gold, record)
    return reading


def judge_gate(
    ws: Workspace, rubrics: Sequence[str], *, online: bool = False, key: SigningKey | None = None
) -> GateResult:
    """Check (with ``online``, first refresh) the judge-agreement record of each rubric.

    Records written online are signed with ``key`` when one is given.
    """
    gs = ws.gate_settings
    result = GateResult(gate=KIND, mode=gs.mode(KIND))
    severity = Severity.ERROR if result.mode == "required" else Severity.WARNING

    def add(path: str, message: str, rule: str = RULE, line: int = 0, col: int = 0) -> None:
        result.problems.append(Problem(path, line, col, rule, message, severity=severity))

    for name in rubrics:
        reading = read(ws, gs, name)
        if reading.load_error is not None:
            p = reading.load_error
            add(p.path, f"{name}: {p.message}", p.rule, p.line, p.col)
            continue
        assert reading.rubric is not None and reading.gold is not None and reading.binding is not None
        if online and not reading.fresh:
            record = _grade_record(ws, gs, name, reading.rubric, reading.gold, reading.binding, key)
            ws.ledger.write(KIND, name, record)
            ws.shared(_readings).pop(name, None)
            result.ran.append(name)
            reading = read(ws, gs, name)
            assert reading.rubric is not None
        result.files_checked += 1
        loaded = reading.loaded
        rel = loaded.relpath
        if loaded.problem is not None:
            p = loaded.problem
            add(p.path, f"{name}: {p.message}; {_records(name)}", p.rule, p.line, p.col)
            continue
        if loaded.record is None:
            add(rel, f"{name}: no judge-agreement record ({rel}); {_records(name)}")
            continue
        if reading.stub:
            add(rel, f"{name}: {reading.stub}", "ledger-derived")
            continue
        if reading.signature is not None:
            add(rel, f"{name}: {reading.signature.message}", reading.signature.rule)
            continue
        if reading.stale:
            add(rel, f"{name}: judge-agreement record is stale: {'; '.join(reading.stale)}; {_records(name)}")
            continue
        for f in reading.derived:
            if f.warning:
                result.problems.append(Problem(rel, 0, 0, f.rule, f"{name}: {f.message}", severity=Severity.WARNING))
            else:
                add(rel, f"{name}: {f.message}; a maintainer re-makes it: {_command(name)}", f.rule)
        if any(not f.warning for f in reading.derived):
            continue
        recorded = reading.cases
        if recorded is None:
            add(rel, f"{name}: the record holds no cases; {_records(name)}", "ledger-format")
            continue
        unscored = [str(c.get("id")) for c in recorded if not isinstance(c.get("judge"), dict)]
        if unscored:
            add(
                rel,
                f"{name}: the judge left {len(unscored)} gold case(s) unscored ({', '.join(unscored[:5])}); "
                f"a judge failure is not a verdict; fix the rubric or endpoint, then {_records(name)}",
            )
        for s in reading.stats():
            tkey = threshold_key(s.name)
            floor = gs.thresholds[tkey]
            if s.value is None:
                add(rel, f"{name}: {s.name} is undefined ({s.reason}); add gold cases so it can be measured")
            elif s.value < floor:
                add(
                    rel,
                    f"{name}: {s.name} = {s.value:.3f} over {s.n} is below {tkey} = {floor}; "
                    "revise the judge prompt and re-run, or review the gold labels",
                )
            else:
                result.notes.append(f"{name}: {s.name} = {s.value:.3f} (n={s.n}, >= {floor})")
    result.problems = result.sorted()
    return result


def grade_gold(ws: Workspace, gs: GateSettings, rubric: Rubric, gold: GoldSet) -> list[dict[str, Any]]:
    """Grade each gold case's answer with ``rubric`` now, from memory, through ``propeval grade``'s
    own grading loop (:func:`propeval.judge.grade.grade_cases`): one grade row per case, in order."""
    from propeval.errors import EndpointError
    from propeval.judge.gold import answer_of, case_of
    from propeval.judge.grade import GradeOptions, grade_cases
    from propeval.settings.judge import require_keys

    models = gate_models(ws.settings.judge, gs)
    js = models.judge_settings
    require_keys([models.answer, models.judge, *models.panel], OFFLINE_HINT)
    rows = grade_cases(
        js,
        GradeOptions(
            run="gold",
            rubric=rubric.name,
            endpoint=models.judge,
            temperature=js.judge_temperature,
            max_tokens=js.judge_max_tokens,
            max_reasks=js.max_reasks,
            panel=models.panel if len(models.panel) > 1 else (),
            use_cache=False,  # a ledger record is evidence that the judges were asked now
        ),
        rubric,
        [(gold.case_id(n), case_of(case), answer_of(case) or None) for n, case in enumerate(gold.cases)],
    )
    errors = [(r.get("item_id"), r.get("reason")) for r in rows if r.get("status") == "error"]
    if errors:
        first = "; ".join(f"{i}: {e}" for i, e in errors[:3])
        raise EndpointError(
            f"{len(errors)} gold grading request(s) failed at the endpoint ({first}); nothing was recorded for them"
        )
    return rows


def judged_by(grades: Sequence[dict[str, Any]]) -> list[str]:
    """Every judge that graded, as its server named itself in its replies (a panel: each of its
    judges), else the model asked for."""
    names: set[str] = set()
    for grade in grades:
        for row in grade["judges"] if isinstance(grade.get("judges"), list) else [grade]:
            name = row.get("served_model") or row.get("judge_model")
            if isinstance(name, str):
                names.add(name)
    return sorted(names)


def _grade_record(
    ws: Workspace,
    gs: GateSettings,
    name: str,
    rubric: Rubric,
    gold: GoldSet,
    binding: dict[str, Any],
    key: SigningKey | None,
) -> LedgerRecord:
    """Grade the gold set with the judge now: the new record (signed with ``key`` when given)."""
    grades = grade_gold(ws, gs, rubric, gold)
    recorded = []
    for i, grade in enumerate(grades):
        recorded.append(
            {
                "id": gold.case_id(i),
                "human": copy.deepcopy(gold.human[i]),
                "judge": judge_labels(rubric, grade),
                "status": grade.get("status"),
                "reason": grade.get("reason"),
                # kept so that verification can re-derive the judge labels and the prompt
                "raw": grade.get("raw"),
                "prompt_hash": grade.get("prompt_hash"),
            }
        )
        if isinstance(grade.get("judges"), list):  # a panel: every judge's reply (None: no verdict)
            recorded[-1]["raws"] = [j.get("raw") if j.get("status") == "scored" else None for j in grade["judges"]]
    stats = measure(rubric, recorded)
    result = {
        "kind": rubric.kind,
        "judged_by": judged_by(grades),
        "cases": recorded,
        "stats": [s.to_dict() for s in stats],
    }
    record = make_record(KIND, name, binding, result)
    return key.sign(record) if key is not None else record
