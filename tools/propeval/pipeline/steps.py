"""Every pipeline step, written once: ``step(workspace, scope) -> CheckResult``.

``propeval ci`` runs the first seven over what changed since its base (after the policy step,
:mod:`propeval.pipeline.ci`); ``propeval run`` runs check, groups, dedup, the two gates,
difficulty, stats and the report over the whole corpus (:mod:`propeval.pipeline.main`). Each step
imports its area's code only when it runs, so a step whose code is missing from a checkout is an
error of that step (:func:`propeval.pipeline.outcome.run_step`), never a silent pass; and each
reads what it needs from the workspace, so the corpus, the schema, the rubrics and the ledger are
read once for all the steps of a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from propeval import gitutil
from propeval.pipeline.scope import Scope
from propeval.result import CheckResult, Problem, Rule, Severity

if TYPE_CHECKING:
    from propeval.settings import GateSettings
    from propeval.workspace import Workspace

Step = Callable[["Workspace", Scope], CheckResult]

LEDGER_KINDS = ("answerability", "judge")


def check(ws: Workspace, scope: Scope) -> CheckResult:
    from propeval.checker import check_corpus

    return check_corpus(ws, changed_since=scope.base)


def groups(ws: Workspace, scope: Scope) -> CheckResult:
    from propeval.groups import check_groups

    return check_groups(ws, changed_since=scope.base)


def dedup(ws: Workspace, scope: Scope) -> CheckResult:
    """Dedup over what changed since the base, or the whole corpus; a whole-corpus run is compared
    with the ledger's dedup.json (which the report and the card show) and, with ``scope.record``,
    written there."""
    from propeval.dedup import PASSES, Options, find_duplicates, pair_problem, review_problem

    found = find_duplicates(ws.config, Options(changed_since=scope.base), corpus=ws.corpus)
    result = CheckResult(problems=list(found.problems), files_checked=found.units, notes=list(found.notes))
    # The same rule ids, places and explanations as `propeval dedup` itself.
    result.problems.extend(pair_problem(pair) for pair in found.unreviewed)
    # the review band: notices, never blocking
    result.problems.extend(review_problem(pair) for pair in found.review if not pair.reviewed)
    if scope.whole:
        from propeval.dedup.record import record_run

        result.notes.append(record_run(ws, found, PASSES, sign=True, write_record=scope.record))
    return result


def answerability(ws: Workspace, scope: Scope) -> CheckResult:
    from propeval.gates.answerability import Selection, answerability_gate

    sel = Selection(all_items=True) if scope.whole else Selection(changed_since=scope.base)
    return answerability_gate(ws, sel)


def judge(ws: Workspace, scope: Scope) -> CheckResult:
    """The judge gate of every rubric (whole corpus), or of each rubric whose folder or record
    changed since the base. A folder that cannot be a rubric (``rubrics/.draft/``) is named in a
    note, never taken for one."""
    from propeval.gates.judge_gate import judge_gate

    rubrics = ws.rubrics
    skipped = rubrics.skipped_note()
    if scope.whole:
        names = rubrics.names
        nothing = f"no rubric in {rubrics.dir}/; the judge gate has nothing to check"
    else:
        assert scope.base is not None
        changed = gitutil.changed_paths(ws.root, gitutil.merge_base(ws.root, scope.base))
        touched = set()
        for path in changed:
            for prefix in (f"{rubrics.dir}/", ws.ledger_paths.rel("judge", "")):
                if path.startswith(prefix):
                    touched.add(path.removeprefix(prefix).split("/", 1)[0].removesuffix(".json"))
        listing = rubrics.listing
        touched = {n for n in touched if (rubrics.folder / n).is_dir()}
        if not touched & {*listing.hidden, *listing.misnamed}:
            skipped = None
        names = sorted(touched - {*listing.hidden, *listing.misnamed})
        nothing = f"no rubric changed since {scope.base}; the judge gate has nothing to check"
    if not names:
        result = CheckResult()
        result.notes.append(nothing)
    else:
        result = judge_gate(ws, names)
    if skipped:
        result.notes.append(skipped)
    return result


def ledger(ws: Workspace, scope: Scope) -> CheckResult:
    """Every ledger record deleted or moved away since the merge base is named: evidence is never
    dropped quietly. Records that were added or changed are verified by the answerability and
    judge steps; one for no active item or rubric is named here."""
    result = CheckResult()
    if scope.base is None:
        result.notes.append("no base to compare with; records are verified by the answerability and judge steps")
        return result
    base = scope.base
    gs = ws.gate_settings
    changes = gitutil.name_status(ws.root, gitutil.merge_base(ws.root, base))
    result.problems.extend(_orphans(ws, gs, changes, base))
    for status, old, new in changes:
        if status not in "DR" or (status == "R" and old == new):
            continue
        for kind in LEDGER_KINDS:
            if not old.startswith(ws.ledger_paths.rel(kind, "")):
                continue
            severity = Severity.ERROR if gs.mode(kind) == "required" else Severity.WARNING
            what = "deleted" if status == "D" else f"moved to {new}"
            result.problems.append(
                Problem(
                    old,
                    0,
                    0,
                    "ledger-deleted",
                    f"the {kind} record {old} was {what} since {base}; a record is evidence and is not dropped "
                    f"in a pull request: restore it (git checkout {base} -- {old}); a maintainer removes records",
                    severity=severity,
                )
            )
        result.files_checked += 1
    if not result.files_checked:
        result.notes.append(f"no ledger record was deleted or moved since {base}")
    return result


def _orphans(ws: Workspace, gs: GateSettings, changes: list[tuple[str, str, str]], base: str) -> list[Problem]:
    """Records added or changed since ``base`` for no active item, or for no rubric: named, never ignored.

    The gates read a record only for an item or rubric they check, so such a record would
    otherwise pass through unread.
    """
    folder = ws.ledger_paths.rel("")
    touched = [new for status, _, new in changes if status in "ACMRT" and new.startswith(folder)]
    if not touched:
        return []
    active = {item.id for item in ws.corpus.active_items()}
    rubrics = ws.rubrics.folder
    out = []
    for path in touched:
        kind, _, name = path.removeprefix(folder).partition("/")
        if kind not in LEDGER_KINDS or "/" in name or not name.endswith(".json"):
            continue
        subject = name.removesuffix(".json")
        known = subject in active if kind == "answerability" else (rubrics / subject / "rubric.yaml").is_file()
        if known:
            continue
        what = "active item" if kind == "answerability" else "rubric"
        out.append(
            Problem(
                path,
                0,
                0,
                "ledger-orphan",
                f"the {kind} record {path} was added or changed since {base}, but there is no {what} "
                f"{subject!r}: a record for a retired or unknown {what} is evidence of nothing; remove it "
                "from the pull request",
                severity=Severity.ERROR if gs.mode(kind) == "required" else Severity.WARNING,
            )
        )
    return out


def schema(ws: Workspace, scope: Scope) -> CheckResult:
    """The schema gate compares the tree's own schema with the base's (the other steps check
    claims and items against the base's: ``schema_override``)."""
    from propeval.schemagate import schema_gate

    if scope.base is None:
        result = CheckResult()
        result.notes.append("no base to compare with; the schema gate compares schema.json with a ref's")
        return result
    gated: CheckResult = schema_gate(ws.without_schema_override(), scope.base)
    return gated


def difficulty(ws: Workspace, scope: Scope) -> CheckResult:
    """The bands of the difficulty ledger, counted over the active items; a missing band is a warning."""
    from propeval import difficulty as core
    from propeval.errors import UsageError

    result = CheckResult()
    rel = ws.ledger_paths.difficulty_rel
    if not ws.ledger_paths.difficulty.is_file():
        result.notes.append(
            f"no {rel} yet: bands come from graded runs (`propeval answer`, `propeval grade`, "
            "then `propeval difficulty`)"
        )
        return result
    try:
        ledger_doc = core.load_ledger(ws)
    except UsageError as e:
        result.problems.append(Problem(rel, 1, 1, "difficulty", str(e)))
        return result
    report = core.build_report(ws, ledger_doc)
    totals: dict[str, int] = {}
    for row in report.tables["framing"].values():
        for band, n in row.items():
            totals[band] = totals.get(band, 0) + n
    result.files_checked = sum(totals.values())
    result.notes.append("bands: " + ", ".join(f"{band} {n}" for band, n in totals.items()))
    if totals.get("none"):
        result.problems.append(
            Problem(
                rel,
                1,
                1,
                "difficulty",
                f"{totals['none']} active item(s) have no current band; rerun `propeval difficulty` on graded runs",
                severity=Severity.WARNING,
            )
        )
    return result


def stats(ws: Workspace, scope: Scope) -> CheckResult:
    from propeval.release import compute_stats, load_inputs

    computed = compute_stats(load_inputs(ws))
    result = CheckResult(files_checked=computed.items)
    langs = ", ".join(f"{k} {v}" for k, v in computed.by_language.items())
    result.notes.append(
        f"{computed.items} active item(s) in {computed.claims} claim(s), {computed.retired} retired; {langs}"
    )
    return result


def report(ws: Workspace, scope: Scope) -> CheckResult:
    """The HTML report, written to ``scope.report``."""
    from propeval.errors import UsageError
    from propeval.release import load_inputs
    from propeval.report import write_report

    if scope.report is None:
        raise UsageError("the report step needs a file to write (propeval run --report FILE)")
    runs, computed = write_report(load_inputs(ws), scope.report)
    result = CheckResult(files_checked=1, problems=[*runs.warnings, *runs.refused])
    result.notes.append(f"wrote {scope.report}: {computed.items} item(s), {len(runs.files)} grades file(s)")
    return result


# What a step's rule (``ci-<step>``) says when the step cannot run.
CANNOT_RUN = (
    "`propeval ci` or `propeval run` could not run a step (its code is missing, a ref is missing, a tool failed)"
)
SAY_WHICH = "the message says which; `--skip <step>` leaves one out"


@dataclass(frozen=True)
class PipelineStep:
    """One step and every fact about it: its function, which commands run it (``ci``: over what
    changed, after the policy step; ``run``: over the whole corpus), and its rule ``ci-<name>``, the
    problem a run reports when the step cannot run (collected by :mod:`propeval.rules`)."""

    name: str
    run: Step
    ci: bool = False
    main: bool = False

    @property
    def rule(self) -> Rule:
        command = "ci" if self.ci else "run"
        return Rule(f"ci-{self.name}", "ci", f"{command}'s {self.name} step ran", wrong=CANNOT_RUN, fix=SAY_WHICH)


# The one registry, in the order a run takes the steps. A new step is its function above and one line here.
PIPELINE: tuple[PipelineStep, ...] = (
    PipelineStep("check", check, ci=True, main=True),
    PipelineStep("ledger", ledger, ci=True),
    PipelineStep("groups", groups, ci=True, main=True),
    PipelineStep("dedup", dedup, ci=True, main=True),
    PipelineStep("answerability", answerability, ci=True, main=True),
    PipelineStep("judge", judge, ci=True, main=True),
    PipelineStep("schema", schema, ci=True),
    PipelineStep("difficulty", difficulty, main=True),
    PipelineStep("stats", stats, main=True),
    PipelineStep("report", report, main=True),
)
STEPS: dict[str, Step] = {s.name: s.run for s in PIPELINE}
# What each command runs, in its order (``ci`` runs its policy step before these).
CI_STEPS = tuple(s.name for s in PIPELINE if s.ci)
RUN_STEPS = tuple(s.name for s in PIPELINE if s.main)
