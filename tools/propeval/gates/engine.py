"""The gates' only door into the judge engine (``propeval.judge``).

Everything the gates need from it goes through these few functions, so a change of the engine's
interface is fixed here once. Offline paths use only config and rubric files; nothing here
contacts a network unless ``answer_and_grade`` or ``grade_gold`` is called.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.config import Config
from propeval.corpus import Claim, Item
from propeval.errors import EndpointError
from propeval.gates.settings import GateSettings

if TYPE_CHECKING:  # the engine is imported only on the paths that use it
    from propeval.judge.rubric import Rubric
    from propeval.judge.settings import Endpoint, JudgeSettings

Record = dict[str, Any]  # one line of a run file: an answer or a grade record (RUNS.md)


@dataclass(frozen=True)
class Models:
    answer_model: str
    judge_model: str
    settings: dict[str, Any]


def rubrics_dir(config: Config) -> str:
    from propeval.judge.settings import load_settings

    return load_settings(config).rubrics_dir


def load_rubric(config: Config, name: str) -> Rubric:
    """The judge engine's Rubric, from the rubrics folder the judge settings name."""
    from propeval.judge.rubric import load_rubric as _load
    from propeval.judge.settings import load_settings

    return _load(config.root / load_settings(config).rubrics_dir, name, root=config.root)


def rubric_hash(config: Config, name: str) -> str:
    return load_rubric(config, name).hash


# Gold cases' compared fields by rubric content and case: a run reads each gold set several
# times (the judge step, the answerability records' re-derivation, the release card), and
# validating every label again was most of each read.
_GOLD_FIELDS: dict[tuple[str, str], dict[str, Any]] = {}


def gold_fields(rubric: Rubric, case: dict[str, Any]) -> dict[str, Any]:
    """The compared fields of a gold case's human ``label``, derived as a judge verdict's are.

    Raises ValueError (the engine's VerdictError) when the label is not a valid verdict.
    """
    import copy
    import json

    from propeval.judge.verdict import judge

    try:
        key: tuple[str, str] | None = (rubric.hash, json.dumps(case))  # the rubric's whole content, the whole case
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _GOLD_FIELDS:
        return copy.deepcopy(_GOLD_FIELDS[key])  # callers may change what they get
    label = case.get("label")
    if not isinstance(label, dict):
        raise ValueError("it has no 'label' object (the human verdict)")
    ids = [str(f.get("id")) for f in case.get("facts") or [] if isinstance(f, dict)]
    raw = json.dumps({"rationale": "gold", **label})
    outcome = judge(raw, rubric, fact_ids=ids, answer=str(case.get("answer", "")))
    if outcome.notes:
        raise ValueError("; ".join(outcome.notes))
    fields = {k: outcome.fields.get(k) for k in rubric.spec.agreement_fields}
    if key is not None:
        if len(_GOLD_FIELDS) >= 4096:
            _GOLD_FIELDS.clear()
        _GOLD_FIELDS[key] = fields
    return copy.deepcopy(fields)


def _endpoints(config: Config, gs: GateSettings) -> tuple[JudgeSettings, Endpoint, Endpoint]:
    from propeval.judge.settings import load_settings

    js = load_settings(config)
    answer, judge = gs.endpoint_names(js)
    return js, js.endpoint(answer), js.endpoint(judge)


def models(config: Config, gs: GateSettings) -> Models:
    """The reference and judge model names and the settings a record is bound to (config only)."""
    js, answer, judge = _endpoints(config, gs)
    return Models(
        answer_model=answer.model,
        judge_model=judge.model,
        settings={
            "temperature": js.temperature,
            "max_tokens": js.max_tokens,
            "judge_temperature": js.judge_temperature,
            "judge_max_tokens": js.judge_max_tokens,
        },
    )


def judge_panel(config: Config, gs: GateSettings) -> tuple[Endpoint, ...]:
    """The judge gate's judges: ``judge_panel`` when set (graded as one judge), else the judge alone."""
    js, _answer, judge = _endpoints(config, gs)
    return js.judges(gs.judge_panel) if gs.judge_panel else (judge,)


