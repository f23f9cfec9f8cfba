"""The run viewer and the answerability ledger, read through propeval's own readers.

* A run under a rubric: :func:`propeval.judge.runs.read_graded` (the one reader of graded runs) joins
  each item's latest answer with its latest grade, validated. Each row shows the answer, the judge's
  raw reply, the validated verdict, the fact states and the scores, filtered by status (scored,
  unscored, unanswered, ungraded, truncated) and by disagreement with a human label file (``item_id``
  and the rubric's fields, as `agree unblind` writes them), compared unit by unit as `agree judges`
  compares them (the kind's ``rating_units``).
* The answerability ledger: every active item's record judged as the gate judges it
  (:func:`propeval.gates.answerability.verdict`): passing, or why not (missing, corrupt, unsigned,
  forged, stale, unscored, failed), with the reference answer and its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.loader import relative_path
from propeval.review.rating import label_rows

if TYPE_CHECKING:
    from propeval.config import Config
    from propeval.corpus import Corpus
    from propeval.workspace import Workspace

STATUSES = ("scored", "unscored", "unanswered", "ungraded", "truncated")


@dataclass(frozen=True)
class GradedFile:
    run: str
    rubric: str
    path: Path


def graded_files(config: Config) -> list[GradedFile]:
    """Every ``<runs_dir>/<run>/grades-<rubric>.jsonl``."""
    from propeval.judge import runs

    out = []
    for p in runs.find_graded(config.root / config.settings.judge.runs_dir):
        rubric = runs.rubric_of(p)
        if rubric:
            out.append(GradedFile(p.parent.name, rubric, p))
    return out


@dataclass
class RunRow:
    item_id: str
    model: str
    status: str
    truncated: bool
    question: str
    answer: str | None
    finish_reason: str | None
    raw: str | None
    verdict: Any
    fields: dict[str, Any]  # the kind's record fields (fact_states, fact_score, propaganda, ...)
    reason: str | None
    human: dict[str, Any] | None = None  # the human labels of the item, unit by unit
    disagree: list[str] = field(default_factory=list)  # "fact_state f2: judge stated, human missed"


@dataclass
class RunView:
    run: str
    rubric: str
    kind: str
    rows: list[RunRow]
    counts: dict[str, int]
    problems: list[str]
    partial: str | None
    human: str | None = None
    shown: list[RunRow] = field(default_factory=list)


def _human_labels(path: Path, kind: Any, root: Path) -> dict[str, dict[str, Any]]:
    """item_id -> unit -> label, from a human label file (strict loader)."""
    out: dict[str, dict[str, Any]] = {}
    for _, line in label_rows(path, root):
        item = line.get("item_id")
        if not isinstance(item, str):
            continue
        units = out.setdefault(item, {})
        for fname, rated in kind.rating_units(line).items():
            for suffix, label in rated.items():
                if label is not None:
                    units[f"{fname} {suffix}".strip()] = label
    return out


def run_view(
    config: Config,
    corpus: Corpus,
    graded: GradedFile,
    *,
    status: str | None = None,
    human: Path | None = None,
    disagree_only: bool = False,
) -> RunView:
    """One run under one rubric, every row, and the rows the filters keep in ``shown``.

    Raises:
        LoadError: a line of the grades, answers or human file is not JSON; the rubric does not load.
    """
    from propeval.judge import runs
    from propeval.judge.rubric import load_rubric

    rubric = load_rubric(config.root / config.settings.judge.rubrics_dir, graded.rubric, root=config.root)
    kind = rubric.spec
    items = {i.id: i.data for i in corpus.items.values()}
    run = runs.read_graded(graded.path, kind, root=config.root, rubric=rubric, items=items)
    humans = _human_labels(human, kind, config.root) if human is not None else {}
    rows: list[RunRow] = []
    for r in run.rows:
        ans = r.answer or {}
        grade = r.grade or {}
        item = corpus.items.get(r.item_id)
        row = RunRow(
            item_id=r.item_id,
            model=r.model,
            status=r.status,
            truncated=ans.get("finish_reason") == "length",
            question=item.prompt if item is not None else "",
            answer=ans.get("answer") if isinstance(ans.get("answer"), str) else None,
            finish_reason=ans.get("finish_reason"),
            raw=grade.get("raw") if isinstance(grade.get("raw"), str) else None,
            verdict=grade.get("verdict"),
            fields={f: grade.get(f) for f in (*kind.record_fields, "propaganda_judged") if f in grade},
            reason=grade.get("reason") if isinstance(grade.get("reason"), str) else None,
        )
        if human is not None and r.item_id in humans:
            row.human = humans[r.item_id]
            if r.status == "scored":
                judged = {
                    f"{fname} {suffix}".strip(): label
                    for fname, rated in kind.rating_units(grade).items()
                    for suffix, label in rated.items()
                }
                row.disagree = [
                    f"{unit}: judge {judged.get(unit)!s}, human {label!s}"
                    for unit, label in sorted(row.human.items())
                    if unit in judged and judged[unit] != label
                ]
        rows.append(row)
    counts = {s: sum(1 for r in rows if (r.truncated if s == "truncated" else r.status == s)) for s in STATUSES}
    view = RunView(
        graded.run,
        graded.rubric,
        rubric.kind,
        rows,
        counts,
        [f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}" for p in run.problems],
        run.partial,
        relative_path(human, config.root) if human is not None else None,
    )
    view.shown = [
        r
        for r in rows
        if (status is None or (r.truncated if status == "truncated" else r.status == status))
        and (not disagree_only or r.disagree)
    ]
    return view


def row_text(row: RunRow) -> str:
    """What a run's text search looks in: the item id, model, question, answer, fact states, reason."""
    states = row.fields.get("fact_states")
    facts = " ".join(f"{k} {v}" for k, v in states.items()) if isinstance(states, dict) else ""
    return "\n".join((row.item_id, row.model, row.question, row.answer or "", facts, row.reason or ""))


