"""Scale benchmark (#40): every per-commit path and the main job at 1k, 10k and 50k items, before and after.

    .venv/bin/python benchmarks/scale.py --before 30647d1 [--sizes 1000,10000,50000] [--shapes single,five]
        [--reps 3] [--reps-large 1 --large-from 10001] [--timeout 300] [--only check,groups,...] [--work /tmp/scale]

Corpora (``benchmarks/scale_corpus.py``): 1k, 10k and 50k items in two shapes, one item per claim
(``single``) and five languages per claim with ``translation_of`` (``five``), each a git repository
with the starter corpus's ``[tool.propeval]``, schema and rubrics (each version's own). Commands, each a fresh process:

* ``check``, ``groups``: the whole corpus;
* ``dedup``: the whole corpus, warm (every text already in the embedding cache);
* ``hook``: ``pre-commit run`` with the propeval hooks of each version's own
  ``.pre-commit-config.yaml`` (before #40: check on the staged files, groups, dedup
  --changed-since HEAD, three processes; now ``propeval hook``, one) on one new item in a new
  claim, staged in a real git repository; a new text each round, so the model is loaded as in a
  real commit;
* ``ci``: ``propeval ci --base main`` on a branch that adds one item;
* ``run``: ``propeval run`` (every step and the HTML report), warm;
* ``import``: ``propeval import --dry-run`` of 2,000 new CSV rows (the CPE layout, 2 facts each;
  new texts each round).

Peers, timed in the same rounds on the "after" copy of each corpus (``--no-peers`` leaves them out):

* ``check``: check-jsonschema (``--schemafile schema.json`` on every item file), which validates
  only the schema where ``propeval check`` also runs its cross-file rules;
* ``dedup``: semhash (``SemHash.from_records(...).self_deduplicate(threshold=0.9)``, a fresh
  process) on the same texts with the same vectors: dedup's own units and the vectors of its
  embedding cache, exported once before timing and served to semhash by a lookup encoder, so
  neither side runs the model.

"before" is the code of ``--before REV`` (a ``git worktree`` of it, on PYTHONPATH), "after" this
tree's; each version has its own copy of every corpus (its own load and record caches) and both
share one embedding cache, warmed before timing. Rounds interleave the two versions (the order
alternating), and each figure is the median of ``--reps`` rounds. A command over ``--timeout``
seconds is stopped and shown as ``>T``. Printed: each median, after/before, the growth exponent
from 1k to 10k (log10 of the ratio of the 10k to the 1k time; 1.0 is linear), and the peak
resident memory of the command (its process tree, from wait4's rusage) in MB.

Each table is printed twice, in wall seconds and in CPU seconds (user + system of the command and
every child it waited for, from wait4's rusage), after each size. The machine is shared: read
ratios of the same run, not absolute seconds, and under load read the CPU table (a command's wall
time then mostly measures the other jobs); the load average is printed with the tables.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_corpus import SHAPES, _phrase, new_item, write_corpus

REPO = Path(__file__).resolve().parents[1]
COMMANDS = ("check", "groups", "dedup", "hook", "ci", "run", "import")
PEERS = {"check": "check-jsonschema", "dedup": "semhash"}
CLOCK = ["wall"]  # which figure the tables show: "wall" seconds or "cpu" seconds
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def hook_config(tools: Path) -> str:
    """The propeval hooks of a version's own ``.pre-commit-config.yaml`` (what a commit in that
    version's repository runs), calling that version through this interpreter."""
    import yaml

    config = yaml.safe_load((tools.parent / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [h for repo in config["repos"] for h in repo["hooks"] if "propeval" in h["entry"]]
    for h in hooks:
        h["entry"] = h["entry"].replace("scripts/in-venv propeval", f"{sys.executable} -m propeval")
        h["language"] = "system"
    head = "# The propeval hooks of the .pre-commit-config.yaml of the version under test.\n"
    return head + yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)


@dataclass
class Version:
    name: str
    tools: Path
    work: Path

    def env(self) -> dict[str, str]:
        # Not PYTHONDONTWRITEBYTECODE: a user's propeval imports its cached bytecode, and compiling
        # ~130 modules from source would add ~0.4 CPU-s to every command of both versions.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROPEVAL_") and k != "PYTHONDONTWRITEBYTECODE"}
        env |= GIT_ENV
        env |= {
            "PYTHONPATH": str(self.tools),
            "XDG_CACHE_HOME": str(self.work / "xdg-cache"),
            # One config folder for both versions: it holds the cache key that authenticates the shared
            # embedding cache (a version with a key of its own sets the other's file aside and embeds again).
            "XDG_CONFIG_HOME": str(self.work.parent / "xdg-config"),
            "XDG_STATE_HOME": str(self.work / "xdg-state"),
            "PRE_COMMIT_HOME": str(self.work / "pre-commit"),
            "HF_HUB_OFFLINE": "1",
            "CI": "1",  # no progress bars
            "NO_COLOR": "1",
        }
        return env


@dataclass
class Timing:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    timed_out: bool = False
    cpu_at_stop: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        values = self.cpu if CLOCK[0] == "cpu" else self.seconds
        return statistics.median(values) if values and not self.timed_out else None


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **GIT_ENV, **(env or {})}, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {root}: {proc.stderr}")
    return proc.stdout


