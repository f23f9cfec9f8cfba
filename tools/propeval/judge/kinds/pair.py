"""The ``pair`` kind: whether two prompts ask the same question (the dedup verifier's rubric,
``rubrics/same-question-v1``).

A pair goes through the judge engine as an item and its answer do: prompt A is the ``question``,
prompt B the ``answer``, each fenced, so the engine's cache, re-asks, panel, cost report and
judge gate serve it unchanged. The verdict is one label of the rubric's ``judgement`` set (``same``
or ``different``) with its ``rationale``; a panel's verdict is the majority, and a tie is ``different``
(a tie is no evidence that the two are one question). The judge gate compares ``judgement``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from propeval.judge.kinds.base import (
    Drawer,
    Fail,
    HarnessScore,
    Kind,
    KindView,
    Outcome,
    Panel,
    Row,
    Table,
    VerdictError,
    schema_errors,
    status_counts,
    text_table,
)

if TYPE_CHECKING:
    from propeval.judge.kinds.base import ScoreContext
    from propeval.judge.rubric import Rubric

SAME, DIFFERENT = "same", "different"
FIELDS = ("judgement", "rationale")


class PairView(KindView):
    """How a ``pair`` rubric's verdicts are shown: the share judged the same question."""

    def harness_names(self, rubric: Rubric) -> list[str]:
        return [SAME]

    def verdict_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        if fields["status"] != "scored":
            return HarnessScore(None, {SAME: None}, f"{fields['status']}: no verdict")
        same = int(fields.get("judgement") == SAME)
        return HarnessScore(same, {SAME: same}, f"{fields.get('judgement')}: {fields.get('rationale')}")

    def format_text(self, report: dict[str, Any]) -> list[str]:
        rows = [
            [
                r["model"],
                r["language"],
                str(r["pairs"]),
                str(r["scored"]),
                str(r[SAME]),
                str(r[DIFFERENT]),
                str(r["unscored"]),
            ]
            for r in report["table"]
        ]
        return ["", *text_table(["model", "languages", "pairs", "scored", SAME, DIFFERENT, "unscored"], rows)]

    def report_panel(self, rubric: Rubric, rows: list[Row], draw: Drawer | None) -> Panel:
        report = rubric.spec.score([("", rows)], rubric)
        table = Table(
            ["model", "languages", "pairs", "scored", SAME, DIFFERENT],
            [[r["model"], r["language"], r["pairs"], r["scored"], r[SAME], r[DIFFERENT]] for r in report["table"]],
        )
        return Panel(rubric.name, rubric.spec.name, tables=[table], cells=report["table"])


class Pair(Kind):
    name = "pair"
    record_fields = FIELDS
    agreement_fields = ("judgement",)
    combine_rule = "the majority verdict of the scoring judges; a tie is 'different'"

    def check_rubric(self, data: dict[str, Any], placeholders: set[str], fail: Fail) -> None:
        labels = data.get("labels") or {}
        if sorted(map(str, labels.get("judgement") or [])) != [DIFFERENT, SAME]:
            raise fail("/labels/judgement", f"a pair rubric's labels.judgement is [{SAME}, {DIFFERENT}]")
        return None

    def validate(self, data: dict[str, Any], rubric: Rubric, fact_ids: list[str], answer: str, shown: str) -> Outcome:
        """One verdict of the rubric's set and a reason (a non-empty string)."""
        allowed = rubric.labels.get("judgement", [])
        verdict = data.get("judgement")
        if verdict not in allowed:
            raise VerdictError(f"judgement is {verdict!r}; use one of {', '.join(map(str, allowed))}")
        reason = data.get("rationale")
        if not isinstance(reason, str) or not reason.strip():
            raise VerdictError("rationale is missing; say in one sentence why the two ask the same or another question")
        schema_errors(data, rubric.verdict_schema)
        return Outcome(data, {"judgement": verdict, "rationale": reason.strip()})

    def combine(self, verdicts: Sequence[dict[str, Any]], rubric: Rubric) -> tuple[dict[str, Any], dict[str, Any]]:
        votes = Counter(v.get("judgement") for v in verdicts)
        same, different = votes.get(SAME, 0), votes.get(DIFFERENT, 0)
        ties: dict[str, Any] = {"judgement": [same, different]} if same == different else {}
        verdict = SAME if same > different else DIFFERENT
        reason = next((str(v.get("rationale")) for v in verdicts if v.get("judgement") == verdict), "")
        return {"judgement": verdict, "rationale": reason}, ties

    def check_record(self, record: dict[str, Any], rubric: Rubric | None) -> str | None:
        allowed = rubric.labels.get("judgement", []) if rubric else [SAME, DIFFERENT]
        if record.get("judgement") not in allowed:
            got = record.get("judgement")
            return f"status is scored but judgement is {got!r}, not a label of the rubric; re-grade the pair"
        return None

    def score(
        self, per_run: list[tuple[str, list[Row]]], rubric: Rubric, ctx: ScoreContext | None = None
    ) -> dict[str, Any]:
        """How many pairs each judge called the same question, by model and languages."""
        cells: dict[tuple[str, str], list[Row]] = defaultdict(list)
        for _run, rows in per_run:
            for r in rows:
                cells[(r.model, str(r.item.get("language") or "(none)"))].append(r)
        table = []
        for (model, language), rows in sorted(cells.items()):
            scored = [r.grade or {} for r in rows if r.status == "scored"]
            table.append(
                {
                    "model": model,
                    "language": language,
                    "pairs": len(rows),
                    "scored": len(scored),
                    SAME: sum(g.get("judgement") == SAME for g in scored),
                    DIFFERENT: sum(g.get("judgement") == DIFFERENT for g in scored),
                    **status_counts(rows),
                }
            )
        return {"rubric": rubric.name, "kind": self.name, "runs": [run for run, _ in per_run], "table": table}
