"""A contributor's set-up from a fresh clone: ``make setup-light`` beside a core-only install.

Issue 37 asks that the contributor's install take at most a minute on a fresh machine. Each round
clones the committed tree into a temporary folder and, in turn (alternating which goes first),
runs ``make setup-light`` into an empty ``.venv`` (the core, ``dedup-light``, pre-commit, and
``pre-commit install``) and ``pip install -e .`` into an empty venv (the core alone, the floor
any install pays). ``--cold`` gives every run an empty pip cache of its own (everything is
downloaded from PyPI); otherwise pip's own cache is used as it is. It prints each run's wall and
CPU seconds (every child process), the medians and the ratio of the medians. On a shared machine
the CPU seconds are the figure to compare: the wall time grows with the load, which is printed.

    .venv/bin/python benchmarks/setup_light.py --rounds 3
    .venv/bin/python benchmarks/setup_light.py --rounds 1 --cold
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    cpu0, t0 = _children_cpu(), time.monotonic()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, cpu


def one_run(kind: str, scratch: Path, cold: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one install of ``kind`` ("light" or "core") into a fresh clone."""
    clone = scratch / f"clone-{kind}"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}
    if cold:
        cache = scratch / f"pip-cache-{kind}"
        shutil.rmtree(cache, ignore_errors=True)
        env["PIP_CACHE_DIR"] = str(cache)
    if kind == "light":
        return _timed(["make", "--no-print-directory", "setup-light", f"PYTHON={BASE_PYTHON}"], clone, env)
    wall0, cpu0 = _timed([BASE_PYTHON, "-m", "venv", ".venv"], clone, env)
    wall, cpu = _timed(
        [str(clone / ".venv/bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", "."],
        clone,
        env,
    )
    return wall0 + wall, cpu0 + cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="an empty pip cache for every run")
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"light": [], "core": []}
    print(f"{'round':>5}  {'install':<22}  {'wall s':>7}  {'CPU s':>6}  {'load':>5}")
    with tempfile.TemporaryDirectory(prefix="setup-light-") as tmp:
        for r in range(args.rounds):
            order = ("light", "core") if r % 2 == 0 else ("core", "light")
            for kind in order:
                wall, cpu = one_run(kind, Path(tmp), args.cold)
                runs[kind].append((wall, cpu))
                label = "make setup-light" if kind == "light" else "pip install -e . (core)"
                print(f"{r + 1:>5}  {label:<22}  {wall:>7.1f}  {cpu:>6.1f}  {os.getloadavg()[0]:>5.1f}", flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    cache = "an empty pip cache each run" if args.cold else "pip's cache as it is"
    print(f"\nmedians of {args.rounds} round(s), {cache}, {os.cpu_count()} CPUs:")
    print(f"  make setup-light         {med['light'][0]:7.1f} s wall  {med['light'][1]:6.1f} CPU-s")
    print(f"  pip install -e . (core)  {med['core'][0]:7.1f} s wall  {med['core'][1]:6.1f} CPU-s")
    print(
        f"  setup-light / core: {med['light'][0] / med['core'][0]:.2f}x wall, "
        f"{med['light'][1] / med['core'][1]:.2f}x CPU"
    )


if __name__ == "__main__":
    main()
