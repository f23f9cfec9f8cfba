"""The dedup verifier: a judge asks, through the judge engine, whether two prompts ask the same question.

The rubric is data (``rubrics/same-question-v1``, a ``pair`` rubric: prompt A goes where an item's
question goes, prompt B where its answer goes), so a verdict has the judge engine's response
cache, re-asks, panel and token usage, and the judge that answers is the judge gate's own
(:func:`propeval.gates.endpoints.gate_models`). A verifier counts only while its judge-gate record
passes (fresh, signed by a maintainer, every statistic above its threshold, no gold case left
unscored): otherwise every pair is ``not checked`` and no request is sent. A reply that is no
valid verdict after the re-asks leaves its pair ``unscored``: never a verdict.

Each verdict is a ledger record (kind ``dedup-verify``, one per pair; signed when a key is given)
bound to the two texts, the rubric's hash and the judge, holding the judge's raw reply and the
prompt hash, so CI re-derives the verdict offline (:func:`rederive`) as it does a judge-gate case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.corpus import content_hash

if TYPE_CHECKING:
    from propeval.judge.prompt import Case
    from propeval.judge.rubric import Rubric
    from propeval.ledger.records import LedgerRecord
    from propeval.signing import SigningKey
    from propeval.workspace import Workspace

RUBRIC = "same-question-v1"
KIND = "dedup-verify"
NOT_CHECKED = "not checked"
UNSCORED = "unscored"


@dataclass(frozen=True)
class Pair:
    """Two texts to compare, each with its id and language tag."""

    a: str
    text_a: str
    language_a: str
    b: str
    text_b: str
    language_b: str

    @property
    def subject(self) -> str:
        """The record's subject: the two ids in order (``i0001--i0002``)."""
        return "--".join(sorted((self.a, self.b)))

    def case(self) -> Case:
        """What the judge is shown besides prompt B: prompt A, and the two languages."""
        from propeval.judge.prompt import Case

        languages = self.language_a if self.language_a == self.language_b else f"{self.language_a}/{self.language_b}"
        return Case(self.text_a, [], [], languages)


@dataclass(frozen=True)
class Standing:
    """Whether the verifier counts: its judge gate passes (``reasons`` empty), or why not."""

    rubric: str
    reasons: tuple[str, ...]

    @property
    def checked(self) -> bool:
        return not self.reasons


@dataclass
class PairVerdict:
    pair: Pair
    verdict: str  # "same" | "different" | UNSCORED | NOT_CHECKED
    reason: str
    record: LedgerRecord | None = None  # the ledger record of a verdict (None: no verdict)


@dataclass
class Verification:
    """The verdicts of one call, in the order of its pairs, and what the judges cost."""

    standing: Standing
    verdicts: list[PairVerdict] = field(default_factory=list)
    cached: int = 0  # verdicts read from the response cache (no request sent)
    judge_tokens: dict[str, list[int]] = field(default_factory=dict)  # judge model -> [prompt, completion]
    cost: float | None = None  # at [tool.propeval.judge] prices; None when a price is missing


def standing(ws: Workspace, rubric: str = RUBRIC) -> Standing:
    """The judge gate's word on the verifier, read offline: it counts only when nothing is wrong
    with its record (a warning that the judge's labels equal the humans' is no fault)."""
    from propeval.gates.judge_gate import judge_gate

    result = judge_gate(ws, [rubric])
    reasons = tuple(p.message for p in result.problems if p.rule != "ledger-judge-copied")
    return Standing(rubric, reasons)


