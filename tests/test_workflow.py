"""The GitHub workflow: its triggers, its caches, who may accept a policy change, and that every
command it runs exists (make targets in the Makefile; propeval commands and options through click)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from propeval.cli import cli
from propeval.loader import load_file

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github/workflows/pr.yml"
# What the workflow's shell variables hold when a step runs: each is set by the workflow (env:) or
# by GitHub ($GITHUB_STEP_SUMMARY). ACCEPT is checked with both of its values.
SHELL_VALUES = {
    "BASE_SHA": ["0123456789abcdef0123456789abcdef01234567"],
    "ACCEPT": ["", "--accept-policy-change"],
    "GITHUB_STEP_SUMMARY": ["summary.md"],
}


def workflow() -> dict[str, Any]:
    return load_file(WORKFLOW, root=REPO).data


def steps(job: str) -> list[dict[str, Any]]:
    return list(workflow()["jobs"][job]["steps"])


def run_lines() -> list[tuple[str, str]]:
    """Every shell line the workflow runs, with its job."""
    return [
        (job, line.strip())
        for job, spec in workflow()["jobs"].items()
        for step in spec["steps"]
        if "run" in step
        for line in step["run"].splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def expansions(line: str) -> list[list[str]]:
    """``line`` split as the shell would, once for each value of its variables."""
    names = re.findall(r"\$\{?(\w+)\}?", line)
    unknown = sorted(set(names) - set(SHELL_VALUES))
    assert not unknown, f"the workflow runs {line!r} with {unknown}: add what they hold to SHELL_VALUES"
    variants = [line]
    for name in dict.fromkeys(names):
        variants = [re.sub(rf"\$\{{?{name}\}}?", value, v) for v in variants for value in SHELL_VALUES[name]]
    return [shlex.split(v) for v in variants]


def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([\w.-]+):(?!=)", text, re.MULTILINE)}


def test_triggers_are_pull_requests_pushes_to_main_and_the_merge_queue() -> None:
    on = workflow()["on"]
    # Exactly these: no pull_request_target or workflow_run, which run with the base's secrets.
    assert set(on) == {"pull_request", "push", "merge_group"}
    assert on["push"] == {"branches": ["main"]}


def test_no_job_holds_a_secret_or_a_write_token_for_contents() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "secrets." not in text
    wf = workflow()
    assert wf["permissions"] == {"contents": "read"}
    assert wf["jobs"]["gates"]["permissions"] == {"contents": "read", "security-events": "write"}
    assert "permissions" not in wf["jobs"]["tests"]
    for job in wf["jobs"].values():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_gates_job_runs_the_base_commits_propeval_on_the_tree() -> None:
    gates = steps("gates")
    trusted, tree = (s for s in gates if s.get("uses", "").startswith("actions/checkout@"))
    assert trusted["with"]["ref"] == "${{ env.BASE_SHA }}" and trusted["with"]["path"] == "trusted"
    assert tree["with"]["path"] == "tree" and tree["with"]["fetch-depth"] == 0
    install = next(s for s in gates if s.get("run", "").startswith("make setup"))
    assert install["working-directory"] == "trusted"
    ci = next(s for s in gates if "propeval ci" in s.get("run", ""))
    assert ci["working-directory"] == "tree"
    assert ci["run"].startswith('../trusted/.venv/bin/propeval ci --base "$BASE_SHA" $ACCEPT')


def test_the_gates_job_writes_a_summary_and_uploads_sarif() -> None:
    gates = steps("gates")
    ci = next(i for i, s in enumerate(gates) if "propeval ci" in s.get("run", ""))
    assert '--summary "$GITHUB_STEP_SUMMARY"' in gates[ci]["run"] and "--sarif propeval.sarif" in gates[ci]["run"]
    upload = gates[ci + 1]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "tree/propeval.sarif" and upload["with"]["checkout_path"] == "tree"
    # after problems too (ci exits 1), but never on a fork's read-only token
    assert "!cancelled()" in upload["if"] and "head.repo.full_name == github.repository" in upload["if"]


def test_a_policy_change_is_accepted_only_where_a_maintainer_acted() -> None:
    """Only a maintainer puts a commit in the merge queue or pushes to main."""
    text = WORKFLOW.read_text(encoding="utf-8")
    guarded = "ACCEPT: ${{ github.event_name != 'pull_request' && '--accept-policy-change' || '' }}"
    assert text.count("--accept-policy-change") == 1 and guarded in text


def _cache_steps(job: str) -> list[dict[str, Any]]:
    return [s for s in steps(job) if re.match(r"actions/cache(/restore|/save)?@v\d+$", s.get("uses", ""))]


def _paths(step: dict[str, Any]) -> set[str]:
    return {p.strip() for p in step["with"]["path"].splitlines() if p.strip()}


def test_the_gates_job_caches_pip_the_venv_and_the_onnx_export() -> None:
    caches = _cache_steps("gates")
    # The restore (or restore-and-save) step of each path: the one that names its key.
    by_path = {path: step for step in reversed(caches) for path in _paths(step)}
    assert set(by_path) == {"trusted/.venv", "~/.cache/pip", "~/.cache/propeval/onnx"}
    # Keyed on what invalidates them.
    venv_key = by_path["trusted/.venv"]["with"]["key"]
    assert "steps.py.outputs.python-version" in venv_key
    assert "hashFiles('trusted/pyproject.toml', 'trusted/Makefile')" in venv_key
    assert "hashFiles('trusted/pyproject.toml', 'trusted/Makefile')" in by_path["~/.cache/propeval/onnx"]["with"]["key"]


def test_the_gates_job_reads_no_cache_a_pull_request_could_write() -> None:
    """A pull request's tests job runs its code, which can write any key into the pull
    request's cache scope (and a merge group's), and a run reads its own scope first. So the gates
    job restores and saves caches only on pushes to main, and keeps no embedding cache (its entries
    are authenticated with a key made on each runner: restored ones would never verify)."""
    for step in _cache_steps("gates"):
        assert step.get("if", "").startswith("github.event_name == 'push'"), step
    assert not any("embeddings" in p for step in _cache_steps("gates") for p in _paths(step))


def test_each_job_has_its_own_cache_keys() -> None:
    """The tests job runs the pull request's code: nothing it saves is read by the gates job."""
    for job, prefix in (("gates", "gates-"), ("tests", "tests-")):
        for step in _cache_steps(job):
            keys = [step["with"]["key"], *str(step["with"].get("restore-keys", "")).split("\n")]
            keys = [k.strip() for k in keys if k.strip()]
            for key in keys:
                assert key.startswith(prefix) or key == "${{ steps.venv.outputs.cache-primary-key }}", (job, key)
    # setup-python's own cache would share one key between the jobs.
    for job in ("gates", "tests"):
        for step in steps(job):
            if step.get("uses", "").startswith("actions/setup-python@"):
                assert "cache" not in step.get("with", {})