def judge_binding(config: Config, gs: GateSettings) -> tuple[str, dict[str, Any]]:
    """The judge model (a panel's ``panel(m1, m2, ...)``) and its settings, for the judge gate's binding."""
    from propeval.judge.grade import panel_label

    js, _answer, _judge = _endpoints(config, gs)
    settings: dict[str, Any] = {"judge_temperature": js.judge_temperature, "judge_max_tokens": js.judge_max_tokens}
    panel = judge_panel(config, gs)
    if len(panel) > 1:
        settings["panel"] = [{"endpoint": ep.name, "model": ep.model} for ep in panel]
    return panel_label(panel), settings


def require_keys(endpoints: Sequence[Endpoint]) -> None:
    """Fail before any request when an endpoint's API key variable is unset (the name, never a value)."""
    for ep in endpoints:
        if ep.api_key_env and not os.environ.get(ep.api_key_env):
            raise EndpointError(
                f"--online needs the API key of endpoint {ep.name!r} in the environment variable "
                f"{ep.api_key_env}, which is not set; export it, or run without --online to check the ledger"
            )


def _online_endpoints(config: Config, gs: GateSettings) -> tuple[JudgeSettings, Endpoint, Endpoint]:
    js, answer, judge = _endpoints(config, gs)
    require_keys([answer, judge])
    return js, answer, judge


def _raise_errors(rows: Sequence[Record], what: str) -> None:
    errors = [(r.get("item_id"), r.get("error") or r.get("reason")) for r in rows if r.get("status") == "error"]
    if errors:
        first = "; ".join(f"{i}: {e}" for i, e in errors[:3])
        raise EndpointError(f"{len(errors)} {what} failed at the endpoint ({first}); nothing was recorded for them")


