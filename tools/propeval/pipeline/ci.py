"""``propeval ci``: the policy step, then the pipeline's steps over what changed since the base.

Policy comes from the base: every step runs with ``[tool.propeval]`` as it is at ``base_ref``
(see ``propeval.policy``), and the ``policy`` step, which always runs first, names each key the
tree changed ("policy change: needs a maintainer"). A maintainer who runs ci may accept the
tree's policy instead (``accept_policy_change``); the run then says so. The steps themselves are
:mod:`propeval.pipeline.steps`' (the ones ``propeval run`` takes too), over a
:class:`~propeval.pipeline.scope.Scope` of the changes since the merge base.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from propeval import gitutil
from propeval.config import Config
from propeval.errors import UsageError
from propeval.pipeline.outcome import PipelineResult, StepOutcome, run_steps
from propeval.pipeline.scope import Scope
from propeval.pipeline.steps import CI_STEPS, STEPS, Step
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.policy_files import FileChange
    from propeval.workspace import Workspace


def run_ci(
    ws: Workspace,
    base: str,
    *,
    steps: Sequence[str] = (),
    skip: Sequence[str] = (),
    registry: dict[str, Step] | None = None,
    accept_policy_change: bool = False,
) -> PipelineResult:
    """Run the policy step, then the selected steps (all of ci's by default) against the merge
    base with ``base``.

    The base is resolved once up front, so a missing ref or a shallow clone stops the run with
    one clear GitError instead of six. Every step runs under ``base``'s policy, and checks
    claims and items against ``base``'s schema, unless a maintainer approved the tree's (a signed
    approval record) or accepts it (``accept_policy_change``).
    """
    import tempfile

    chosen = registry if registry is not None else {name: STEPS[name] for name in CI_STEPS}
    unknown = sorted((set(steps) | set(skip)) - set(chosen))
    if unknown:
        raise UsageError(f"unknown step {unknown[0]!r}; steps are: {', '.join(chosen)}")
    gitutil.merge_base(ws.root, base)
    names = [n for n in chosen if (not steps or n in steps) and n not in skip]
    with tempfile.TemporaryDirectory(prefix="propeval-base-schema-") as scratch:
        outcome, effective = policy_step(ws.config, base, accept_policy_change, Path(scratch))
        under = ws.with_config(effective) if effective is not ws.config else ws
        return PipelineResult([outcome, *run_steps(names, chosen, under, Scope(base=base))])


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
    from propeval.policy import changed_since_fork
    from propeval.policy_files import FileChange, changed_policy_files, source_exceptions

    if keys is None:
        keys = changed_since_fork(tree, base)
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
    from propeval.ledger.approvals import read_approvals
    from propeval.workspace import Workspace

    # The tree's records under the base's policy: its ledger folder and its maintainers' keys.
    approvals = read_approvals(Workspace(base_cfg).ledger, set(gitutil.changed_paths(tree.root, merge_base)))
    made = {(c.path, c.before, c.after) for c in files}
    covered = approvals.covered(merge_base, made, lambda head: gitutil.is_ancestor(tree.root, head))
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
        by = covered.get((change.path, change.before, change.after))
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