# --------------------------------------------------------------------------- answerability


@dataclass
class LedgerRow:
    item_id: str
    path: str
    state: str  # "pass" or the gate's state: missing, corrupt, unsigned, forged, stale, unscored, failed
    why: str
    record: dict[str, Any] | None  # the evidence: answer, fact states, score, models
    content: str = ""  # for a record no listed key signed: what its content would give once signed


def answerability_rows(ws: Workspace) -> tuple[list[LedgerRow], str]:
    """Every active item's answerability record as the gate judges it, and the gate's mode.

    Raises:
        LoadError: the gate's rubric does not load.
    """
    from propeval.gates import answerability as gate

    gs = ws.gate_settings
    corpus = ws.corpus
    rubric = ws.rubrics.load(gs.rubric)
    out: list[LedgerRow] = []
    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        claim = corpus.claim_of(item)
        rel = relative_path(ws.ledger_paths.answerability(item.id), ws.root)
        if claim is None:
            out.append(LedgerRow(item.id, rel, "missing", f"its claim {item.claim_id!r} is missing", None))
            continue
        reading = gate.read(ws, gs, item, claim, rubric)
        binding, loaded, found = reading.binding, reading.loaded, reading.verdict
        record = loaded.record if isinstance(loaded.record, dict) else None
        if found is None:
            score = (record or {}).get("result", {}).get("fact_score")
            out.append(LedgerRow(item.id, rel, "pass", f"fact score {score} >= {gs.min_fact_score}", record))
        else:
            row = LedgerRow(item.id, rel, found[0], found[1], record)
            if record is not None and found[2] in ("ledger-unsigned", "ledger-signer"):
                row.content = _content(gs, item, claim, rubric, record, binding)
            out.append(row)
    return out, gs.mode(gate.KIND)


def ledger_text(row: LedgerRow) -> str:
    """What the ledger's text search looks in: the item id, its state and why, the reference answer."""
    result = (row.record or {}).get("result") or {}
    answer = result.get("answer")
    return "\n".join((row.item_id, row.state, row.why, row.content, answer if isinstance(answer, str) else ""))


