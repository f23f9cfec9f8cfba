"""CPU-seconds of the light commands (`--help`, `check --help`, `groups --help`, `check`) against
another revision, on this repository's starter corpus.

Each command runs as a fresh process, as a hook does; the figure is the child's user+sys CPU time
(``os.wait4``), which holds up on a shared machine far better than wall time. Rounds interleave
the two revisions; the table gives medians and the ratio this / before (below 1: faster now), and
the load average at the start and the end. Run from the repository root:

    .venv/bin/python benchmarks/startup.py --before main [--rounds 7]

The revision's ``tools/`` is extracted with ``git archive`` into a temporary folder and put first on
``PYTHONPATH``; the same interpreter and installed libraries run both, each tree compiled to
bytecode first (a fresh tree would otherwise pay for compiling every module on every run).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = {
    "--help": ["--help"],
    "check --help": ["check", "--help"],
    "groups --help": ["groups", "--help"],
    "check": ["check"],
}


def cpu_seconds(args: list[str], tools: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tools), "CI": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", *args], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"propeval {' '.join(args)} exited {proc.returncode} with {tools}")
    return usage.ru_utime + usage.ru_stime


def extract(rev: str, into: Path) -> Path:
    archive = into / "tools.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "tools"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "tools"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the git revision to compare with")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": extract(args.before, Path(tmp)), "this": REPO / "tools"}
        for tools in trees.values():  # both start from compiled bytecode, as an installed package does
            compileall.compile_dir(tools, quiet=1)
        times: dict[tuple[str, str], list[float]] = {(c, t): [] for c in COMMANDS for t in trees}
        for _ in range(args.rounds):
            for name, cmd in COMMANDS.items():
                for tree, tools in trees.items():
                    times[name, tree].append(cpu_seconds(cmd, tools))
    load_end = os.getloadavg()
    print(f"CPU-s (user+sys), median of {args.rounds} interleaved rounds; before = {args.before}")
    print(f"load average (1, 5, 15 min): start {load_start}, end {load_end}")
    print(f"{'command':<16}{'before':>9}{'this':>9}{'ratio':>8}")
    for name in COMMANDS:
        before = statistics.median(times[name, "before"])
        this = statistics.median(times[name, "this"])
        print(f"{name:<16}{before:>9.3f}{this:>9.3f}{this / before:>8.2f}")


if __name__ == "__main__":
    main()