Measured = tuple[float, float, float, int, str]  # wall s, CPU s, peak MB, exit code, output


def timed(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Measured:
    """Wall seconds, CPU seconds (user + system of the process and every child it waited for),
    peak RSS in MB of the largest of them, exit code and output of ``cmd``; wall seconds is inf
    when it ran past ``timeout`` (the CPU seconds are then those spent until it was stopped)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                return math.inf, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, -9, ""
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, text


def import_rows(path: Path, n: int, seed: str) -> None:
    """``n`` CPE rows as CSV (a spreadsheet's export: lists as JSON arrays), two facts each, every
    text new (a seed of its own), in English."""
    import csv

    rng = random.Random(seed)
    fields = [
        "id",
        "prompt",
        "required_facts",
        "question_description",
        "categories",
        "source_url",
        "source_date",
        "anchor",
        "official_frame_markers",
        "language",
    ]
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=fields)
        out.writeheader()
        for k in range(n):
            out.writerow(
                {
                    "id": f"bench-{seed}-{k}",
                    "prompt": f"What happened: {_phrase(rng, 'en', 6, 10)}?",
                    "required_facts": json.dumps(
                        [_phrase(rng, "en", 7, 11).capitalize() + "." for _ in range(2)], ensure_ascii=False
                    ),
                    "question_description": "named fact",
                    "categories": json.dumps(["freedom of expression"]),
                    "source_url": f"https://example.org/import/{seed}/{k}",
                    "source_date": "2024-05-01",
                    "anchor": f"Section {k}",
                    "official_frame_markers": "[]",
                    "language": "en",
                }
            )


EXPORT = """
import json, sys
from pathlib import Path
import numpy as np
from propeval.config import load_config
from propeval.dedup.embedding import embed_units
from propeval.dedup.result import DedupResult
from propeval.settings import DedupSettings
from propeval.dedup.units import load_units
config = load_config(Path.cwd())
settings = config.settings.dedup
units, _ = load_units(config, settings)
result = DedupResult()
vectors = embed_units(units, settings, config.root, result)
Path(sys.argv[1]).write_text(json.dumps([u.norm for u in units]), encoding="utf-8")
np.save(sys.argv[2], np.asarray(vectors, dtype=np.float32))
print(len(units), result.encoded)
"""

SEMHASH = """
import json, sys
from pathlib import Path
import numpy as np
from semhash import SemHash

class Lookup:
    # semhash's Encoder: the vectors dedup's embedding cache holds, by text
    def __init__(self, texts, vectors):
        self.rows = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors
    def encode(self, sentences, **kwargs):
        return self.vectors[[self.rows[t] for t in sentences]]

texts = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
vectors = np.load(sys.argv[2])
result = SemHash.from_records(texts, model=Lookup(texts, vectors)).self_deduplicate(threshold=0.9)
print(len(result.selected), len(result.filtered))
"""


class Corpus:
    """One corpus of one version: a git repository on ``main``, with a branch ``pr`` adding one item."""

    def __init__(self, root: Path, shape: str, items: int, version: Version, embeddings: Path) -> None:
        self.root, self.shape, self.items, self.version = root, shape, items, version
        self.embeddings = embeddings
        self.hooks = root.parent / f"{root.name}-pre-commit-config.yaml"

    def make(self) -> None:
        if (self.root / ".git").is_dir():
            return
        # Each version's own config, schema and rubrics: the starting commit refuses keys added since.
        repo = self.version.tools.parent
        write_corpus(self.root, self.items, self.shape, cache_dir=str(self.embeddings), repo=repo)
        shutil.copytree(repo / "rubrics", self.root / "rubrics")
        (self.root / ".gitignore").write_text("report.html\nledger/dedup.json\nruns/\n", encoding="utf-8")
        git(self.root, "init", "-q", "-b", "main")
        git(self.root, "config", "commit.gpgsign", "false")
        git(self.root, "add", "-A")
        git(self.root, "commit", "-qm", "corpus")
        git(self.root, "checkout", "-qb", "pr")
        new_item(self.root, self.shape, seed=7)
        git(self.root, "add", "-A")
        git(self.root, "commit", "-qm", "one new item")
        git(self.root, "checkout", "-q", "main")
        # Files a minute old: the load cache keeps only files that did not change in the last seconds.
        then = time.time() - 60
        for p in (self.root / "questions").rglob("*"):
            os.utime(p, (then, then))

    def command(self, name: str, rnd: int) -> tuple[list[str], Path | None]:
        """The command line of ``name`` for round ``rnd``, and a file to remove after it."""
        propeval = [sys.executable, "-m", "propeval"]
        if name in ("check", "groups"):
            return [*propeval, name], None
        if name == "dedup":
            return [*propeval, "dedup", "--format", "json"], None
        if name == "run":
            return [*propeval, "run", "--report", str(self.root / "report.html")], None
        if name == "ci":
            return [*propeval, "ci", "--base", "main", "--format", "json"], None
        if name == "import":
            rows = self.root.parent / f"{self.root.name}-import-{rnd}.csv"
            import_rows(rows, 2000, f"{self.version.name}-{rnd}")
            return [*propeval, "import", str(rows), "--language", "en", "--dry-run", "--format", "json"], rows
        if name == "hook":
            self.hooks.write_text(hook_config(self.version.tools), encoding="utf-8")
            return [sys.executable, "-m", "pre_commit", "run", "-c", str(self.hooks)], None
        raise ValueError(name)

    def peer(self, name: str, timeout: float) -> Measured:
        """The peer of ``name`` (check-jsonschema for check, semhash for dedup) on this corpus."""
        if name == "check":
            files = sorted(str(p.relative_to(self.root)) for p in (self.root / "questions").glob("c*/i*.yaml"))
            cmd = [str(Path(sys.executable).parent / "check-jsonschema"), "--schemafile", "schema.json", *files]
        else:
            texts, vectors = (
                self.root.parent / f"{self.root.name}-texts.json",
                self.root.parent / f"{self.root.name}-vectors.npy",
            )
            if not vectors.exists():
                _, _, _, code, out = timed(
                    [sys.executable, "-c", EXPORT, str(texts), str(vectors)],
                    self.root,
                    self.version.env(),
                    timeout * 20,
                )
                if code != 0:
                    return math.inf, 0.0, 0.0, code, out
            cmd = [sys.executable, "-c", SEMHASH, str(texts), str(vectors)]
        try:
            return timed(cmd, self.root, self.version.env(), timeout)
        except OSError as exc:  # an argument list over the system's limit
            return math.inf, 0.0, 0.0, -1, str(exc)

    def before(self, name: str, rnd: int) -> None:
        if name == "ci":
            git(self.root, "checkout", "-q", "pr")
        if name == "hook":
            path = new_item(self.root, self.shape, seed=1000 + rnd + (0 if self.version.name == "after" else 500))
            git(self.root, "add", str(path.parent))

    def after(self, name: str) -> None:
        if name == "ci":
            git(self.root, "checkout", "-q", "main")
        if name == "hook":
            git(self.root, "reset", "-q")
            git(self.root, "clean", "-qfd", "questions")

    def time(self, name: str, rnd: int, timeout: float) -> Measured:
        cmd, scratch = self.command(name, rnd)
        self.before(name, rnd)
        try:
            return timed(cmd, self.root, self.version.env(), timeout)
        finally:
            self.after(name)
            if scratch is not None:
                scratch.unlink(missing_ok=True)


EMBEDS = ("dedup", "hook", "ci", "run", "import")


def warm(corpus: Corpus, timeout: float, commands: list[str]) -> list[str]:
    """Fill the caches (embeddings, load and record caches, the ONNX export, pre-commit's own);
    the embeddings only when a timed command reads them."""
    notes = []
    embeds = any(c in EMBEDS for c in commands)
    for name in ("check", "dedup", "dedup", "groups") if embeds else ("check", "groups"):
        # The embedding warm-up may take long; a quadratic command is stopped as it would be timed.
        seconds, _, _, _, _ = corpus.time(name, 0, timeout * 20 if name == "dedup" else timeout)
        if math.isinf(seconds):
            notes.append(f"warm-up {name} timed out")
    if not embeds:
        return notes
    _, _, _, _, out = corpus.time("dedup", 0, timeout * 20)
    with contextlib.suppress(ValueError, KeyError):
        encoded = json.loads(out[out.index("{") :])["texts_encoded_now"]
        if encoded:
            notes.append(f"dedup still encoded {encoded} text(s) after warming")
    return notes


@contextlib.contextmanager
def before_tree(rev: str, work: Path) -> Iterator[Path]:
    tree = work / f"before-{rev}"  # one per revision: two runs in one --work may compare with two
    if not tree.exists():
        git(REPO, "worktree", "add", "--detach", str(tree), rev)
    try:
        yield tree / "tools"
    finally:
        git(REPO, "worktree", "remove", "--force", str(tree))


def exponent(t1: float | None, t10: float | None) -> str:
    if t1 is None or t10 is None or t1 <= 0:
        return "-"
    return f"{math.log10(t10 / t1):.2f}"


def fmt(t: Timing, timeout: float) -> str:
    if t.timed_out:
        return f">{t.cpu_at_stop:.0f}" if CLOCK[0] == "cpu" else f">{timeout:g}"
    m = t.median
    return "-" if m is None else f"{m:.2f}"


def tables(
    results: dict[tuple[str, int, str, str], Timing],
    names: list[str],
    sizes: list[int],
    shapes: list[str],
    commands: list[str],
    timeout: float,
) -> None:
    """The main table (each version's median per size, after/before, growth exponent, peak memory)
    and the peers' table, in the clock ``CLOCK`` names."""
    head = f"{'command':8} {'shape':6} " + " ".join(f"{n} {s // 1000}k".rjust(12) for s in sizes for n in names)
    head += "  after/before " + " ".join(f"{s // 1000}k".rjust(5) for s in sizes)
    head += "  exponent 1k-10k " + " ".join(n[:6].rjust(7) for n in names) + "  peak MB (largest)"
    print(head)
    for name in commands:
        for shape in shapes:
            row = f"{name:8} {shape:6} "
            row += " ".join(
                fmt(results.get((n, s, shape, name), Timing()), timeout).rjust(12) for s in sizes for n in names
            )
            ratios = []
            for s in sizes:
                b = results.get(("before", s, shape, name))
                a = results.get(("after", s, shape, name))
                if a and b and a.median is not None and b.median is not None:
                    ratios.append(f"{a.median / b.median:.2f}")
                elif a and b and a.median is not None and b.timed_out:
                    bound = b.cpu_at_stop if CLOCK[0] == "cpu" else timeout
                    ratios.append(f"<{a.median / bound:.2f}" if bound else "-")
                else:
                    ratios.append("-")
            row += "  " + " " * 12 + " ".join(r.rjust(5) for r in ratios)
            exps = []
            for n in names:
                t1 = results.get((n, 1000, shape, name))
                t10 = results.get((n, 10000, shape, name))
                exps.append(exponent(t1.median if t1 else None, t10.median if t10 else None))
            row += "  " + " " * 16 + " ".join(e.rjust(7) for e in exps)
            peaks = [
                max(results[(n, max(sizes), shape, name)].peak_mb or [0])
                for n in names
                if (n, max(sizes), shape, name) in results
            ]
            row += "  " + " ".join(f"{p:.0f}" for p in peaks)
            print(row)
    peer_rows = [(name, shape, size) for name in commands if name in PEERS for shape in shapes for size in sizes]
    if any(("peer", size, shape, name) in results for name, shape, size in peer_rows):
        print()
        print("peers on the same corpus in the same rounds (ratio: propeval / peer, below 1 is faster)")
        print(
            f"{'command':8} {'peer':16} {'shape':6} {'size':>6} {'before':>8} {'after':>8} {'peer':>8} "
            f"{'before/peer':>12} {'after/peer':>11} {'peer MB':>8}"
        )
        for name, shape, size in peer_rows:
            peer = results.get(("peer", size, shape, name))
            if peer is None:
                continue
            cells = [results.get((v, size, shape, name), Timing()) for v in ("before", "after")]
            ratio = [
                f"{c.median / peer.median:.2f}" if c.median is not None and peer.median is not None else "-"
                for c in cells
            ]
            print(
                f"{name:8} {PEERS[name]:16} {shape:6} {size:>6} "
                + " ".join(fmt(c, timeout).rjust(8) for c in (*cells, peer))
                + f" {ratio[0]:>12} {ratio[1]:>11} {max(peer.peak_mb or [0]):8.0f}"
            )


def report(
    results: dict[tuple[str, int, str, str], Timing],
    loads: list[float],
    names: list[str],
    sizes: list[int],
    shapes: list[str],
    commands: list[str],
    args: argparse.Namespace,
) -> None:
    """Both tables so far, in wall and in CPU seconds (printed after each size, so a run stopped
    at 50k keeps its 1k and 10k tables)."""
    print()
    print(f"load average during the timings: median {statistics.median(loads):.1f}, max {max(loads):.1f} (2 cores)")
    print(
        f"medians of {args.reps} interleaved rounds ({args.reps_large} from {args.large_from} items); "
        f"'>T': stopped at {args.timeout:g} wall seconds (CPU table: the CPU seconds spent until then)"
    )
    for clock in ("wall", "cpu"):
        CLOCK[0] = clock
        print()
        print("wall seconds" if clock == "wall" else "CPU seconds (user + system, the command and its children)")
        tables(results, names, sizes, shapes, commands, args.timeout)
    notes = [(k, n) for k, t in results.items() for n in t.notes]
    for (v, s, shape, name), n in notes[:20]:
        print(f"note: {v} {shape} {s} {name}: {n}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the git revision to compare with (the starting commit)")
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--reps-large", type=int, default=1, help="rounds at sizes from --large-from items")
    ap.add_argument("--large-from", type=int, default=10001)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--only", default=",".join(COMMANDS))
    ap.add_argument("--versions", default="before,after")
    ap.add_argument("--no-peers", action="store_true", help="leave out check-jsonschema and semhash")
    ap.add_argument("--work", type=Path, default=None, help="keep corpora and caches here between runs")
    ap.add_argument(
        "--skip-warm",
        action="store_true",
        help="time at once: the corpora in --work were warmed by an earlier run (--warm-only) of this tree",
    )
    ap.add_argument(
        "--warm-only",
        action="store_true",
        help="build the corpora and fill their caches (embeddings, load caches), time nothing; with --work, "
        "a later run reuses them (at ~70 texts per CPU-second, 10k items are 14k-30k texts to embed)",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    commands = [c for c in COMMANDS if c in args.only.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="propeval-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    loads: list[float] = []
    results: dict[tuple[str, int, str, str], Timing] = {}
    with before_tree(args.before, work) as old_tools:
        versions = [
            v
            for v in (Version("before", old_tools, work / "before"), Version("after", REPO / "tools", work / "after"))
            if v.name in args.versions.split(",")
        ]
        for size in sizes:
            for shape in shapes:
                embeddings = work / f"embeddings-{shape}"
                corpora = [Corpus(v.work / f"{shape}-{size}", shape, size, v, embeddings) for v in versions]
                for c in corpora:
                    c.make()
                    started = time.perf_counter()
                    for note in [] if args.skip_warm else warm(c, args.timeout, commands):
                        print(f"{c.version.name} {shape} {size}: {note}", flush=True)
                    print(f"{c.version.name} {shape} {size}: warm in {time.perf_counter() - started:.0f} s", flush=True)
                if args.warm_only:
                    continue
                reps = args.reps if size < args.large_from else args.reps_large
                for name in commands:
                    for rnd in range(1, reps + 1):
                        runs: list[tuple[str, Callable[[], Measured]]] = [
                            (c.version.name, functools.partial(c.time, name, rnd, args.timeout)) for c in corpora
                        ]
                        peer_of = [c for c in corpora if c.version.name == "after"]
                        if name in PEERS and peer_of and not args.no_peers:
                            runs.append(("peer", functools.partial(peer_of[0].peer, name, args.timeout)))
                        for who, run in runs if rnd % 2 else runs[::-1]:
                            t = results.setdefault((who, size, shape, name), Timing())
                            if t.timed_out:
                                continue
                            loads.append(os.getloadavg()[0])
                            seconds, cpu, peak, code, out = run()
                            if math.isinf(seconds):
                                t.timed_out = True
                                t.cpu_at_stop = max(t.cpu_at_stop, cpu)
                            else:
                                t.seconds.append(seconds)
                                t.cpu.append(cpu)
                            t.peak_mb.append(peak)
                            if code not in (0, 1):
                                t.notes.append(f"exit {code}: {out.strip().splitlines()[-1:] if out else ''}")
                            label = PEERS[name] if who == "peer" else name
                            print(
                                f"{who:6} {shape:6} {size:>6} {label:16} round {rnd}: "
                                f"{seconds:8.2f} s  {cpu:8.2f} CPU-s  exit {code}  peak {peak:7.0f} MB",
                                flush=True,
                            )
            if not args.warm_only:
                report(
                    results, loads, [v.name for v in versions], [s for s in sizes if s <= size], shapes, commands, args
                )


if __name__ == "__main__":
    main()
