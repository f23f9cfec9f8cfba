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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from propeval import gitutil
from propeval.config import Config
from propeval.errors import PropevalError, UsageError
from propeval.result import CheckResult, Problem, Severity

if TYPE_CHECKING:
    from propeval.gates.settings import GateSettings
    from propeval.policy_files import FileChange

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
    """The schema gate compares the tree's own schema with the base's (the other steps check
    claims and items against the base's: ``schema_override``)."""
    from propeval.schemadiff import schema_gate

    result: CheckResult = schema_gate(replace(config, schema_override=None), base)
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
    one clear GitError instead of six. Every step runs under ``base``'s policy, and checks
    claims and items against ``base``'s schema, unless a maintainer approved the tree's (a signed
    approval record) or accepts it (``accept_policy_change``).
    """
    import tempfile

    registry = registry if registry is not None else STEPS
    unknown = sorted((set(steps) | set(skip)) - set(registry))
    if unknown:
        raise UsageError(f"unknown step {unknown[0]!r}; steps are: {', '.join(registry)}")
    gitutil.merge_base(config.root, base)
    names = [n for n in registry if (not steps or n in steps) and n not in skip]
    with tempfile.TemporaryDirectory(prefix="propeval-base-schema-") as scratch:
        outcome, effective = policy_step(config, base, accept_policy_change, Path(scratch))
        return CiResult([outcome, *(run_step(n, registry[n], effective, base) for n in names)])


def policy_step(tree: Config, base: str, accept: bool, scratch: Path | None = None) -> tuple[StepOutcome, Config]:
    """The ``policy`` step, and the Config the other steps use.

    It names, as ``policy-change`` errors, each ``[tool.propeval]`` key the tree changed and each
    policy file (:mod:`propeval.policy_files`) it changed that no signed approval record covers;
    and as ``private-key`` errors, every private key the branch carries. The other steps run with
    the base's ``[tool.propeval]`` and the base's schema (written to ``scratch``), unless the
    change to pyproject.toml or to the schema is approved, or the maintainer who runs this
    accepts the tree's policy (``accept``).
    """
    from propeval.gates import private_keys
    from propeval.policy import from_base, policy_message, table_at

    policy = from_base(tree, base)
    base_cfg = policy.config
    merge_base = gitutil.merge_base(tree.root, base)
    problems = private_keys.scan(tree.root, merge_base)
    notes: list[str] = []
    files = policy_changes(tree, base, base_cfg, policy.changed)
    if accept:
        changed = [*policy.changed, *(c.path for c in files)]
        if changed:
            notes.append(
                "policy change accepted by the maintainer who ran this (--accept-policy-change): "
                f"{', '.join(changed)}; this run uses the tree's [tool.propeval] and schema"
            )
        else:
            notes.append(f"[tool.propeval] and the policy files as at {base}")
        return _outcome(problems, notes), tree
    unapproved, approved, extra = _approved(tree, base, base_cfg, files, merge_base)
    problems += extra
    notes += approved
    for change in unapproved:
        if change.keys_only:
            continue  # each key is its own problem, below
        problems.append(
            Problem(
                _shown(tree, change.path),
                0,
                0,
                "policy-change",
                f"policy change: needs a maintainer: {change.describe()}; a pull request changes it only with a "
                f"maintainer's approval: one who reviewed it runs `propeval ledger approve --base {base}` "
                "(a signed record for these exact bytes), or accepts it in the merge queue",
            )
        )
    pyproject_ok = policy.changed and not any(_shown(tree, c.path) == "pyproject.toml" for c in unapproved)
    effective = tree if pyproject_ok else base_cfg
    if policy.changed and not pyproject_ok:
        base_table = table_at(tree.root, base)
        problems += [
            Problem("pyproject.toml", 0, 0, "policy-change", policy_message(tree, base, key, base_table))
            for key in policy.changed
        ]
    schema_changed = any(_is_schema(tree, base_cfg, c.path) for c in unapproved)
    override = _base_schema(tree, base, base_cfg, scratch) if scratch is not None else None
    if override is not None and (schema_changed or not any(_is_schema(tree, base_cfg, c.path) for c in files)):
        effective = replace(effective, schema_override=override)
        if schema_changed:
            notes.append(f"claims and items are checked against {base_cfg.schema} as at {base}, not the tree's")
    if not problems and not notes:
        notes.append(f"[tool.propeval] and the policy files as at {base}")
    return _outcome(problems, notes), effective


def _outcome(problems: list[Problem], notes: list[str]) -> StepOutcome:
    failed = any(p.severity is Severity.ERROR for p in problems)
    return StepOutcome("policy", "failed" if failed else "ok", problems, notes, exit_code=1 if failed else 0)


def _shown(tree: Config, path: str) -> str:
    """A repository path as problems name paths: relative to the corpus root when it is inside it."""
    top = gitutil.toplevel(tree.root)
    prefix = tree.root.resolve().relative_to(top.resolve()).as_posix()
    return path.removeprefix(prefix + "/") if prefix != "." else path


def _is_schema(tree: Config, base_cfg: Config, path: str) -> bool:
    return _shown(tree, path) == base_cfg.settings.core.schema


def policy_changes(tree: Config, base: str, base_cfg: Config, keys: list[str] | None = None) -> list[FileChange]:
    """The policy files the tree changed since the merge base with ``base``, under ``base_cfg``'s
    settings; pyproject.toml also when only ``[tool.propeval]`` did (``keys``: the keys it
    changed; None: worked out here), so that one approval covers the whole file."""
    from propeval.policy import changed_keys, table_at
    from propeval.policy_files import FileChange, changed_policy_files, source_exceptions

    if keys is None:
        keys = changed_keys(table_at(tree.root, base), tree.raw)
    files = changed_policy_files(tree, base, base_cfg.settings) + source_exceptions(tree, base, base_cfg)
    if keys and not any(_shown(tree, c.path) == "pyproject.toml" for c in files):
        top = gitutil.toplevel(tree.root)
        path = (tree.root / "pyproject.toml").resolve().relative_to(top.resolve()).as_posix()
        merge_base = gitutil.merge_base(tree.root, base)
        files.append(
            FileChange(
                path,
                gitutil.blob_id(tree.root, merge_base, path),
                gitutil.file_blob_id(top / path),
                "the policy in [tool.propeval]",
                f"[tool.propeval] {', '.join(keys[:8])}",
                keys_only=True,
            )
        )
    return sorted(files, key=lambda c: c.path)


def _approved(
    tree: Config, base: str, base_cfg: Config, files: list[FileChange], merge_base: str
) -> tuple[list[FileChange], list[str], list[Problem]]:
    """The changes no valid approval covers, a note for each one that is covered, and the
    problems of the approval records (and allowlist entries) the tree brought."""
    from propeval.dedup.allowlist import AllowEntry, Entry, load_trust
    from propeval.dedup.allowlist import _load as load_entries
    from propeval.gates.approvals import read_approvals
    from propeval.gates.settings import load_gate_settings

    gs = load_gate_settings(base_cfg)
    approvals = read_approvals(tree, gs, set(gitutil.changed_paths(tree.root, merge_base)))
    unapproved, notes = [], []
    problems = list(approvals.problems)
    allowlist = base_cfg.settings.dedup.allowlist
    for change in files:
        if _shown(tree, change.path) == allowlist and change.after is not None:
            trust = load_trust(base_cfg, allowlist, base)
            pairs, boiler, bad = load_entries(tree.root / allowlist, tree.root)
            every: list[Entry] = [*pairs, *boiler]
            refused = [(e, why) for e in every if (why := trust.refusal(e)) is not None]
            if not refused and not bad:
                notes.append(f"{allowlist}: every new or changed entry is signed by a maintainer on {base}")
                continue
            for e, why in refused:
                label = f"{e.a} / {e.b}" if isinstance(e, AllowEntry) else e.fact
                problems.append(
                    Problem(
                        allowlist,
                        e.line,
                        1,
                        "policy-change",
                        f"policy change: needs a maintainer: the allowlist entry for {label} is an approval, and {why}",
                    )
                )
            if bad:
                unapproved.append(change)
            continue
        by = approvals.covered.get((change.path, change.before, change.after))
        if by is not None:
            notes.append(f"{change.path}: change approved by {by}")
            continue
        unapproved.append(change)
    return unapproved, notes, problems


def _base_schema(tree: Config, base: str, base_cfg: Config, scratch: Path) -> Path | None:
    """The base's schema file, written into ``scratch`` (None: the base uses the built-in schema,
    or has no schema file)."""
    from propeval.builtin import BUILTIN

    name = base_cfg.settings.core.schema
    if name == BUILTIN:
        return None
    blob = gitutil.blob_at(tree.root, base, name)
    if blob is None:
        return None
    path = scratch / Path(name).name
    path.write_bytes(blob)
    return path