def _content(gs: Any, item: Any, claim: Any, rubric: Any, record: dict[str, Any], binding: dict[str, Any]) -> str:
    """What an unsigned record says, checked as the gate checks a signed one: fresh, derivable,
    scored and passing, or which of them it is not."""
    from propeval.gates import verify
    from propeval.ledger.records import stale_reasons

    reasons = stale_reasons(record.get("binding") or {}, binding)
    if reasons:
        return "stale: " + "; ".join(reasons)
    derived = verify.answerability(rubric, item, claim, record)
    if derived:
        return "does not follow: " + "; ".join(f.message for f in derived)
    result = record.get("result") or {}
    score = result.get("fact_score")
    if result.get("status") != "scored" or not isinstance(score, int) or isinstance(score, bool):
        return f"unscored: {result.get('reason') or result.get('status')}"
    if score < gs.min_fact_score:
        return f"fails: fact score {score} is below {gs.min_fact_score}"
    return f"passes: fact score {score} >= {gs.min_fact_score}"


# --------------------------------------------------------------------------- the judge gate


@dataclass
class JudgeCase:
    id: str
    question: str
    answer: str
    status: str
    human: dict[str, Any]  # unit -> label, as agree judges compares them
    judge: dict[str, Any]
    raw: str | None
    reason: str | None
    disagree: list[str] = field(default_factory=list)


@dataclass
class JudgeView:
    rubric: str
    path: str
    state: str  # "signed", or why the gate would not count the record
    stats: list[str]
    cases: list[JudgeCase]
    error: str = ""


def judge_views(ws: Workspace) -> list[JudgeView]:
    """Each rubric's judge-agreement record (``ledger/judge/<rubric>.json``), read as the judge gate
    reads it: every gold case's human and judge labels side by side, and where they differ."""
    from propeval.gates import judge_gate

    gs = ws.gate_settings
    out: list[JudgeView] = []
    for name in ws.rubrics.names:
        reading = judge_gate.read(ws, gs, name)
        view = JudgeView(name, reading.loaded.relpath, "signed", [], [])
        if reading.load_error is not None:
            p = reading.load_error
            view.error = f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}"
        if reading.loaded.problem is not None:
            view.state = f"corrupt: {reading.loaded.problem.message}"
        elif reading.loaded.record is None:
            view.state = f"missing: run propeval gate judge --rubric {name} --online"
        elif reading.stub:
            view.state = reading.stub
        elif reading.signature is not None:
            view.state = reading.signature.message
        elif reading.stale:
            view.state = "stale: " + "; ".join(reading.stale)
        view.stats = [
            f"{s.name}: {'undefined' if s.value is None else f'{s.value:.3f}'} (n={s.n})" for s in reading.stats()
        ]
        gold = {str(c.get("id")): c for c in (reading.gold.cases if reading.gold is not None else [])}
        kind = reading.rubric.spec if reading.rubric is not None else None
        for case in reading.cases or []:
            cid = str(case.get("id"))
            g = gold.get(cid, {})
            human = _units(kind, case.get("human"))
            judged = _units(kind, case.get("judge"))
            row = JudgeCase(
                cid,
                str(g.get("question", "")),
                str(g.get("answer", "")),
                str(case.get("status")),
                human,
                judged,
                case.get("raw") if isinstance(case.get("raw"), str) else None,
                case.get("reason") if isinstance(case.get("reason"), str) else None,
            )
            row.disagree = [
                f"{unit}: judge {judged.get(unit)!s}, human {label!s}"
                for unit, label in sorted(human.items())
                if unit in judged and judged[unit] != label
            ]
            view.cases.append(row)
        out.append(view)
    return out


def _units(kind: Any, labels: Any) -> dict[str, Any]:
    if kind is None or not isinstance(labels, dict):
        return {}
    return {
        f"{fname} {suffix}".strip(): label
        for fname, rated in kind.rating_units(labels).items()
        for suffix, label in rated.items()
        if label is not None
    }
