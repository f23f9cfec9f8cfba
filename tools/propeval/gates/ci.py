"""``propeval ci``: every offline check a pull request needs, with one summary and one exit code.

Steps are a registry: name -> a callable ``(config, base_ref) -> CheckResult``. Each adapter
imports its area's code only when it runs, so a step whose code is missing from this checkout is
reported as an error, never skipped in silence. Each step looks only at what changed since the
merge base with ``base_ref`` where that is sound; a step with nothing to look at says so.

Policy comes from the base: every step runs with ``[tool.propeval]`` as it is at ``base_ref``
(see ``propeval.policy``), and the ``policy`` step, which always runs first, names each key the
tree changed ("policy change: needs a maintainer"). A maintainer who runs ci may accept the
tree's policy instead (``accept_policy_change``); the run then says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from propeval import gitutil
from propeval.config import Config
from propeval.errors import PropevalError, UsageError
from propeval.result import CheckResult, Problem, Severity

if TYPE_CHECKING:
    from propeval.gates.settings import GateSettings

StepFn = Callable[[Config, str], CheckResult]


def _check(config: Config, base: str) -> CheckResult:
    from propeval.checker import check_corpus

    return check_corpus(config, changed_since=base)


def _groups(config: Config, base: str) -> CheckResult:
    from propeval.groups import check_groups

    return check_groups(config, changed_since=base)


def dedup_step(config: Config, base: str) -> CheckResult:
    """Dedup as a step: what changed since ``base``, or the whole corpus when ``base`` is "" (`run`)."""
    from propeval.dedup import Options, find_duplicates, pair_problem

    found = find_duplicates(config, Options(changed_since=base or None))
    result = CheckResult(problems=list(found.problems), files_checked=found.units, notes=list(found.notes))
    # The same rule ids, places and explanations as `propeval dedup` itself.
    result.problems.extend(pair_problem(pair) for pair in found.unreviewed)
    return result


def _answerability(config: Config, base: str) -> CheckResult:
    from propeval.gates.answerability import Selection, answerability_gate

    return answerability_gate(config, Selection(changed_since=base))


def _judge(config: Config, base: str) -> CheckResult:
    from propeval.gates import engine
    from propeval.gates.judge_gate import judge_gate
    from propeval.gates.settings import load_gate_settings

    gs = load_gate_settings(config)
    merge_base = gitutil.merge_base(config.root, base)
    changed = gitutil.changed_paths(config.root, merge_base)
    rubrics_dir = engine.rubrics_dir(config)
    names = set()
    for path in changed:
        for prefix in (f"{rubrics_dir}/", f"{gs.ledger_dir}/judge/"):
            if path.startswith(prefix):
                names.add(path.removeprefix(prefix).split("/", 1)[0].removesuffix(".json"))
    names = {n for n in names if (config.root / rubrics_dir / n).is_dir()}
    if not names:
        result = CheckResult()
        result.notes.append(f"no rubric changed since {base}; the judge gate has nothing to check")
        return result
    return judge_gate(config, sorted(names))


LEDGER_KINDS = ("answerability", "judge")


def _ledger(config: Config, base: str) -> CheckResult:
    """Every ledger record deleted or moved away since the merge base is named: evidence is never dropped quietly.

    Records that were added or changed are verified by the answerability and judge steps.
    """
    from propeval.gates.settings import load_gate_settings

    gs = load_gate_settings(config)
    result = CheckResult()
    changes = gitutil.name_status(config.root, gitutil.merge_base(config.root, base))
    result.problems.extend(_orphans(config, gs, changes, base))
    for status, old, new in changes:
        if status not in "DR" or (status == "R" and old == new):
            continue
        for kind in LEDGER_KINDS:
            if not old.startswith(f"{gs.ledger_dir}/{kind}/"):
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


def _orphans(config: Config, gs: GateSettings, changes: list[tuple[str, str, str]], base: str) -> list[Problem]:
    """Records added or changed since ``base`` for no active item, or for no rubric: named, never ignored.

    The gates read a record only for an item or rubric they check, so such a record would
    otherwise pass through unread.
    """
    from propeval.corpus import load_corpus
    from propeval.gates import engine

    touched = [new for status, _, new in changes if status in "ACMRT" and new.startswith(f"{gs.ledger_dir}/")]
    if not touched:
        return []
    active = {item.id for item in load_corpus(config).active_items()}
    rubrics = config.root / engine.rubrics_dir(config)
    out = []
    for path in touched:
        kind, _, name = path.removeprefix(f"{gs.ledger_dir}/").partition("/")
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


def _schema(config: Config, base: str) -> CheckResult:
    from propeval.schemadiff import schema_gate

    result: CheckResult = schema_gate(config, base)
    return result


STEPS: dict[str, StepFn] = {
    "check": _check,
    "ledger": _ledger,
    "groups": _groups,
    "dedup": dedup_step,
    "answerability": _answerability,
    "judge": _judge,
    "schema": _schema,
}


@dataclass
class StepOutcome:
    name: str
    status: str  # ok | failed | advisory | error | skipped
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files_checked: int = 0
    exit_code: int = 0

    @property
    def errors(self) -> int:
        return sum(p.severity is Severity.ERROR for p in self.problems)

    @property
    def warnings(self) -> int:
        return len(self.problems) - self.errors


@dataclass
class CiResult:
    steps: list[StepOutcome]

    @property
    def exit_code(self) -> int:
        return max((s.exit_code for s in self.steps), default=0)

    @property
    def problems(self) -> list[Problem]:
        return [p for s in self.steps for p in s.problems]


def run_step(name: str, fn: StepFn, config: Config, base: str) -> StepOutcome:
    """Run one step; a failure to run is an ``error`` outcome (exit 3), never a pass."""
    try:
        result = fn(config, base)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("propeval"):
            raise
        return StepOutcome(
            name,
            "error",
            [
                Problem(
                    "(ci)",
                    0,
                    0,
                    f"ci-{name}",
                    f"step {name!r} cannot run: its module {e.name} is not in this checkout; "
                    f"merge its branch, or leave it out with --skip {name}",
                )
            ],
            exit_code=3,
        )
    except PropevalError as e:
        return StepOutcome(name, "error", [Problem("(ci)", 0, 0, f"ci-{name}", str(e))], exit_code=e.exit_code)
    if result.errors:
        status = "failed"
    elif result.problems:
        status = "advisory"
    elif result.files_checked == 0 and result.notes:
        status = "skipped"
    else:
        status = "ok"
    return StepOutcome(name, status, list(result.problems), list(result.notes), result.files_checked, result.exit_code)


def run_ci(
    config: Config,
    base: str,
    *,
    steps: Sequence[str] = (),
    skip: Sequence[str] = (),
    registry: dict[str, StepFn] | None = None,
    accept_policy_change: bool = False,
) -> CiResult:
    """Run the selected steps (all by default) against the merge base with ``base``.

    The base is resolved once up front, so a missing ref or a shallow clone stops the run with
    one clear GitError instead of six. Every step runs under ``base``'s policy, unless a
    maintainer accepts the tree's (``accept_policy_change``).
    """
    registry = registry if registry is not None else STEPS
    unknown = sorted((set(steps) | set(skip)) - set(registry))
    if unknown:
        raise UsageError(f"unknown step {unknown[0]!r}; steps are: {', '.join(registry)}")
    gitutil.merge_base(config.root, base)
    outcome, effective = policy_step(config, base, accept_policy_change)
    names = [n for n in registry if (not steps or n in steps) and n not in skip]
    return CiResult([outcome, *(run_step(n, registry[n], effective, base) for n in names)])


def policy_step(tree: Config, base: str, accept: bool) -> tuple[StepOutcome, Config]:
    """The ``policy`` step: what the tree changed in ``[tool.propeval]``, and the Config the other steps use."""
    from propeval.policy import from_base, policy_message, table_at

    policy = from_base(tree, base)
    if not policy.changed:
        return StepOutcome("policy", "ok", notes=[f"[tool.propeval] as at {base}"]), policy.config
    if accept:
        note = (
            f"policy change accepted by the maintainer who ran this (--accept-policy-change): "
            f"{', '.join(policy.changed)}; this run uses the tree's [tool.propeval]"
        )
        return StepOutcome("policy", "ok", notes=[note]), tree
    base_table = table_at(tree.root, base)
    problems = [
        Problem("pyproject.toml", 0, 0, "policy-change", policy_message(tree, base, key, base_table))
        for key in policy.changed
    ]
    return StepOutcome("policy", "failed", problems, exit_code=1), policy.config
