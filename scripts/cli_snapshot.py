"""Snapshot the CLI's json outputs on the starter corpus, and compare two snapshots.

Issue #17 restructured the code under a rule: behaviour stays the same except for named fixes. This
script is how that is checked. It copies the corpus of a checkout into a temporary git repository,
runs every command that has a json output there (answer and grade against a scripted loopback
server, so that score and difficulty have real runs to read), hashes the release that `export`
writes, and keeps each output as one file. Paths of the temporary folder and run timings are
normalised away; everything else is kept as printed.

    # before and after: the propeval code comes from PYTHONPATH (or the installed package)
    PYTHONPATH=/path/to/old/tools python scripts/cli_snapshot.py snap /tmp/snap-old
    PYTHONPATH=$PWD/tools python scripts/cli_snapshot.py snap /tmp/snap-new
    python scripts/cli_snapshot.py compare /tmp/snap-old /tmp/snap-new   # exit 1 on a difference

`--corpus DIR` takes the corpus from another checkout (default: this script's repository).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from corpus_copy import corpus_repo
from corpus_copy import git as corpus_git

REPO = Path(__file__).resolve().parents[1]
CORPUS_PARTS = ("questions", "rubrics", "ledger", "schema.json", "pyproject.toml")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "snap",
    "GIT_AUTHOR_EMAIL": "snap@example.invalid",
    "GIT_COMMITTER_NAME": "snap",
    "GIT_COMMITTER_EMAIL": "snap@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
# Keys whose values are clocks, not behaviour.
VOLATILE_KEYS = {"elapsed", "elapsed_s", "seconds", "duration", "duration_s", "started", "finished", "wall_s"}
MODELS = ("model-a", "model-b", "model-c", "model-d")


def script(seen: Any) -> Any:
    """Answers name the model; the judge states each fact or not by a hash of answer and fact, so runs
    of different models get different, reproducible scores."""
    from propeval.judge import loopback as lb

    if not lb.is_judge_request(seen):
        return lb.Reply(f"An answer from {seen.body.get('model')} to: {seen.prompt[:60]}")
    if "propaganda_inclusion" in lb._FENCED.sub("", seen.prompt):
        # The prompt's fence token is random per call (judge/prompt.py): hash it out, or the
        # scripted labels (and so the token counts) would differ between two snapshots.
        stable = re.sub(r"\b[0-9A-F]{16}\b", "TOKEN", seen.prompt)
        h = int(hashlib.sha256(stable.encode()).hexdigest(), 16)
        return lb.Reply(lb.audit_verdict(("Correct", "Incorrect")[h % 2], h % 3 == 0))
    answer = re.search(r"An answer from (\S+) to", seen.prompt)
    who = answer.group(1) if answer else ""
    facts = []
    for fid in lb.fact_ids(seen):
        h = int(hashlib.sha256(f"{who}|{fid}|{seen.prompt[-200:]}".encode()).hexdigest(), 16)
        facts.append({"id": fid, "state": ("stated", "missed", "opposed")[h % 3], "evidence": None})
    verdict = {"rationale": "scripted", "facts": facts, "propaganda": int(who.endswith("d")), "frame_adopted": None}
    return lb.Reply(json.dumps(verdict))


def run(root: Path, out: Path, name: str, *args: str, env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "propeval", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=1800,
    )
    text = proc.stdout
    try:
        doc: Any = json.loads(text)
        text = json.dumps(scrub(doc, root), indent=1, sort_keys=True, ensure_ascii=False)
    except ValueError:
        text = scrub_text(text, root)
    (out / f"{name}.out").write_text(f"exit {proc.returncode}\n{text}\n", encoding="utf-8")
    (out / f"{name}.err").write_text(scrub_text(proc.stderr, root), encoding="utf-8")
    print(f"{name}: exit {proc.returncode}", flush=True)


def scrub(doc: Any, root: Path) -> Any:
    if isinstance(doc, dict):
        return {k: ("<clock>" if k in VOLATILE_KEYS else scrub(v, root)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [scrub(v, root) for v in doc]
    if isinstance(doc, str):
        return scrub_text(doc, root)
    return doc


def scrub_text(text: str, root: Path) -> str:
    for path, name in ((root, "<ROOT>"), (root.parent, "<TMP>")):
        text = text.replace(str(path), name).replace(str(path.resolve()), name)
    text = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:<PORT>", text)
    return re.sub(r"\b\d+(\.\d+)? ?s\b(?= |\)|,|$)", "<T>s", text, flags=re.M)


def git(root: Path, *args: str) -> None:
    corpus_git(root, GIT_ENV, *args)


def snap(out: Path, corpus: Path) -> None:
    from propeval.judge.loopback import LoopbackServer

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="propeval-snap-") as tmp:
        root = Path(tmp) / "corpus"
        corpus_repo(corpus, root, CORPUS_PARTS, GIT_ENV)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROPEVAL_")}
        env |= {"PROPEVAL_STATE_DIR": str(Path(tmp) / "state"), "NO_COLOR": "1", "COLUMNS": "120"}

        run(root, out, "check", "check", "--format", "json", env=env)
        run(root, out, "groups", "groups", "--format", "json", env=env)
        run(root, out, "stats", "stats", "--format", "json", env=env)
        run(root, out, "gate-answerability", "gate", "answerability", "--all", "--format", "json", env=env)
        run(root, out, "gate-judge", "gate", "judge", "--rubric", "facts-v1", "--format", "json", env=env)
        run(root, out, "dedup", "dedup", "--format", "json", env=env)
        run(root, out, "schema-diff", "schema", "diff", "--base", "HEAD", "--format", "json", env=env)

        # A pull request: one new item that repeats an existing one, one fact edited.
        git(root, "checkout", "-q", "-b", "pr")
        items = sorted((root / "questions").glob("c*/i*.yaml"))
        first = items[0]
        text = first.read_text(encoding="utf-8")
        new_id = "i9001"
        old_id = first.stem
        (first.parent / f"{new_id}.yaml").write_text(
            text.replace(f"id: {old_id}", f"id: {new_id}").replace("status: active", "status: active"),
            encoding="utf-8",
        )
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "a repeated item")
        run(root, out, "ci", "ci", "--base", "main", "--format", "json", env=env)
        run(root, out, "check-changed", "check", "--changed-since", "main", "--format", "json", env=env)
        git(root, "checkout", "-q", "main")
        git(root, "branch", "-q", "-D", "pr")

        # Runs: answer and grade with four scripted models, then score and difficulty.
        with LoopbackServer(script) as srv:
            pyproject = root / "pyproject.toml"
            pyproject.write_text(
                pyproject.read_text(encoding="utf-8")
                + f'\n[tool.propeval.judge.endpoints.snap]\nbase_url = "{srv.base_url}"\nmodel = "model-a"\n'
                'api_key_env = ""\nresponse_format = "json_schema"\n',
                encoding="utf-8",
            )
            for model in MODELS:
                run_id = f"run-{model}"
                common = ["--base-url", srv.base_url]
                run(root, out, f"answer-{model}", "answer", "--endpoint", "snap", "--model", model,
                    "--run-id", run_id, "--limit", "60", *common, "--format", "json", env=env)  # fmt: skip
                for rubric in ("facts-v1", "audit-v1"):
                    run(root, out, f"grade-{model}-{rubric}", "grade", run_id, "--rubric", rubric, "--judge", "snap",
                        "--judge-model", "judge-x", *common, "--format", "json", env=env)  # fmt: skip
        runs = [f"run-{m}" for m in MODELS]
        run(root, out, "score-facts", "score", *runs, "--format", "json", env=env)
        run(root, out, "score-audit", "score", *runs, "--rubric", "audit-v1", "--format", "json", env=env)
        run(root, out, "difficulty", "difficulty", "--format", "json", env=env)
        run(root, out, "difficulty-report", "difficulty", "--report", "--format", "json", env=env)

        release = Path(tmp) / "release"
        run(root, out, "export", "export", "--out", str(release), "--format", "json", env=env)
        lines = []
        for path in sorted(p for p in release.rglob("*") if p.is_file()):
            lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(release)}")
        (out / "export-tree.out").write_text("\n".join(lines) + "\n", encoding="utf-8")
        card = release / "README.md"
        if card.is_file():
            (out / "export-card.out").write_text(card.read_text(encoding="utf-8"), encoding="utf-8")


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differ = 0
    for name in names:
        pa, pb = a / name, b / name
        ta = pa.read_text(encoding="utf-8").splitlines() if pa.exists() else ["<missing>"]
        tb = pb.read_text(encoding="utf-8").splitlines() if pb.exists() else ["<missing>"]
        if ta != tb:
            differ += 1
            print(f"== {name} differs")
            diff = list(difflib.unified_diff(ta, tb, str(pa), str(pb), n=1, lineterm=""))
            print("\n".join(diff[:60]))
    print(f"{len(names) - differ} of {len(names)} outputs identical")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snap", help="run every json command on a copy of the corpus; write outputs to OUT")
    s.add_argument("out", type=Path)
    s.add_argument("--corpus", type=Path, default=REPO)
    c = sub.add_parser("compare", help="diff two snapshots; exit 1 if any output differs")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "snap":
        snap(args.out, args.corpus)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
