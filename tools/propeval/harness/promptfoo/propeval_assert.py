"""promptfoo's Python assertion for propeval: grade one output with propeval's own grader.

promptfoo calls ``get_assert(output, context)`` per test case. The test's vars carry the item
(``id``), the source (``source``: a release folder, its items.jsonl or a corpus root) and the
rubric (``rubric``, default facts-v1). The judge is propeval's grading loop
(:func:`propeval.harness.source.grade_blocking`) with the source's rubric files, asking the judge
named by ``$PROPEVAL_JUDGE_BASE_URL`` / ``$PROPEVAL_JUDGE_MODEL`` (else the corpus's
``judge_endpoint``). ``python`` must import propeval (set ``PROMPTFOO_PYTHON`` to its venv's python).

The result is the rubric kind's (:meth:`propeval.judge.kinds.base.KindView.harness_score`): for facts
rubrics ``score`` is the fact score / 5 and ``namedScores`` hold ``fact_score``, ``propaganda`` and
``any_propaganda``; for audit rubrics, one 0/1 per label. ``pass`` is true when the item was
graded. An item the judge could not grade fails with the reason: it is *not* a verdict.

``propeval harness promptfoo --out`` copies this file byte for byte into the user's folder: it
imports only the installed propeval package, so that a copy works wherever propeval does.
"""

from __future__ import annotations

from typing import Any

from propeval.harness.source import grade_blocking, open_source
from propeval.judge.client import final_text


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    v = context.get("vars") or {}
    src = open_source(v.get("source"))
    rubric = src.rubric(str(v.get("rubric") or "facts-v1"))
    row = next((r for r in src.items if r["id"] == v.get("id")), None)
    if row is None:
        return {"pass": False, "score": 0, "reason": f"no item {v.get('id')!r} in {src.path}"}
    fields = grade_blocking(src, rubric, row, final_text({"content": output}))
    result = rubric.spec.view.harness_score(rubric, fields)
    if result.score is None:
        return {"pass": False, "score": 0, "reason": result.reason}
    return {"pass": True, "score": result.score, "reason": result.reason, "namedScores": result.named}