def verify_pairs(
    ws: Workspace,
    pairs: Sequence[Pair],
    *,
    rubric: str = RUBRIC,
    key: SigningKey | None = None,
    use_cache: bool = True,
) -> Verification:
    """Each pair's verdict from the gate's judge (or panel), with a ledger record per verdict;
    every pair ``not checked`` when the verifier has not passed its gate."""
    from propeval.gates.endpoints import gate_models
    from propeval.judge.grade import GradeOptions, grade_cases
    from propeval.settings.judge import require_keys

    st = standing(ws, rubric)
    out = Verification(st)
    if not st.checked:
        why = f"the verifier {rubric} has not passed its judge gate: {st.reasons[0]}"
        out.verdicts = [PairVerdict(p, NOT_CHECKED, why) for p in pairs]
        return out
    rub = ws.rubrics.load(rubric)
    models = gate_models(ws.settings.judge, ws.gate_settings)
    js = models.judge_settings
    require_keys([models.judge, *models.panel])
    judge_model, settings = models.judge_binding()
    rows = grade_cases(
        js,
        GradeOptions(
            run="dedup-verify",
            rubric=rub.name,
            endpoint=models.judge,
            temperature=js.judge_temperature,
            max_tokens=js.judge_max_tokens,
            max_reasks=js.max_reasks,
            panel=models.panel if len(models.panel) > 1 else (),
            use_cache=use_cache,
        ),
        rub,
        [(p.subject, p.case(), p.text_b) for p in pairs],
    )
    for pair, row in zip(pairs, rows, strict=True):
        if row.get("status") != "scored":
            out.verdicts.append(PairVerdict(pair, UNSCORED, str(row.get("reason") or row.get("status"))))
            continue
        record = _record(rub, pair, row, judge_model, settings)
        out.verdicts.append(
            PairVerdict(
                pair, str(row["judgement"]), str(row.get("rationale") or ""), key.sign(record) if key else record
            )
        )
    out.cached = sum(bool(r.get("cached")) for r in rows)
    _cost(out, rows, js.prices)
    return out


def binding(rubric: Rubric, pair: Pair, judge_model: str, settings: dict[str, Any]) -> dict[str, Any]:
    """What a verdict record is bound to: a change of either text, the rubric or the judge makes it stale."""
    return {
        "rubric": rubric.name,
        "rubric_hash": rubric.hash,
        "pair": [pair.a, pair.b],
        "texts_hash": content_hash([pair.text_a, pair.language_a, pair.text_b, pair.language_b]),
        "judge_model": judge_model,
        "settings": settings,
    }


def _record(
    rubric: Rubric, pair: Pair, row: dict[str, Any], judge_model: str, settings: dict[str, Any]
) -> LedgerRecord:
    from propeval.ledger.records import make_record

    result: dict[str, Any] = {
        "judgement": row["judgement"],
        "rationale": row.get("rationale"),
        "raw": row.get("raw"),
        "prompt_hash": row.get("prompt_hash"),
    }
    if isinstance(row.get("judges"), list):  # a panel: every judge's reply (None: no verdict)
        result["raws"] = [j.get("raw") if j.get("status") == "scored" else None for j in row["judges"]]
    return make_record(KIND, pair.subject, binding(rubric, pair, judge_model, settings), result)


def rederive(rubric: Rubric, pair: Pair, record: dict[str, Any]) -> str | None:
    """What in a verdict record does not follow from the pair and the judge's raw reply (None: it all
    does), with the engine's own prompt filling and validator."""
    from propeval.judge.verdict import VerdictError
    from propeval.judge.verdict import rederive as engine_rederive

    result = record.get("result") or {}
    raw = result.get("raw")
    if not isinstance(raw, str):
        return "the record holds no raw reply"
    try:
        fields, prompt_hash = engine_rederive(rubric, pair.case(), pair.text_b, raw)
    except VerdictError as e:
        return f"the raw reply is no valid verdict: {e}"
    if fields.get("judgement") != result.get("judgement"):
        return f"the raw reply says {fields.get('judgement')!r}, the record {result.get('judgement')!r}"
    if prompt_hash != result.get("prompt_hash"):
        return "the prompt hash does not follow from the pair and the rubric"
    return None


def _cost(out: Verification, rows: Sequence[dict[str, Any]], prices: Any) -> None:
    """The judges' tokens and cost, as ``propeval score`` counts a run's (:func:`propeval.judge.compare.describe`)."""
    from propeval.judge.compare import describe
    from propeval.judge.kinds.base import Row

    graded = [Row("dedup-verify", str(r.get("item_id")), "", str(r.get("status")), {}, r) for r in rows]
    info = describe("dedup-verify", {}, graded, prices=prices)
    out.judge_tokens = {k: list(v) for k, v in info.judge_tokens.items()}
    out.cost = info.cost
