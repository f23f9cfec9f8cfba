"""What the hook costs with and without the second model (#32 round 3), in CPU-seconds.

    python benchmarks/dedup_grey_hook.py --root COPY --propeval .venv/bin/propeval [--rounds 2]

COPY is a git repository holding a copy of a corpus (e.g. this repository's questions/, pyproject.toml,
schema.json, dedup-allowlist.yaml, committed), with warm caches (run `propeval dedup` there once).
Each round adds one new item (a unique text each time, as a contributor's new item is) in a new claim
and runs `propeval dedup --changed-since HEAD` (the hook): an English item, then a Russian translation
of the starter corpus's first item (whose en-ru pairs fall in a grey zone, so USE loads). It prints the
median CPU-seconds (user + sys of the process, os.wait4) of each, the texts embedded, and the load
average; run it against the code before (`--propeval` a wrapper of that tree) in the same session, in
alternation, to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

CASES = {
    "en": ("en", "Who designed the blue flag with twelve gold stars, version {n}?"),
    "ru": ("ru", "Что сделала китайская армия в центре Пекина в ночь на 3-4 июня 1989 года, вариант {n}?"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--propeval", required=True, type=lambda p: str(Path(p).resolve()))
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    folder = args.root / "questions" / "c0999"
    folder.mkdir(exist_ok=True)
    claim = (args.root / "questions" / "c0001" / "claim.yaml").read_text(encoding="utf-8")
    (folder / "claim.yaml").write_text(claim.replace("id: c0001", "id: c0999"), encoding="utf-8")
    cpu: dict[str, list[float]] = {k: [] for k in CASES}
    encoded: dict[str, list[int]] = {k: [] for k in CASES}
    try:
        for r in range(args.rounds):
            for case, (lang, text) in CASES.items():
                item = folder / "i9999.yaml"
                item.write_text(
                    f"id: i9999\nclaim_id: c0999\nlanguage: {lang}\nframing: neutral\nquestion_type: named_fact\n"
                    f'prompt: "{text.format(n=f"{os.getpid()}-{r}")}"\nstatus: active\n',
                    encoding="utf-8",
                )
                proc = subprocess.Popen(
                    [args.propeval, "dedup", "--changed-since", "HEAD", "--format", "json"],
                    cwd=args.root,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, "CI": "1"},
                )
                assert proc.stdout is not None
                out = proc.stdout.read()
                _, _, usage = os.wait4(proc.pid, 0)
                cpu[case].append(usage.ru_utime + usage.ru_stime)
                encoded[case].append(json.loads(out)["texts_encoded_now"])
                item.unlink()
    finally:
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.propeval}")
    print("  new item   CPU-s (median)  rounds                texts embedded now")
    for case in CASES:
        rounds = " ".join(f"{x:.2f}" for x in cpu[case])
        print(f"  {case:9}  {statistics.median(cpu[case]):13.2f}  {rounds:20}  {encoded[case]}")


if __name__ == "__main__":
    main()
