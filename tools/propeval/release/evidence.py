"""The curation evidence a release shows: the judge gate per rubric and the answerability records.

Both are read from the ledger with the gates' own functions (record reading, signature check,
staleness, re-derivation, the agreement statistics and their thresholds), so the card and the
report say what ``propeval gate`` would say, in plain words:

* a rubric's judge **passes** when its record is signed by a listed maintainer, fresh, follows from
  the gold file and the raw replies, and every statistic is at or above its threshold; it **fails**
  when a fresh record's statistics are below a threshold (a failing unsigned record still fails:
  nobody vouches for it, but it shows the judge is not validated); otherwise it is **not checked**
  (unsigned, stale, edited by hand) or **not run** (no record);
* an answerability record counts as evidence only when the gate accepts it (signed, fresh,
  re-derived) *and* its judge passes the judge gate for its rubric *and* neither its judge nor its
  reference model is a model that fails the judge gate. Every other record is shown as
  "not checked", with the reason; nothing here depends on a model's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.errors import UsageError
from propeval.loader import LoadError
from propeval.outcomes import gate_word
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.workspace import Workspace

# Below this, Cohen's kappa (and Krippendorff's alpha) is at most "slight" agreement (Landis & Koch
# 1977): indistinguishable from guessing for a gate's purposes.
CHANCE_LEVEL = 0.2

PASS, FAIL, NOT_CHECKED, NOT_RUN, NOT_CURRENT = "pass", "fail", "not checked", "not run", "not current"


def same_model(a: str | None, b: str | None) -> bool:
    """Model ids compared without case, surrounding blanks or a provider prefix ("openai/gpt-x")."""

    def norm(m: str | None) -> str:
        return (m or "").strip().lower().rsplit("/", 1)[-1]

    return bool(a and b) and norm(a) == norm(b)


@dataclass
class StatRow:
    """One agreement statistic of a judge-gate record against its threshold."""

    name: str
    value: float | None
    n: int
    threshold_key: str
    threshold: float
    reason: str | None = None

    @property
    def passed(self) -> bool:
        return self.value is not None and self.value >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "n": self.n,
            "threshold": self.threshold,
            "threshold_key": self.threshold_key,
            "passed": self.passed,
            "reason": self.reason,
        }


@dataclass
class JudgeEvidence:
    """The judge gate of one rubric, as the card states it."""

    rubric: str
    ledger: str
    status: str  # pass | fail | not checked | not current | not run
    judge_model: str | None = None
    cases: int = 0
    trust: str = "missing"  # signed | unsigned | unknown-key | edited | stale | corrupt | missing
    signer: str | None = None
    stats: list[StatRow] = field(default_factory=list)
    verdict: str = ""  # one plain sentence
    detail: str = ""  # why it is not checked, or what is stale
    # field -> (labels, matrix): rows are the human labels, columns the judge's
    confusions: dict[str, tuple[list[str], list[list[int]]]] = field(default_factory=dict)
    mode: str = "required"  # the judge gate's mode in [tool.propeval.gates]

    @property
    def word(self) -> str:
        """The gate's word, as ``propeval run`` and ``ci`` say it (:mod:`propeval.outcomes`)."""
        from propeval.outcomes import gate_word

        return gate_word(self.status == PASS, self.mode)

    @property
    def headline(self) -> StatRow | None:
        """The best chance-corrected statistic (kappa or alpha): when even it is below
        :data:`CHANCE_LEVEL`, the judge agrees with humans no better than chance on every measure."""
        chance = [s for s in self.stats if s.value is not None and ("kappa" in s.name or "alpha" in s.name)]
        return max(chance, key=lambda s: (s.value, s.name)) if chance else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric,
            "ledger": self.ledger,
            "status": self.status,
            "mode": self.mode,
            "word": self.word,
            "judge_model": self.judge_model,
            "cases": self.cases,
            "trust": self.trust,
            "signer": self.signer,
            "verdict": self.verdict,
            "detail": self.detail,
            "stats": [s.to_dict() for s in self.stats],
        }


