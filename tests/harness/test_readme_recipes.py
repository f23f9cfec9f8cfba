"""The harness page's real-endpoint recipes, run as they stand against the plumbing model.

The block is docs/harnesses.md's (a cog block from propeval.harness.recipes, the source `eval-smoke` runs);
this test takes it from that page itself, puts the stub's URL where OpenRouter's is (and sets
OPENROUTER_BASE_URL, which inspect's openrouter provider reads), and runs each command in bash in
a corpus whose `openrouter` endpoint is the stub. Only `promptfoo eval` is not run (promptfoo needs
Node.js 22; this machine has 20): the config it would read is checked instead.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from helpers import REPO, CorpusDir

sys.path.insert(0, str(REPO / "tests" / "judge"))
sys.path.insert(0, str(REPO / "tests" / "harness"))
from judgekit import configure
from test_eval_smoke import three_claims

from propeval.cli import cli
from propeval.harness.source import open_source
from propeval.judge.stub import stub_server

OPENROUTER = "https://openrouter.ai/api/v1"


def readme_block(name: str) -> list[str]:
    """The commands of docs/harnesses.md's cog block ``recipes(name)``: continuation lines joined, comments dropped."""
    text = (REPO / "docs/harnesses.md").read_text(encoding="utf-8")
    found = re.search(rf'recipes\("{name}"\) \]\]\] -->\n```sh\n(.*?)```', text, re.DOTALL)
    assert found, f"docs/harnesses.md has no recipes({name!r}) block"
    lines = found.group(1).replace("\\\n", " ").splitlines()
    return [line.split("   #")[0].strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.slow
def test_readme_openrouter_recipes_run_against_the_stub(corpus: CorpusDir, tmp_path: Path) -> None:
    three_claims(corpus)
    commands = readme_block("openrouter")
    assert commands[0].startswith("export OPENROUTER_API_KEY=")
    tools = [next(w for w in shlex.split(c) if "=" not in w) for c in commands[1:]]
    assert tools == [
        "propeval",
        "inspect",
        "lm_eval",
        "propeval",
        "propeval",
        "propeval",
        "propeval",
        "cd",
        "promptfoo",
    ]
    server, script = stub_server(open_source(corpus.root).items, refuse=["i0003"])
    with server:
        configure(corpus, "http://127.0.0.1:9/v1", max_reasks=0)  # the corpus's own endpoint is not used
        pyproject = corpus.root / "pyproject.toml"
        pyproject.write_text(
            pyproject.read_text(encoding="utf-8")
            + f'\n[tool.propeval.judge.endpoints.openrouter]\nbase_url = "{server.base_url}"\n'
            'model = "meta-llama/llama-3.3-70b-instruct"\napi_key_env = "OPENROUTER_API_KEY"\n'
            'response_format = "json_schema"\n',
            encoding="utf-8",
        )
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "OPENROUTER_API_KEY": "sk-or-test",
            "OPENROUTER_BASE_URL": server.base_url,  # inspect's openrouter provider
            "INSPECT_LOG_DIR": str(tmp_path / "inspect-logs"),
            "INSPECT_LOG_FORMAT": "json",
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
        }
        cwd = corpus.root
        out: dict[str, str] = {}
        sent: dict[str, list[dict[str, object]]] = {}
        for command in commands:
            if command.startswith("export "):
                continue  # the key: set above
            if command.startswith("cd "):
                cwd = cwd / command.split()[1]
                continue
            if command.endswith("promptfoo eval"):
                continue  # promptfoo needs Node.js 22 (its config is checked below)
            line = command.replace(OPENROUTER, server.base_url)
            before = len(script.requests)
            res = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
            assert res.returncode == 0, f"`{line}` exited {res.returncode}:\n{res.stdout}\n{res.stderr}"
            words = [w for w in shlex.split(line) if "=" not in w]
            key = f"propeval {words[1]}" if words[0] == "propeval" else words[0]
            out[key] = res.stdout
            sent[key] = [r.to_dict() for r in script.requests[before:]]

    # inspect (its openrouter provider): the stub's known score, at temperature 0 and the release's caps
    log = json.loads(next((tmp_path / "inspect-logs").glob("*.json")).read_text(encoding="utf-8"))
    scores = {s["name"]: s["metrics"]["mean"]["value"] for s in log["results"]["scores"]}
    assert scores["fact_score"] == pytest.approx(10 / 3) and scores["any_propaganda"] == 0
    # lm-eval prints its table: fact_score 3.3333
    row = next(line for line in out["lm_eval"].splitlines() if "|fact_score" in line)
    value = re.search(r"\|fact_score\s*\|[^|]*\|\s*([0-9.]+)", row)
    assert value and float(value.group(1)) == pytest.approx(10 / 3, abs=1e-4), row
    # propeval: answer, grade, score on the corpus's openrouter endpoint
    assert "3.33" in out["propeval score"]
    score = CliRunner().invoke(
        cli, ["--root", str(corpus.root), "score", "llama-70b", "--rubric", "facts-v1", "--format", "json"]
    )
    assert json.loads(score.stdout)["runs"][0]["fact_mean"] == pytest.approx(10 / 3)
    for key in ("propeval answer", "propeval grade"):
        caps = {(r["temperature"], r["max_tokens"]) for r in sent[key]}
        assert len(sent[key]) == 3 and caps == {(0, 32768) if key.endswith("answer") else (0, 1024)}, key
    for key in ("inspect", "lm_eval"):
        answers = [r for r in sent[key] if r["kind"] == "answer"]
        verdicts = [r for r in sent[key] if r["kind"] == "judge"]
        assert len(answers) == 3 and {(r["temperature"], r["max_tokens"]) for r in answers} == {(0, 32768)}, key
        assert len(verdicts) == 3 and {(r["temperature"], r["max_tokens"]) for r in verdicts} == {(0, 1024)}, key
        assert {r["model"] for r in answers} == {"meta-llama/llama-3.3-70b-instruct"}
        assert {r["model"] for r in verdicts} == {"openai/gpt-4o-mini"}
    # promptfoo: the config `promptfoo eval` would read names the server, the key's variable, the settings
    config = yaml.safe_load((cwd / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    assert config["providers"] == [
        {
            "id": "openai:chat:meta-llama/llama-3.3-70b-instruct",
            "config": {
                "temperature": 0.0,
                "max_tokens": 32768,
                "apiBaseUrl": server.base_url,
                "apiKeyEnvar": "OPENROUTER_API_KEY",
            },
        }
    ]
