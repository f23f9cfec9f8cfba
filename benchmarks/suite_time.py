"""`make test`'s work for two commits, side by side: lint with a cold mypy cache beside the suite.

This machine is shared and its speed swings by about 10% within an hour (the same run: 158-193
CPU-s), so one commit's figure says little on its own. This script runs both commits in turn,
``--rounds`` times each, alternating, and prints each run, the medians, and the ratio of the
medians. Each commit is checked out into a temporary git worktree and run with this venv's
tools (``PYTHONPATH=<worktree>/tools``), as ``make test`` would (ruff, ruff format --check and
mypy with an empty cache, beside ``pytest -n 2 --dist loadgroup --no-loadscope-reorder``).

    .venv/bin/python benchmarks/suite_time.py 249dc24 HEAD --rounds 3 \\
        --deselect tests/test_mainjob.py::test_make_run_in_a_fresh_clone_runs_every_step_and_writes_the_report

``--deselect`` (repeatable) leaves a test out of both runs: the fresh-clone test needs the venv
stamped for its commit's pyproject.toml, which an older commit's is not. ``--pytest-arg`` passes
anything else to pytest (e.g. a test file, to try the script quickly).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(tree: Path, pytest_args: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (every child process) and pytest's last line for one run in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree / "tools"), "PYTHONDONTWRITEBYTECODE": ""}
    cache = tree / ".mypy_cache"
    subprocess.run(["rm", "-rf", str(cache)], check=True)
    lint = (
        f"{VENV_BIN}/ruff check tools tests benchmarks >/dev/null && "
        f"{VENV_BIN}/ruff format --check tools tests benchmarks >/dev/null && {VENV_BIN}/mypy >/dev/null"
    )
    cpu0, t0 = _children_cpu(), time.monotonic()
    linting = subprocess.Popen(["bash", "-c", lint], cwd=tree, env=env)
    pytest = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder", "-q"]
    suite = subprocess.run(
        [*pytest, "-p", "no:cacheprovider", *pytest_args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    lint_rc = linting.wait()
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    last = (suite.stdout.strip().splitlines() or ["(no output)"])[-1]
    if suite.returncode != 0 or lint_rc != 0:
        last = f"FAILED (pytest {suite.returncode}, lint {lint_rc}): {last}"
    return wall, cpu, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the commit to compare against (e.g. a tag or a hash)")
    parser.add_argument("head", nargs="?", default="HEAD", help="the commit measured (default HEAD)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deselect", action="append", default=[], metavar="NODEID")
    parser.add_argument("--pytest-arg", action="append", default=[], metavar="ARG")
    args = parser.parse_args()
    pytest_args = [*(f"--deselect={d}" for d in args.deselect), *args.pytest_arg]

    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="suite-time-") as tmp:
        trees = {}
        for name in (args.base, args.head):
            tree = Path(tmp) / f"tree-{len(trees)}"
            subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), name], cwd=REPO, check=True)
            trees[name] = tree
        try:
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    wall, cpu, last = one_run(tree, pytest_args)
                    rows.append((name, wall, cpu, last))
                    print(f"{name:>12}  {wall:7.1f} s  {cpu:7.1f} CPU-s  {last}", flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)

    print()
    print(f"{'commit':>12}  {'median wall':>12}  {'median CPU-s':>12}  runs")
    medians = {}
    for name in (args.base, args.head):
        walls = [w for n, w, _, _ in rows if n == name]
        cpus = [c for n, _, c, _ in rows if n == name]
        medians[name] = statistics.median(walls)
        print(f"{name:>12}  {medians[name]:10.1f} s  {statistics.median(cpus):12.1f}  {len(walls)}")
    print(f"\n{args.head} / {args.base}, median wall: {medians[args.head] / medians[args.base]:.2f}")
    return 1 if any(last.startswith("FAILED") for *_, last in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