def _trust(reading: Any) -> tuple[str, str | None]:
    v = reading.verification
    state = {"signed": "signed", "unsigned": "unsigned", "unknown-key": "unknown-key"}.get(v.state, "edited")
    return state, v.signer if v.state == "signed" else None


def _verdict(e: JudgeEvidence) -> str:
    if e.status == NOT_RUN:
        run = f"propeval gate judge --rubric {e.rubric} --online"
        return f"no judge-gate record: scores from this judge are not validated (run: {run})"
    if e.status == NOT_CURRENT:
        return f"the judge-gate record is not current ({e.detail}): scores from this judge are not validated"
    if e.status == NOT_CHECKED:
        return f"the judge-gate record is not checked ({e.detail}): scores from this judge are not validated"
    if e.status == PASS:
        return "judge agreement with humans is at or above every threshold"
    head = e.headline
    unsigned = f" (the record is {e.detail})" if e.detail else ""
    if head is not None and head.value is not None and head.value < CHANCE_LEVEL:
        return f"judge agreement with humans is at chance level: scores from this judge are not meaningful{unsigned}"
    below = ", ".join(s.name for s in e.stats if not s.passed)
    return (
        f"judge agreement with humans is below threshold ({below}): scores from this judge are not validated{unsigned}"
    )


def judge_evidence(ws: Workspace, rubric_names: list[str]) -> tuple[list[JudgeEvidence], list[Problem]]:
    """The judge gate of each rubric, read offline from ``ledger/judge/<rubric>.json`` by the gate's
    own :func:`~propeval.gates.judge_gate.read` (the same reading as the gate's, in one workspace)."""
    from propeval.gates.judge_gate import measure, read, threshold_key

    gs = ws.gate_settings
    out: list[JudgeEvidence] = []
    warnings: list[Problem] = []
    for name in rubric_names:
        reading = read(ws, gs, name)
        loaded = reading.loaded
        e = JudgeEvidence(name, loaded.relpath, NOT_RUN, mode=gs.mode("judge"))
        out.append(e)
        if loaded.problem is not None:
            e.status, e.trust, e.detail = NOT_CHECKED, "corrupt", loaded.problem.message
            e.verdict = _verdict(e)
            continue
        if loaded.record is None:
            e.verdict = _verdict(e)
            continue
        binding = loaded.record["binding"]
        e.judge_model = binding.get("judge_model") if isinstance(binding.get("judge_model"), str) else None
        e.trust, e.signer = _trust(reading)
        if reading.load_error is not None:
            p = reading.load_error
            warnings.append(
                Problem(
                    p.path,
                    p.line,
                    p.col,
                    "release-input",
                    f"{name}: {p.message} (judge evidence not checked)",
                    severity=Severity.WARNING,
                )
            )
            e.status, e.detail = NOT_CHECKED, f"the rubric or its gold set does not load: {p.message}"
            e.verdict = _verdict(e)
            continue
        if reading.stale:
            e.status, e.trust, e.detail = NOT_CURRENT, "stale", "; ".join(reading.stale)
            e.verdict = _verdict(e)
            continue
        if e.trust == "edited":
            e.status, e.detail = NOT_CHECKED, "its signature does not match its content"
            e.verdict = _verdict(e)
            continue
        if reading.stub:
            e.status, e.detail = NOT_CHECKED, reading.stub
            e.verdict = _verdict(e)
            continue
        recorded = loaded.record["result"].get("cases")
        cases = [c for c in recorded if isinstance(c, dict)] if isinstance(recorded, list) else []
        e.cases = len(cases)
        assert reading.rubric is not None
        e.stats = [
            StatRow(s.name, s.value, s.n, threshold_key(s.name), gs.thresholds[threshold_key(s.name)], s.reason)
            for s in measure(reading.rubric, cases)
        ]
        e.confusions = confusions(cases, reading.rubric.spec.agreement_fields)
        caveats = []
        if e.trust == "unsigned":
            caveats.append("unsigned: no maintainer vouches for it")
        elif e.trust == "unknown-key":
            caveats.append("signed by a key that is not on [tool.propeval.signers]")
        # As the gate: only a record signed by a listed key is re-derived (reading.derived).
        caveats += [f.message for f in reading.derived if not f.warning]
        e.detail = "; ".join(caveats)
        # A record that shows a failing judge is enough to distrust the judge, whoever made it;
        # only a record that passes every check can vouch for one.
        if not e.stats or any(not s.passed for s in e.stats):
            e.status = FAIL
        else:
            e.status = NOT_CHECKED if caveats else PASS
        e.verdict = _verdict(e)
    return out, warnings