@pytest.mark.parametrize("job", ["gates", "tests"])
def test_a_venv_is_saved_right_after_the_install_before_anything_else_runs(job: str) -> None:
    names = [s.get("uses", "") or s.get("run", "") for s in steps(job)]
    install = next(i for i, n in enumerate(names) if n.startswith("make setup"))
    assert names[install - 1].startswith("actions/cache/restore@")
    assert names[install + 1].startswith("actions/cache/save@")
    assert steps(job)[install + 1]["with"]["key"] == "${{ steps.venv.outputs.cache-primary-key }}"


def test_the_tests_job_runs_make_test_with_its_mypy_cache() -> None:
    assert [s["run"] for s in steps("tests") if "run" in s][-1] == "make test"
    mypy = next(s for s in _cache_steps("tests") if _paths(s) == {".mypy_cache"})
    assert "hashFiles('tools/**/*.py', 'pyproject.toml')" in mypy["with"]["key"]


def test_every_command_the_workflow_runs_exists() -> None:
    targets = makefile_targets()
    seen = set()
    for job, line in run_lines():
        for argv in expansions(line):
            if argv[0] == "make":
                wanted = [a for a in argv[1:] if "=" not in a]
                assert set(wanted) <= targets, f"{job}: {line!r} names a target that is not in the Makefile"
                seen.add("make")
            elif Path(argv[0]).name == "propeval":
                name, rest = argv[1], argv[2:]
                ctx = click.Context(cli, info_name="propeval")
                command = cli.get_command(ctx, name)
                assert command is not None, f"{job}: {line!r}: propeval has no command {name!r}"
                try:
                    command.make_context(name, rest, parent=ctx)
                except click.UsageError as e:
                    pytest.fail(f"{job}: {' '.join(argv)}: {e.format_message()}")
                seen.add("propeval")
            else:
                pytest.fail(f"{job}: the test does not know how to check {line!r}")
    assert seen == {"make", "propeval"}


def test_every_action_is_pinned_to_a_major_version() -> None:
    for spec in workflow()["jobs"].values():
        for step in spec["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", step["uses"]), step["uses"]


@pytest.mark.slow
def test_the_workflow_is_valid_for_github() -> None:
    exe = Path(sys.executable).with_name("check-jsonschema")
    res = subprocess.run(
        [str(exe), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_job_has_a_timeout() -> None:
    """GitHub's default is six hours: a hung step would hold a runner that long."""
    jobs = workflow()["jobs"]
    assert all(isinstance(job.get("timeout-minutes"), int) and job["timeout-minutes"] <= 60 for job in jobs.values())
    # what propeval init writes (a string.Template: not YAML until filled in)
    template = (REPO / "tools/propeval/data/init/workflow.yml").read_text(encoding="utf-8")
    assert template.count("\n    timeout-minutes: ") == template.count("\n    runs-on: ") >= 1
