"""Every code block of the docs runs, is validated, or says why it cannot run here.

A fenced ``sh``, ``bash``, ``console``, ``yaml``, ``toml`` or ``json`` block of README.md,
CONTRIBUTING.md, SECURITY.md, questions/README.md, benchmarks/README.md or a page of docs/ carries
a marker: an HTML comment on the line above its fence (or above the cog comment that makes it),
which the page's source shows and the rendered page does not (docs/developing.md, "Examples in
the docs", says how to write one):

- ``<!-- example: run -->``: the block runs here, in bash, in a git copy of the starter corpus in
  ``tmp_path`` (``origin`` a remote whose ``main`` is that corpus), with the suite's isolated user
  folders and no network; every command must exit 0, or as ``exit 1`` (one code for every
  command) or ``exit 0 0 1`` (one per command) says. ``given NAME`` first adds the files the
  example presumes (:data:`GIVEN`). A line ``propeval serve-local ... &`` starts the loopback stub
  model instead, on a free port that the local endpoint of the copy's settings names.
- ``<!-- example: run by tests/PATH.py -->``: that test runs it (the README's quickstarts, ``make
  run``, the harness smoke); the test must exist and name the page.
- ``<!-- example: data -->``: the text is parsed by the project's strict loader (YAML) or by
  the settings' TOML reader (TOML) or the strict JSON loader; ``data item`` and ``data claim`` merge it into a
  starter item or claim, which ``propeval check`` must pass; ``data settings`` goes into the copy's
  pyproject.toml, which the settings reader must take; ``data workflow`` is a GitHub Actions step
  list, each ``propeval`` command of it parsed by click.
- ``<!-- example: not run: REASON -->``: needs an API key, a maintainer's signing key, GitHub, or
  is long (a benchmark, the whole suite): the reason is required. :data:`NOT_RUN` is the list.

A cog block that runs its command (``console(...)``/``example(...)`` in its cog code) needs no
marker: the cog check (tests/test_docs_examples.py) reruns it and compares the output.

The fast lane checks that every block is marked and validates the data blocks; running the
``run`` blocks is ``slow``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from helpers import GIT_ENV, REPO
from test_docs_examples import check_propeval, shell_words

PAGES = (
    "README.md",
    "CONTRIBUTING.md",
    "SECURITY.md",
    "questions/README.md",
    "benchmarks/README.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")),
)
LANGS = ("sh", "bash", "console", "yaml", "toml", "json")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
MARKER = re.compile(r"^\s*<!-- example: (.+?) -->\s*$")
# The blocks that are not run here; a new one needs a reason as good as these.
NOT_RUN = 11


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str  # dedented
    marker: str  # "" when none; "cog" for a cog block that runs its command

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    lines = (REPO / page).read_text(encoding="utf-8").splitlines()
    found = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        lang = opening.group(2)
        if lang in LANGS:
            above = i - 1
            marker = ""
            if above >= 0 and lines[above].rstrip().endswith("]]] -->"):  # a cog block: its code above
                start = next(k for k in range(above, -1, -1) if "<!-- [[[cog" in lines[k])
                code = "\n".join(lines[start : above + 1])
                marker = "cog" if re.search(r"\b(console|example)\(", code) else ""
                above = start - 1
            m = MARKER.match(lines[above]) if above >= 0 else None
            if m:
                marker = m.group(1).strip()
            text = textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n"
            found.append(Block(page, i + 1, lang, text, marker))
        i = end + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]


def kind(block: Block) -> str:
    return block.marker.split(":")[0].split()[0] if block.marker else ""


def test_every_block_is_run_validated_or_marked_not_run() -> None:
    unmarked = [b.id for b in ALL if kind(b) not in ("cog", "run", "data", "not")]
    assert unmarked == [], (
        "code blocks without an example marker (docs/developing.md, 'Examples in the docs'): " + ", ".join(unmarked)
    )
    not_run = [b for b in ALL if kind(b) == "not"]
    for b in not_run:
        reason = b.marker.removeprefix("not run:").strip()
        assert b.marker.startswith("not run:") and len(reason) > 15, f"{b.id}: say why it cannot run here"
    assert len(not_run) <= NOT_RUN, "more blocks are not run: " + ", ".join(b.id for b in not_run)
    assert sum(kind(b) == "run" for b in ALL) >= 8


@pytest.mark.parametrize("block", [b for b in ALL if b.marker.startswith("run by ")], ids=lambda b: b.id)
def test_a_block_run_by_another_test_names_a_test_that_exists(block: Block) -> None:
    name = block.marker.removeprefix("run by ").split()[0]
    path = REPO / name
    assert name.startswith("tests/") and path.name.startswith("test_") and path.is_file(), f"{block.id}: no test {name}"


# --- data ------------------------------------------------------------------------------------


def _load(block: Block) -> object:
    """The block parsed as the project parses its files; a YAML or JSON fragment that is not a
    mapping (a step list) is read as the value of one key."""
    from propeval.config import parse_toml
    from propeval.loader import load_text

    if block.lang == "toml":
        return parse_toml(block.text.encode(), block.id)
    text = block.text
    if block.lang == "yaml" and text.lstrip().startswith("- "):
        text = "steps:\n" + textwrap.indent(text, "  ")
        return load_text(text, block.id).data["steps"]
    return load_text(text, block.id, kind=block.lang).data


DATA = [b for b in ALL if kind(b) == "data"]


@pytest.mark.parametrize("block", DATA, ids=lambda b: b.id)
def test_a_data_block_loads(block: Block) -> None:
    data = _load(block)
    what = block.marker.removeprefix("data").strip()
    assert what in ("", "workflow", "item", "claim", "settings"), f"{block.id}: unknown data kind {what!r}"
    if what == "workflow":
        assert isinstance(data, list) and data, block.id
        for step in data:
            assert isinstance(step, dict) and ("run" in step or "uses" in step), f"{block.id}: {step}"
            for line in str(step.get("run", "")).splitlines():
                words = shell_words(line)
                if words[:1] == ["propeval"]:
                    try:
                        check_propeval(words[1:])
                    except click.UsageError as e:
                        pytest.fail(f"{block.id}: `{line}`: {e.format_message()}")
    elif what:
        assert isinstance(data, dict), block.id


@pytest.mark.slow
@pytest.mark.parametrize("block", [b for b in DATA if b.marker in ("data item", "data claim")], ids=lambda b: b.id)
def test_an_item_or_claim_block_passes_check(block: Block, tmp_path: Path) -> None:
    """The fields shown, put into a starter item (or claim), make a file ``propeval check`` passes."""
    from propeval.loader import load_file

    root = corpus_copy(tmp_path)
    path = root / ("questions/c0001/claim.yaml" if block.marker == "data claim" else "questions/c0001/i0002.yaml")
    data = _load(block)
    assert isinstance(data, dict)
    merged = {**load_file(path).data, **data}
    path.write_text("".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in merged.items()), "utf-8")
    done = propeval(root, "check", str(path.relative_to(root)))
    assert done.returncode == 0, f"{block.id}: propeval check:\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("block", [b for b in DATA if b.marker == "data settings"], ids=lambda b: b.id)
def test_a_settings_block_is_taken_by_the_settings_reader(block: Block, tmp_path: Path) -> None:
    from propeval.config import load_config

    (tmp_path / "pyproject.toml").write_text(block.text, encoding="utf-8")
    load_config(tmp_path)


# --- run -------------------------------------------------------------------------------------

CORPUS_PARTS = (
    "questions",
    "rubrics",
    "ledger",
    "schema.json",
    "pyproject.toml",
    "CHANGELOG.md",
    "dedup-allowlist.yaml",
)
LOCAL_URL = "http://127.0.0.1:8080/v1"
BACKGROUND = re.compile(r"&\s*(#.*)?$")  # a command put in the background, and its comment


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True, text=True
    )
    return done.stdout


def corpus_copy(tmp_path: Path, port: int | None = None) -> Path:
    """A git repository (branch main) holding the starter corpus, with a remote ``origin`` (a bare
    clone) whose main is the same commit, fetched. ``port``: the local endpoint's, committed (a
    checkout that moves an endpoint since its base is refused)."""
    root = tmp_path / "corpus"
    root.mkdir()
    for part in CORPUS_PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, root / part)
        elif src.is_file():
            shutil.copy2(src, root / part)
    if port is not None:
        pyproject = root / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        assert f'base_url = "{LOCAL_URL}"' in text
        pyproject.write_text(text.replace(LOCAL_URL, f"http://127.0.0.1:{port}/v1"), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Docs Reader")  # as a contributor's git has it
    git(root, "config", "user.email", "reader@example.invalid")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "corpus")
    git(tmp_path, "clone", "-q", "--bare", str(root), "origin.git")
    git(root, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(root, "fetch", "-q", "origin")
    return root


def environment() -> dict[str, str]:
    """The suite's environment (its isolated user folders), this checkout's propeval first."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAKEFLAGS", "MAKELEVEL")}
    env.update(GIT_ENV)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env["PYTHONPATH"] = str(REPO / "tools")
    env.update({"NO_COLOR": "1", "TERM": "dumb", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return env


def propeval(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "propeval", *argv], cwd=root, env=environment(), capture_output=True, text=True
    )


@dataclass
class Command:
    line: str
    output: list[str]  # a console block's lines shown under it


def commands(block: Block) -> list[Command]:
    """The block's commands, one a line (continuations joined; comments left out; in a console
    block, the ``$ `` lines, each with the output lines under it)."""
    found: list[Command] = []
    for line in block.text.replace("\\\n", " ").splitlines():
        if block.lang == "console":
            if line.startswith("$ "):
                found.append(Command(line[2:].strip(), []))
            elif found:
                found[-1].output.append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            found.append(Command(line.strip(), []))
    return found


def shown_in(shown: list[str], printed: str) -> bool:
    """Each shown line is a printed line, in order (lines may be left out between them); ``...``
    in a shown line stands for any text."""
    lines = iter(printed.splitlines())
    for want in shown:
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        if not any(pattern.fullmatch(got) for got in lines):
            return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _grade(item: str, model: str, score: int) -> dict[str, object]:
    """One line of grades-facts-v1.jsonl, as the judge writes it."""
    return {
        "item_id": item,
        "model": model,
        "rubric": "facts-v1",
        "rubric_version": "1",
        "rubric_hash": "sha256:0",
        "judge_model": "judge",
        "prompt_hash": "sha256:1",
        "attempts": 1,
        "status": "scored",
        "verdict": None,
        "reason": None,
        "raw": None,
        "fact_states": None,
        "fact_score": score,
        "propaganda": 0,
        "frame_adopted": None,
    }


def _given_graded_runs(root: Path) -> None:
    """Four models' facts-v1 grades of every starter item under runs/, and the same scores as a
    matrix, scores.csv."""
    items = sorted(p.stem for p in (root / "questions").glob("c*/i*.yaml"))
    rows = ["item_id,model,score"]
    for m, model in enumerate(("m1", "m2", "m3", "m4")):
        scores = [(n * (m + 3) + m) % 6 for n in range(len(items))]
        rows += [f"{item},{model},{score}" for item, score in zip(items, scores, strict=True)]
        path = root / "runs" / f"run-{model}" / "grades-facts-v1.jsonl"
        path.parent.mkdir(parents=True)
        lines = [_grade(item, model, score) for item, score in zip(items, scores, strict=True)]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (root / "scores.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def _given_labelled_pairs(root: Path) -> None:
    """The calibration file the example names, at its path in this repository."""
    (root / "tests/dedup/data").mkdir(parents=True)
    shutil.copy2(REPO / "tests/dedup/data/labelled-pairs.tsv", root / "tests/dedup/data/labelled-pairs.tsv")


def _given_shards(root: Path) -> None:
    """Training shards, JSONL and Parquet, each with one document that holds a starter prompt."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from propeval.loader import load_file

    prompt = load_file(root / "questions/c0002/i0007.yaml").data["prompt"]
    (root / "train/web").mkdir(parents=True)
    docs = [{"text": "A note on growing tomatoes in a cold spring."}, {"text": f"Quiz night. {prompt}"}]
    (root / "train/a.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    pq.write_table(pa.table({"content": ["A recipe for bread.", prompt]}), root / "train/web/b.parquet")


def _given_cpe(root: Path) -> None:
    """An empty corpus (its questions removed on main) and a file in the CPE layout."""
    git(root, "rm", "-rq", "questions")
    (root / "questions").mkdir()
    git(root, "commit", "-qm", "an empty corpus")
    shutil.copy2(REPO / "tests/ingest/data/cpe.jsonl", root / "cpe.jsonl")


def _given_rater_labels(root: Path) -> None:
    """Two raters' label files of one rating sheet, six rows each."""
    states = ("stated", "missed", "opposed")
    for offset, (name, levels) in enumerate((("alice", [0, 1, 2, 0, 1, 2]), ("bob", [0, 1, 2, 0, 2, 2]))):
        rows = [
            {"row": f"r{n:03d}", "propaganda": level, "fact_states": {"f1": states[(n + offset) % 3], "f2": "stated"}}
            for n, level in enumerate(levels, start=1)
        ]
        path = root / "labels/sheet" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _given_id_collision(root: Path) -> None:
    """A branch that adds questions/c0002/i0172.yaml while origin's main took i0172 for another item."""
    item = (root / "questions/c0002/i0008.yaml").read_text(encoding="utf-8")
    theirs = item.replace("id: i0008", "id: i0172")
    assert theirs != item
    other = root.parent / "other"
    git(root.parent, "clone", "-q", str(root.parent / "origin.git"), str(other))
    (other / "questions/c0002/i0172.yaml").write_text(theirs.replace("status: active", "status: draft"), "utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "theirs")
    git(other, "push", "-q", "origin", "main")
    git(root, "checkout", "-qb", "mine")
    ours = item.replace("id: i0008", "id: i0172").replace("status: active", "status: draft")
    (root / "questions/c0002/i0172.yaml").write_text(ours.replace("prompt: ", "prompt: Briefly, "), "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "ours")


GIVEN: dict[str, Callable[[Path], None]] = {
    "graded-runs": _given_graded_runs,
    "labelled-pairs": _given_labelled_pairs,
    "shards": _given_shards,
    "cpe": _given_cpe,
    "rater-labels": _given_rater_labels,
    "id-collision": _given_id_collision,
}

# What each given's example must have done, beyond its exit codes.
AFTER: dict[str, Callable[[Path], None]] = {
    "graded-runs": lambda root: _all_files(root, "ledger/difficulty.json", "scores-difficulty.json", "difficulty.png"),
    "shards": lambda root: _drops(root),
    "cpe": lambda root: _count(root, "questions/c*/i*.yaml", 5),
    "id-collision": lambda root: _renumbered(root),
}


def _all_files(root: Path, *names: str) -> None:
    assert [n for n in names if not (root / n).is_file()] == [], "not written"


def _drops(root: Path) -> None:
    assert (root / "drop.txt").read_text(encoding="utf-8") == "train/a.jsonl:2\n"
    assert [p.name for p in (root / "clean").rglob("*.parquet")] == ["b.parquet"]


def _count(root: Path, pattern: str, n: int) -> None:
    assert len(list(root.glob(pattern))) == n, sorted(map(str, root.glob(pattern)))


def _renumbered(root: Path) -> None:
    """Our item took a free id; origin's i0172 is left to origin."""
    assert not (root / "questions/c0002/i0172.yaml").exists()
    ours = [p for p in (root / "questions/c0002").glob("i*.yaml") if "Briefly, " in p.read_text(encoding="utf-8")]
    assert len(ours) == 1 and ours[0].stem > "i0172", ours


def run_marker(block: Block, n: int) -> tuple[list[int], list[str]]:
    """``run [exit N | exit N N ...] [given NAME ...]``: each command's exit code, and the givens."""
    words = block.marker.split()
    assert words[0] == "run", block.id
    codes: list[int] = []
    given: list[str] = []
    i = 1
    while i < len(words):
        if words[i] == "exit":
            while i + 1 < len(words) and words[i + 1].isdigit():
                codes.append(int(words[i + 1]))
                i += 1
        elif words[i] == "given" and i + 1 < len(words) and words[i + 1] in GIVEN:
            given.append(words[i + 1])
            i += 1
        else:
            pytest.fail(f"{block.id}: cannot read {words[i]!r} in <!-- example: {block.marker} -->")
        i += 1
    codes = codes or [0]
    if len(codes) == 1:
        codes *= n
    assert len(codes) == n, f"{block.id}: {n} command(s), {len(codes)} exit code(s)"
    return codes, given


def script(lines: list[str], port: int | None, rcfile: Path) -> str:
    """Bash that runs each line in turn (one shell: ``cd`` carries over), appending each exit code
    to ``rcfile``; a line ending in ``&`` counts 0. ``propeval serve-local ... &`` starts the stub on
    ``port`` and waits for it. Background jobs are stopped when the script ends."""
    rc = shlex.quote(str(rcfile))
    out = ["trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT"]
    for line in lines:
        if shell_words(line)[:2] == ["propeval", "serve-local"] and BACKGROUND.search(line):
            out += [
                f"propeval serve-local --stub --port {port} &",
                f"for _ in $(seq 300); do (: > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done",
                f"echo 0 >> {rc}",
            ]
        elif BACKGROUND.search(line):
            out += [line, f"echo 0 >> {rc}"]
        else:
            out += [line, f"echo $? >> {rc}"]
    return "\n".join(out) + "\n"


RUN = [b for b in ALL if kind(b) == "run" and not b.marker.startswith("run by ")]


@pytest.mark.slow
@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_a_run_block_runs_with_the_exit_codes_it_states(block: Block, tmp_path: Path) -> None:
    found = commands(block)
    codes, given = run_marker(block, len(found))
    lines = [c.line for c in found]
    port = free_port() if any(shell_words(line)[:2] == ["propeval", "serve-local"] for line in lines) else None
    root = corpus_copy(tmp_path, port)
    for name in given:
        GIVEN[name](root)
    shown = [c.output for c in found if c.output]
    assert len(shown) <= 1 and (not shown or len(found) == 1), f"{block.id}: show output under one command alone"
    rcfile = tmp_path / "rc"
    done = subprocess.run(
        ["bash", "-c", script(lines, port, rcfile)],
        cwd=root,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    got = [int(x) for x in rcfile.read_text().split()] if rcfile.exists() else []
    assert got == codes, f"{block.id}: exit codes {got}, the docs say {codes}\n{done.stdout[-6000:]}"
    for name in given:
        if name in AFTER:
            AFTER[name](root)
    if shown:
        assert shown_in(shown[0], done.stdout), f"{block.id}: the output shown is not what it printed:\n{done.stdout}"