def confusions(cases: list[dict[str, Any]], fields: tuple[str, ...]) -> dict[str, tuple[list[str], list[list[int]]]]:
    """Human x judge counts per agreement field over the scored cases; a mapping field (fact
    states) counts each of its keys once."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for c in cases:
        human, judge = c.get("human"), c.get("judge")
        if not isinstance(human, dict) or not isinstance(judge, dict):
            continue
        for f in fields:
            h, j = human.get(f), judge.get(f)
            if isinstance(h, dict) and isinstance(j, dict):
                pairs.setdefault(f, []).extend((str(h[k]), str(j.get(k))) for k in sorted(h))
            elif not isinstance(h, dict) and not isinstance(j, dict):
                pairs.setdefault(f, []).append((str(h), str(j)))
    out = {}
    for f, got in pairs.items():
        labels = sorted({x for pair in got for x in pair})
        index = {label: n for n, label in enumerate(labels)}
        matrix = [[0] * len(labels) for _ in labels]
        for h, j in got:
            matrix[index[h]][index[j]] += 1
        out[f] = (labels, matrix)
    return out


# --------------------------------------------------------------------------- answerability


@dataclass
class AnswerabilityGroup:
    """The answerability records made by one reference model and one judge, under one rubric."""

    answer_model: str
    judge_model: str
    rubric: str
    judge_status: str  # the judge gate's status for this rubric and judge model
    judge_word: str = "failed"  # that status in run's words (propeval.outcomes): ok, advisory or failed
    records: int = 0
    counted: int = 0  # records that count as evidence
    passed: int = 0  # of the counted, those at or above min_fact_score
    not_checked: dict[str, int] = field(default_factory=dict)  # reason -> records

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.counted if self.counted else None

    @property
    def judge_label(self) -> str:
        """The judge gate's word for this judge, and "(not run)" when this judge model has no judge
        gate record under the rubric: the word alone would not say whether it was tried."""
        return f"{self.judge_word} ({NOT_RUN})" if self.judge_status == NOT_RUN else self.judge_word

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer_model": self.answer_model,
            "judge_model": self.judge_model,
            "rubric": self.rubric,
            "judge_status": self.judge_status,
            "judge_word": self.judge_word,
            "records": self.records,
            "counted": self.counted,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "not_checked": dict(sorted(self.not_checked.items())),
        }


@dataclass
class AnswerabilityEvidence:
    """Every active item's answerability record, grouped by who made it."""

    ledger: str
    min_fact_score: int
    items: int = 0
    missing: int = 0
    groups: list[AnswerabilityGroup] = field(default_factory=list)
    # item id -> "pass" | "fail" | "not checked: <reason>" | "no record"
    per_item: dict[str, str] = field(default_factory=dict)
    mode: str = "required"  # the answerability gate's mode in [tool.propeval.gates]

    @property
    def word(self) -> str:
        """The gate's word (:mod:`propeval.outcomes`): ``ok`` only when every active item has
        evidence that counts and passes."""
        from propeval.outcomes import gate_word

        return gate_word(self.passed == self.items, self.mode)

    @property
    def counted(self) -> int:
        return sum(g.counted for g in self.groups)

    @property
    def passed(self) -> int:
        return sum(g.passed for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ledger": self.ledger,
            "min_fact_score": self.min_fact_score,
            "mode": self.mode,
            "word": self.word,
            "items": self.items,
            "missing": self.missing,
            "counted": self.counted,
            "passed": self.passed,
            "groups": [g.to_dict() for g in self.groups],
        }


