"""Verify a ledger record: who signed it, and everything in it that can be derived again.

A record counts only when it is signed by a key on ``[tool.propeval.signers]`` (read from the
base branch in ``propeval ci``). A signature proves that a maintainer vouched for the bytes, not
that a model produced them, so the gates also re-derive, with the engine's own code:

* answerability: the verdict is valid for the item's current facts; the fact states, the fact
  score (the rubric's table) and the propaganda score (the verbatim-quote rule) follow from it;
  the judge prompt's hash follows from the item, its claim, the rubric and the recorded answer;
* judge: the cases are the gold file's cases and their human labels are the gold file's; each
  judge label follows from the judge's raw reply, and each prompt hash from the gold case.
  Judge labels that equal the human labels in every case get a warning: a perfect judge and
  labels copied from the gold file look the same, and only the signature says a maintainer ran it.

Rules: ``ledger-unsigned``, ``ledger-signature`` (malformed, or the bytes changed after signing),
``ledger-signer`` (a key not on the list), ``ledger-derived`` (a value that does not follow),
``ledger-judge-copied`` (a warning).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propeval import signing
from propeval.corpus import Claim, Item

if TYPE_CHECKING:
    from propeval.judge.gold import GoldSet
    from propeval.judge.rubric import Rubric


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    pointer: str = ""
    warning: bool = False  # worth a reviewer's look, but not proof of anything


def signature(v: signing.Verdict, signers: Mapping[str, str], rel: str) -> Finding | None:
    """The problem with a record's signature verdict ``v`` (:meth:`LedgerView.verdict`), or None
    when a listed maintainer key signed it."""
    if v.state == "signed":
        return None
    if v.state == "unsigned":
        return Finding(
            "ledger-unsigned",
            "unsigned: not checked; a record counts only when a maintainer signed it "
            f"(a maintainer makes it with --online, or signs one they made: propeval ledger sign {rel})",
        )
    if v.state == "unknown-key":
        listed = ", ".join(sorted(signers)) or "none"
        return Finding(
            "ledger-signer",
            f"signed by a key that is not on the list of maintainer keys ([tool.propeval.signers]: {listed}); "
            "a maintainer re-makes or re-signs it (propeval ledger resign)",
            "/signature/key",
        )
    if v.state == "bad":
        return Finding(
            "ledger-signature",
            f"the signature by {v.signer} does not match the record: it was changed after signing; "
            "restore it (git checkout) or have a maintainer make it again",
            "/signature/value",
        )
    return Finding("ledger-signature", f"the signature is malformed: {v.detail}", "/signature")


def _derived(message: str, pointer: str) -> Finding:
    return Finding("ledger-derived", message, pointer)


def _facts_fields(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: fields.get(k) for k in ("fact_states", "fact_score", "propaganda", "frame_adopted")}


def stub_made(result: dict[str, Any]) -> str:
    """Why a record's answer or verdict came from the plumbing stub (``serve-local --stub``), which
    names itself in every reply, and so proves nothing of a model; "" when neither did. Each of
    ``answered_by`` and ``judged_by`` is one model id, or a list of them (a judge-gate record: every
    judge that graded the gold set)."""
    from propeval.judge.stub import STUB_MODEL

    def named(value: Any) -> list[Any]:
        return value if isinstance(value, list) else [value]

    who = [k for k in ("answered_by", "judged_by") if STUB_MODEL in named(result.get(k))]
    if not who:
        return ""
    return (
        f"made against the plumbing stub ({STUB_MODEL}: {' and '.join(who)}), not a model: not checked, and "
        "never signed; make it against the reference model"
    )


def answerability(rubric: Rubric, item: Item, claim: Claim, record: dict[str, Any]) -> list[Finding]:
    """What in an answerability record does not follow from its answer and verdict."""
    from propeval.judge.prompt import Case
    from propeval.judge.verdict import rederive

    result = record["result"]
    stub = stub_made(result)
    if stub:
        return [Finding("ledger-derived", stub, "/result/answered_by")]
    status = result.get("status")
    if status != "scored":
        return []  # not a pass: the gate fails it anyway
    verdict, answer = result.get("verdict"), result.get("answer")
    if not isinstance(verdict, dict) or not isinstance(answer, str):
        return [Finding("ledger-derived", "a scored record needs its answer and the judge's verdict", "/result")]
    try:
        fields, prompt_hash = rederive(rubric, Case.of(item, claim), answer, json.dumps(verdict))
    except ValueError as e:
        return [_derived(f"the recorded verdict is not a valid verdict for this item: {e}", "/result/verdict")]
    out = []
    derived = _facts_fields(fields)
    for key, value in derived.items():
        if result.get(key) != value:
            out.append(
                Finding(
                    "ledger-derived",
                    f"result {key} is {result.get(key)!r}, but the verdict gives {value!r} "
                    f"(rubric {rubric.name}: states {derived['fact_states']})",
                    f"/result/{key}",
                )
            )
    if result.get("prompt_hash") != prompt_hash:
        out.append(
            Finding(
                "ledger-derived",
                "prompt_hash is not the hash of the judge prompt for this item, rubric and answer",
                "/result/prompt_hash",
            )
        )
    return out


def judge(rubric: Rubric, gold: GoldSet, record: dict[str, Any]) -> list[Finding]:
    """What in a judge-gate record does not follow from the gold file and the judge's raw replies."""
    from propeval.judge.gold import answer_of, case_of
    from propeval.judge.verdict import rederive

    stub = stub_made(record["result"])
    if stub:
        return [Finding("ledger-derived", stub, "/result/judged_by")]
    fields = rubric.spec.agreement_fields
    cases = record["result"].get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        return [Finding("ledger-derived", "the record holds no cases", "/result/cases")]
    want = [gold.case_id(i) for i in range(len(gold.cases))]
    got = [str(c.get("id")) for c in cases]
    if got != want:
        return [_derived(f"the cases {got[:5]} are not the gold file's cases {want[:5]}", "/result/cases")]
    out: list[Finding] = []
    # what is wrong -> the case ids it is wrong in, so one line says it for every case
    wrong: dict[str, list[str]] = {}
    scored = 0
    copied = 0
    for n, (case, row) in enumerate(zip(gold.cases, cases, strict=True)):
        human = gold.human[n]
        if row.get("human") != human:
            wrong.setdefault("their human labels are not the gold file's", []).append(want[n])
        labels = row.get("judge")
        if labels is None:
            continue
        raws = row.get("raws") if "raws" in row else [row.get("raw")]  # a panel keeps each judge's reply
        if (
            not isinstance(raws, list)
            or not any(isinstance(r, str) for r in raws)
            or not all(r is None or isinstance(r, str) for r in raws)
            or not isinstance(row.get("prompt_hash"), str)
        ):
            wrong.setdefault("judge labels without the judge's raw reply and prompt hash", []).append(want[n])
            continue
        if "raws" in row and sum(bool(r) for r in raws) < len(raws) // 2 + 1:
            # a panel's labels need a majority of its judges (propeval.judge.grade.majority)
            wrong.setdefault("panel labels from fewer than a majority of the panel's judges", []).append(want[n])
            continue
        try:
            each = [rederive(rubric, case_of(case), answer_of(case), r) for r in raws if r]
        except ValueError:
            wrong.setdefault("the raw reply is not a valid verdict", []).append(want[n])
            continue
        prompt_hash = each[0][1]
        derived = each[0][0] if "raws" not in row else rubric.spec.combine([d for d, _ in each], rubric)[0]
        if labels != {f: derived.get(f) for f in fields}:
            wrong.setdefault("the judge labels do not follow from the raw reply", []).append(want[n])
        if row["prompt_hash"] != prompt_hash:
            wrong.setdefault("prompt_hash is not the hash of the judge prompt for the gold case", []).append(want[n])
        scored += 1
        copied += labels == human
    for what, ids in wrong.items():
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        out.append(_derived(f"{what}: {len(ids)} case(s) ({shown})", "/result/cases"))
    if scored and copied == scored:
        out.append(
            Finding(
                "ledger-judge-copied",
                f"the judge labels equal the human labels in all {scored} scored case(s): a perfect judge, or labels "
                "copied from the gold file; no check can tell them apart, so a reviewer reads the raw replies",
                "/result/cases",
                warning=True,
            )
        )
    return out