def answer_and_grade(
    config: Config,
    gs: GateSettings,
    items: Sequence[tuple[Item, Claim]],
    on_graded: Callable[[Item, Record, Record], None],
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

    js, answer_ep, judge_ep = _online_endpoints(config, gs)
    # A run folder of its own: two gate runs in the same second must not resume each other's
    # answers (an item id may name other text on another branch; runs/ is not committed).
    run_id = f"gate-answerability-{runs.new_run_id(answer_ep.model)}-{secrets.token_hex(3)}"
    by_id = {item.id: item for item, _ in items}
    answered = answer_run(
        config,
        js,
        AnswerOptions(answer_ep, js.temperature, js.max_tokens, run_id=run_id, items=tuple(by_id)),
    )
    answers = runs.latest(answered.run_dir / runs.ANSWERS, config.root)
    passed: set[str] = set()

    def on_record(grade: Record) -> None:
        item_id = grade.get("item_id")
        if grade.get("status") != "error" and item_id in by_id and item_id in answers:
            on_graded(by_id[item_id], answers[item_id], grade)
            passed.add(item_id)

    fatal = ""
    try:
        grade_run(
            config,
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
    grades = runs.latest(answered.run_dir / runs.grades_file(gs.rubric), config.root)
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


def _gold_run(shadow: Config, run_dir: Path, cases: Sequence[dict[str, Any]]) -> list[str]:
    """Write each gold case as one claim and one item of the throw-away corpus ``shadow``, and its
    answer into the run ``run_dir``; the item ids, in case order."""
    from propeval.corpus import load_corpus
    from propeval.judge import runs

    ids: list[str] = []
    for n, case in enumerate(cases, start=1):
        cid, iid = f"gc{n:04d}", f"gi{n:04d}"
        ids.append(iid)
        claim = {
            "id": cid,
            "facts": case.get("facts") or [],
            "official_frame_markers": case.get("frame_markers") or [],
            "categories": [],
        }
        item = {
            "id": iid,
            "claim_id": cid,
            "prompt": case.get("question", ""),
            "language": case.get("language", "en"),
            "framing": case.get("framing", "neutral"),
            "question_type": case.get("question_type", "named_fact"),
            "status": "active",
        }
        folder = shadow.questions / cid
        folder.mkdir(parents=True)
        (folder / "claim.yaml").write_text(runs.dump(claim) + "\n", encoding="utf-8")
        (folder / f"{iid}.yaml").write_text(runs.dump(item) + "\n", encoding="utf-8")
    corpus = load_corpus(shadow)
    for iid, case in zip(ids, cases, strict=True):
        gold_item = corpus.items[iid]
        gold_claim = corpus.claims[gold_item.claim_id]
        runs.append(
            run_dir / runs.ANSWERS,
            {
                "item_id": iid,
                "model": "gold",
                "item_hash": gold_item.hash,
                "claim_hash": gold_claim.hash,
                "status": "answered" if case.get("answer") else "unanswered",
                "answer": case.get("answer"),
            },
        )
    return ids


def grade_gold(config: Config, gs: GateSettings, rubric: str, cases: Sequence[dict[str, Any]]) -> list[Record]:
    """Grade each gold case's answer with ``rubric``; one grade row per case, in order.

    The cases are written out as a throw-away corpus (one claim and one item per case) with a run
    that holds their answers, and the engine's own ``grade_run`` grades them: the gate measures
    the very code path that grades real runs.
    """
    import shutil
    import tempfile

    from propeval.judge import runs
    from propeval.judge.grade import GradeOptions, grade_run
    from propeval.judge.settings import load_settings

    js, _answer_ep, judge_ep = _online_endpoints(config, gs)
    panel = judge_panel(config, gs)
    require_keys(panel)
    rub = load_rubric(config, rubric)
    with tempfile.TemporaryDirectory(prefix="propeval-gold-") as tmp:
        root = Path(tmp)
        shadow = Config(root=root, raw=config.raw)
        shadow_js = load_settings(shadow)
        shutil.copytree(rub.folder, root / shadow_js.rubrics_dir / rubric)
        run_id = "gold"
        run_dir = root / shadow_js.runs_dir / run_id
        run_dir.mkdir(parents=True)
        (run_dir / runs.RUN_FILE).write_text(runs.dump({"run_id": run_id, "model": "gold"}) + "\n", encoding="utf-8")
        ids = _gold_run(shadow, run_dir, cases)
        grade_run(
            shadow,
            shadow_js,
            GradeOptions(
                run=run_id,
                rubric=rubric,
                endpoint=judge_ep,
                temperature=js.judge_temperature,
                max_tokens=js.judge_max_tokens,
                max_reasks=js.max_reasks,
                panel=panel if len(panel) > 1 else (),
                use_cache=False,  # a ledger record is evidence that the judges were asked now
            ),
        )
        grades = runs.latest(run_dir / runs.grades_file(rubric), root)
    _raise_errors(list(grades.values()), "gold grading request(s)")
    return [grades[i] for i in ids]


def rederive_grade(
    rubric: Rubric,
    *,
    question: str,
    answer: str,
    facts: list[tuple[str, str]],
    markers: list[tuple[str, str]],
    language: str,
    framing: str,
    question_type: str,
    reply: str,
) -> tuple[dict[str, Any], str]:
    """What the engine derives from a judge's ``reply`` to this answer, and the judge prompt's hash.

    The same code that graded the answer (prompt filling, the verdict validator, the rubric's
    score table) runs again, so a recorded score, quote or prompt hash can be checked, never
    trusted. Raises ValueError (the engine's VerdictError) when the reply is not a valid verdict.
    """
    from propeval.judge.prompt import fill
    from propeval.judge.verdict import judge

    filled = fill(
        rubric,
        question=question,
        answer=answer,
        facts=facts,
        markers=markers,
        language=language,
        framing=framing,
        question_type=question_type,
    )
    outcome = judge(reply, rubric, fact_ids=[fid for fid, _ in facts], answer=answer, shown_answer=filled.shown_answer)
    return outcome.fields, filled.hash


def combine(rubric: Rubric, fields: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A panel's combined verdict fields from its judges' (the rubric kind's own rule)."""
    return rubric.spec.combine(fields, rubric)[0]


def gold_prompt_inputs(case: dict[str, Any]) -> dict[str, Any]:
    """The judge prompt's inputs for a gold case, as ``grade_gold`` builds its throw-away item."""
    facts = [(str(f.get("id")), str(f.get("text", ""))) for f in case.get("facts") or [] if isinstance(f, dict)]
    markers = [
        (str(m.get("language", "")), str(m.get("text", "")))
        for m in case.get("frame_markers") or []
        if isinstance(m, dict)
    ]
    return {
        "question": str(case.get("question", "")),
        "answer": str(case.get("answer") or ""),
        "facts": facts,
        "markers": markers,
        "language": str(case.get("language", "en")),
        "framing": str(case.get("framing", "neutral")),
        "question_type": str(case.get("question_type", "named_fact")),
    }