def answerability_evidence(ws: Workspace, judges: list[JudgeEvidence]) -> AnswerabilityEvidence:
    """Read each active item's answerability record and decide whether it counts (see the module doc).

    Each record is judged by the gate's own :func:`~propeval.gates.answerability.read`, shared with
    the gate step in one workspace: read once, its signature checked once."""
    from propeval.gates import answerability as gate

    gs = ws.gate_settings
    corpus = ws.corpus
    out = AnswerabilityEvidence(ws.ledger_paths.rel(gate.KIND), gs.min_fact_score, mode=gs.mode("answerability"))
    failing = [j.judge_model for j in judges if j.status == FAIL and j.judge_model]
    by_rubric = {j.rubric: j for j in judges}
    rubrics: dict[str, Any] = {}
    groups: dict[tuple[str, str, str], AnswerabilityGroup] = {}
    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        claim = corpus.claim_of(item)
        if claim is None:
            continue
        out.items += 1
        loaded = ws.ledger.read(gate.KIND, item.id)
        if loaded.record is None and loaded.problem is None:
            out.missing += 1
            out.per_item[item.id] = "no record"
            continue
        binding = loaded.record["binding"] if loaded.record is not None else {}
        answer_model = str(binding.get("answer_model") or "?")
        judge_model = str(binding.get("judge_model") or "?")
        rubric_name = str(binding.get("rubric") or gs.rubric)
        judge = by_rubric.get(rubric_name)
        judge_status = NOT_RUN
        if judge is not None:
            judge_status = judge.status if same_model(judge.judge_model, judge_model) else NOT_RUN
        key = (answer_model, judge_model, rubric_name)
        if key not in groups:
            word = gate_word(judge_status == PASS, gs.mode("judge"))
            groups[key] = AnswerabilityGroup(answer_model, judge_model, rubric_name, judge_status, word)
        g = groups[key]
        g.records += 1
        reason = ""
        if loaded.problem is not None:
            reason = "record does not load"
        else:
            if rubric_name not in rubrics:
                try:
                    rubrics[rubric_name] = ws.rubrics.load(rubric_name)
                except (LoadError, UsageError):  # a record may name any rubric, even an unusable name
                    rubrics[rubric_name] = None
            rubric = rubrics[rubric_name]
            verdict = gate.read(ws, gs, item, claim, rubric).verdict if rubric is not None else None
            state = verdict[0] if verdict is not None else "passed"
            # A model that fails the judge gate outranks what is wrong with the record itself.
            if any(same_model(m, judge_model) for m in failing):
                reason = f"judge {judge_model} fails the judge gate"
            elif any(same_model(m, answer_model) for m in failing):
                reason = f"reference model {answer_model} fails the judge gate"
            elif rubric is None:
                reason = f"rubric {rubric_name} does not load"
            elif state in ("corrupt", "unsigned", "forged", "stale", "unscored", "missing"):
                reason = {"forged": "record does not verify", "corrupt": "record does not load"}.get(
                    state, f"record {state}"
                )
            elif judge_status != PASS:
                reason = f"judge {judge_model} has no passing judge gate for {rubric_name}"
        if reason:
            g.not_checked[reason] = g.not_checked.get(reason, 0) + 1
            out.per_item[item.id] = f"not checked: {reason}"
            continue
        g.counted += 1
        passed = state != "failed"
        g.passed += passed
        out.per_item[item.id] = "pass" if passed else "fail"
    out.groups = [groups[k] for k in sorted(groups)]
    return out
