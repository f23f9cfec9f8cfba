"""``propeval eval-smoke``: a few items through every installed harness, and a table of the scores.

It copies a few items of the corpus (one from each of the first claims, with their claims, the
schema and the rubrics) into a corpus of its own, serves a model, and runs each harness's documented
recipe (:mod:`propeval.harness.recipes`) on that corpus: propeval's own ``answer``/``grade``/
``score``, inspect_ai, lm-evaluation-harness, and promptfoo. Every request goes through one
loopback server that describes it (:class:`propeval.judge.stub.Request`), so the table shows the
temperature and the token caps each harness really sent, beside its score.

* ``stub`` (``make eval-smoke``): the plumbing model (:mod:`propeval.judge.stub`). It answers every
  item with its facts but refuses the last one, so each harness must give fact mean
  5 x (items - 1) / items, with no propaganda; any other number is an adapter that lost something,
  and the run exits 1.
* ``local`` (``make eval-smoke-local``): the bundled Gemma 3 270M on llama.cpp, behind a recording
  proxy, with caps that fit a CPU (256 answer tokens, a 256-token verdict, no re-ask). Its scores
  are whatever a 270M model earns; the run checks only that each harness produced one.

promptfoo runs when its CLI is installed with Node.js 22 or later. Otherwise its row is the
assertion alone (``propeval_assert.get_assert``, promptfoo's side of the adapter) on the answers
that the generated config's provider gets from the server, asked as that provider is configured
(base URL, temperature, max_tokens); the row says so.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.errors import ModelError, UsageError
from propeval.fsutil import atomic_write
from propeval.harness import location
from propeval.harness.recipes import (
    Recipe,
    Target,
    inspect_recipe,
    lm_eval_recipe,
    promptfoo_recipe,
    propeval_recipe,
)
from propeval.judge.loopback import LoopbackServer, Reply, Seen
from propeval.judge.stub import STUB_MODEL, Request, describe, stub_server
from propeval.settings import JudgeSettings

HARNESSES = ("propeval", "inspect", "lm-eval", "promptfoo")
MODELS = ("stub", "local")
RUN_ID = "smoke"
# The local profile: what a 2-core CPU affords per request with a 270M model.
LOCAL_ANSWER_TOKENS = 256
LOCAL_JUDGE_TOKENS = 256  # the verdict of 3-4 facts that the 270M model writes takes about 160 tokens
PROMPTFOO_NODE = 22  # promptfoo's own requirement (major version of Node.js)


@dataclass
class HarnessRun:
    """One harness's row: its score, and what it sent."""

    harness: str
    status: str  # "ok", "failed", "not installed"
    fact_mean: float | None = None
    propaganda_share: float | None = None
    scored: int | None = None  # items that got a verdict
    seconds: float = 0.0
    note: str = ""
    answer_requests: list[Request] = field(default_factory=list)
    judge_requests: list[Request] = field(default_factory=list)
    log: str = ""  # the end of the harness's output when it failed

    def sent(self, kind: str) -> str:
        """The temperatures and token caps sent, e.g. "t=0.0 max=256" (several: each, with counts)."""
        reqs = self.answer_requests if kind == "answer" else self.judge_requests
        if not reqs:
            return "-"
        seen: dict[str, int] = {}
        for r in reqs:
            key = f"t={_num(r.temperature)} max={_num(r.max_tokens)}"
            seen[key] = seen.get(key, 0) + 1
        if len(seen) == 1:
            return next(iter(seen))
        return ", ".join(f"{k} ({n}x)" for k, n in seen.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "status": self.status,
            "fact_mean": self.fact_mean,
            "propaganda_share": self.propaganda_share,
            "scored": self.scored,
            "seconds": round(self.seconds, 2),
            "note": self.note,
            "answer_requests": [_brief(r) for r in self.answer_requests],
            "judge_requests": [_brief(r) for r in self.judge_requests],
        }


def _num(v: Any) -> str:
    return "unset" if v is None else str(v)


def _brief(r: Request) -> dict[str, Any]:
    return {"model": r.model, "item": r.item, **r.settings()}


@dataclass
class SmokeResult:
    model: str
    items: list[str]
    refused: list[str]
    settings: dict[str, Any]
    runs: list[HarnessRun]
    expected_fact_mean: float | None  # the stub's known answer; None for a real model
    seconds: float = 0.0

    def matches(self, run: HarnessRun) -> bool | None:
        """Whether ``run`` gave the expected figures (None: nothing to compare)."""
        if run.status != "ok":
            return None
        if self.expected_fact_mean is None:
            return run.fact_mean is not None and not math.isnan(run.fact_mean)
        return (
            run.fact_mean is not None
            and math.isclose(run.fact_mean, self.expected_fact_mean, abs_tol=1e-9)
            and run.propaganda_share is not None
            and math.isclose(run.propaganda_share, 0.0, abs_tol=1e-9)
            and run.scored == len(self.items)
        )

    @property
    def exit_code(self) -> int:
        """0: every installed harness gave the expected number; 1: one gave another (or none)."""
        ran = [r for r in self.runs if r.status != "not installed"]
        if any(r.status == "failed" or not self.matches(r) for r in ran):
            return 1
        return 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "items": self.items,
            "refused": self.refused,
            "expected_fact_mean": self.expected_fact_mean,
            "settings": self.settings,
            "seconds": round(self.seconds, 2),
            "runs": [{**r.to_dict(), "as_expected": self.matches(r)} for r in self.runs],
        }


# --------------------------------------------------------------------------- the corpus


def pick_items(config: Config, n: int) -> list[Any]:
    """``n`` active items: the first of each claim (by id) in turn, then the second, ..."""
    from propeval.corpus import load_corpus

    corpus = load_corpus(config)
    by_claim: dict[str, list[Any]] = {}
    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        if corpus.claim_of(item) is not None:
            by_claim.setdefault(item.claim_id, []).append(item)
    picked: list[Any] = []
    rounds = max((len(v) for v in by_claim.values()), default=0)
    for k in range(rounds):
        for claim_id in sorted(by_claim):
            if len(picked) < n and k < len(by_claim[claim_id]):
                picked.append((by_claim[claim_id][k], corpus.claims[claim_id]))
    if len(picked) < n:
        raise UsageError(f"the corpus at {config.root} has {len(picked)} active item(s); eval-smoke needs {n}")
    return picked


def _toml(value: Any) -> str:
    return json.dumps(value)  # strings, numbers and booleans read the same in TOML


PLACEHOLDER = Target("http://127.0.0.1:9/v1", "not-served-yet", "not-served-yet")


def write_corpus(config: Config, settings: JudgeSettings, dest: Path, n: int) -> list[str]:
    """A corpus of ``n`` items of ``config``'s at ``dest`` (their claims, the schema, the rubrics),
    with ``settings`` as its judge settings; the ids of its items."""
    picked = pick_items(config, n)
    questions = dest / "questions"
    for item, claim in picked:
        folder = questions / claim.folder
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(claim.doc.path, folder / claim.doc.path.name)
        shutil.copyfile(item.doc.path, folder / item.doc.path.name)
    if not config.builtin_schema:
        shutil.copyfile(config.schema_path, dest / "schema.json")
    shutil.copytree(config.root / settings.rubrics_dir, dest / "rubrics")
    write_pyproject(dest, settings, PLACEHOLDER)
    return [item.id for item, _ in picked]


def write_pyproject(dest: Path, settings: JudgeSettings, endpoint: Target) -> None:
    """The smoke corpus's config: ``settings``, and one endpoint, ``smoke``, at ``endpoint``."""
    keys = {
        "runs_dir": "runs",
        "rubrics_dir": "rubrics",
        "answer_endpoint": "smoke",
        "judge_endpoint": "smoke",
        "concurrency": settings.concurrency,
        "timeout": settings.timeout,
        "request_deadline": settings.request_deadline,
        "max_attempts": settings.max_attempts,
        "max_reasks": settings.max_reasks,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "top_p": settings.top_p,
        "seed": settings.seed,
        "reasoning_effort": settings.reasoning_effort,
        "thinking": settings.thinking,
        "system_prompt": settings.system_prompt,
        "judge_temperature": settings.judge_temperature,
        "judge_max_tokens": settings.judge_max_tokens,
    }
    schema = "schema.json" if (dest / "schema.json").is_file() else "builtin"
    lines = [
        "# Written by `propeval eval-smoke`: a few items of the corpus, and the settings every harness must send.",
        "[tool.propeval]",
        'questions_dir = "questions"',
        f"schema = {_toml(schema)}",
        "",
        "[tool.propeval.judge]",
        *(f"{k} = {_toml(v)}" for k, v in keys.items() if v not in (None, "")),
        "",
        "[tool.propeval.judge.endpoints.smoke]",
        f"base_url = {_toml(endpoint.base_url)}",
        f"model = {_toml(endpoint.model)}",
        'api_key_env = ""',
        'response_format = "json_schema"',
        "",
    ]
    atomic_write(dest / "pyproject.toml", "\n".join(lines))


def profile(settings: JudgeSettings, model: str) -> JudgeSettings:
    """The settings the smoke's corpus records: the corpus's own; for the local model, caps a CPU affords."""
    if model == "stub":
        return replace(settings, concurrency=min(settings.concurrency, 4), timeout=60.0, request_deadline=120.0)
    return replace(
        settings,
        concurrency=1,  # llama.cpp serves one request at a time here
        timeout=900.0,
        request_deadline=1800.0,
        max_attempts=2,
        max_reasks=0,
        max_tokens=min(settings.max_tokens, LOCAL_ANSWER_TOKENS),
        judge_max_tokens=min(settings.judge_max_tokens, LOCAL_JUDGE_TOKENS),
    )


# --------------------------------------------------------------------------- the servers


class RecordingProxy:
    """A script that describes each request and forwards it to ``upstream`` (a /v1 URL), asking for ``model``."""

    def __init__(self, upstream: str, model: str, timeout: float) -> None:
        self.root = upstream.removesuffix("/v1")
        self.model = model
        self.timeout = timeout
        self.requests: list[Request] = []

    def __call__(self, seen: Seen) -> Reply:
        self.requests.append(describe(seen))
        data = json.dumps({**seen.body, "model": self.model}).encode()
        request = urllib.request.Request(
            self.root + seen.path, data=data, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                return Reply(body=resp.read(), status=resp.status)
        except urllib.error.HTTPError as e:
            return Reply(body=e.read(), status=e.code)
        except OSError as e:
            return Reply(status=502, body=json.dumps({"error": {"message": f"proxy: {e}"}}).encode())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_model(
    model: str, items: list[dict[str, Any]], refuse: list[str], workdir: Path, threads: int | None
) -> Iterator[tuple[LoopbackServer, Callable[[], list[Request]], str]]:
    """The server every harness asks (its URL is ``server.base_url``), how to read what it was sent,
    and the model name to ask for."""
    if model == "stub":
        server, script = stub_server(items, refuse)
        with server:
            yield server, lambda: list(script.requests), STUB_MODEL
        return
    from propeval.judge import local

    # One thread unless told: llama.cpp's threads wait for each other at every token, and on a busy
    # 2-core machine (a test suite, other jobs) two threads were seen at about 1 token/s, where one
    # keeps about 10.
    options = local.LocalServerOptions(port=free_port(), n_ctx=4096, threads=threads or 1)
    log = workdir / "llama-server.log"
    proc = local.start(options, log=log, timeout=300.0)
    try:
        proxy = RecordingProxy(local.base_url(options), local.MODEL_ALIAS, timeout=1800.0)
        with LoopbackServer(proxy, keep=False, model=local.MODEL_ALIAS) as server:
            yield server, lambda: list(proxy.requests), local.MODEL_ALIAS
    finally:
        local.stop_process(proc)


# --------------------------------------------------------------------------- running one harness


def _bin(name: str) -> str | None:
    """A console script of this environment first (the venv's), else on PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def _node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"v(\d+)", out.strip())
    return int(found.group(1)) if found else None


def available(harness: str) -> tuple[bool, str]:
    """Whether ``harness`` can run here, and if not why."""
    if harness == "propeval":
        return True, ""
    if harness == "inspect":
        ok = importlib.util.find_spec("inspect_ai") is not None and _bin("inspect") is not None
        return ok, "" if ok else "inspect_ai is not installed: pip install -e '.[harness]'"
    if harness == "lm-eval":
        ok = importlib.util.find_spec("lm_eval") is not None and _bin("lm_eval") is not None
        return ok, "" if ok else "lm-eval is not installed: pip install -e '.[harness]'"
    if harness == "promptfoo":
        major = _node_major()
        if _bin("promptfoo") is None:
            return False, "promptfoo is not installed (npm install -g promptfoo; it needs Node.js 22 or later)"
        if major is None or major < PROMPTFOO_NODE:
            found = f"Node.js {major}" if major else "no Node.js"
            return False, f"promptfoo needs Node.js {PROMPTFOO_NODE} or later; this machine has {found}"
        return True, ""
    raise UsageError(f"no harness {harness!r}; use one of {', '.join(HARNESSES)}")


def _env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {**os.environ, **extra}
    # Nothing is fetched from a hub: lm-eval's datasets and tokenizers stay offline.
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("HF_DATASETS_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.pop("PROPEVAL_SOURCE", None)  # each recipe names its source
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return subprocess.CompletedProcess(argv, 124, out, f"timed out after {timeout:g}s")


def _tail(proc: subprocess.CompletedProcess[str], lines: int = 12) -> str:
    text = (proc.stderr or "") + (proc.stdout or "")
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class Context:
    corpus: Path
    work: Path
    values: dict[str, str]  # what the recipes' slots are filled with
    concurrency: int
    timeout: float


def _steps(recipe: Recipe, ctx: Context) -> list[tuple[dict[str, str], list[str]]]:
    return recipe.argvs(ctx.values)


def run_inspect(recipe: Recipe, ctx: Context) -> HarnessRun:
    logs = ctx.work / "inspect-logs"
    env, argv = _steps(recipe, ctx)[0]
    argv[0] = _bin("inspect") or "inspect"
    argv += ["--log-dir", str(logs), "--log-format", "json", "--display", "none"]
    argv += ["--max-connections", str(ctx.concurrency)]
    proc = _run(argv, _env(env), ctx.corpus, ctx.timeout)
    found = sorted(logs.glob("*.json"))
    if proc.returncode != 0 or not found:
        return HarnessRun("inspect", "failed", note=f"inspect exited {proc.returncode}", log=_tail(proc))
    log = json.loads(found[-1].read_text(encoding="utf-8"))
    if log.get("status") != "success":
        return HarnessRun("inspect", "failed", note=f"eval status {log.get('status')}", log=str(log.get("error")))
    metrics = {s["name"]: s["metrics"] for s in (log.get("results") or {}).get("scores") or []}
    scored = sum(
        1
        for s in log.get("samples") or []
        if isinstance(((s.get("scores") or {}).get("facts_scorer") or {}).get("value"), dict)
    )
    return HarnessRun(
        "inspect",
        "ok",
        fact_mean=_metric(metrics, "fact_score"),
        propaganda_share=_metric(metrics, "any_propaganda"),
        scored=scored,
    )


def _metric(metrics: dict[str, Any], name: str) -> float | None:
    value = ((metrics.get(name) or {}).get("mean") or {}).get("value")
    return float(value) if isinstance(value, int | float) else None


def run_lm_eval(recipe: Recipe, ctx: Context) -> HarnessRun:
    out = ctx.work / "lm-eval"
    env, argv = _steps(recipe, ctx)[0]
    argv[0] = _bin("lm_eval") or "lm_eval"
    argv += ["--output_path", str(out), "--log_samples"]
    proc = _run(argv, _env(env), ctx.corpus, ctx.timeout)
    found = sorted(out.rglob("results_*.json"))
    if proc.returncode != 0 or not found:
        return HarnessRun("lm-eval", "failed", note=f"lm_eval exited {proc.returncode}", log=_tail(proc))
    results = json.loads(found[-1].read_text(encoding="utf-8"))
    task = (results.get("results") or {}).get("propeval_facts") or {}
    samples = sorted(out.rglob("samples_propeval_facts_*.jsonl"))
    scored = None
    if samples:
        rows = [json.loads(x) for x in samples[-1].read_text(encoding="utf-8").splitlines() if x.strip()]
        scored = sum(1 for r in rows if r.get("fact_score") is not None)
    return HarnessRun(
        "lm-eval",
        "ok",
        fact_mean=_float(task.get("fact_score,none")),
        propaganda_share=_float(task.get("any_propaganda,none")),
        scored=scored,
    )


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) else None


def run_propeval(recipe: Recipe, ctx: Context) -> HarnessRun:
    propeval = [sys.executable, "-m", "propeval", "--root", str(ctx.corpus)]
    steps = _steps(recipe, ctx)
    last: subprocess.CompletedProcess[str] | None = None
    for env, argv in steps:
        assert argv[0] == "propeval"
        extra = ["--format", "json"]
        last = _run([*propeval, *argv[1:], *extra], _env(env), ctx.corpus, ctx.timeout)
        if last.returncode != 0:
            note = f"propeval {argv[1]} exited {last.returncode}"
            return HarnessRun("propeval", "failed", note=note, log=_tail(last))
    assert last is not None
    report = json.loads(last.stdout)
    run = (report.get("runs") or [{}])[0]
    grades = ctx.corpus / "runs" / RUN_ID / "grades-facts-v1.jsonl"
    scored = sum(1 for x in grades.read_text(encoding="utf-8").splitlines() if json.loads(x).get("status") == "scored")
    return HarnessRun(
        "propeval",
        "ok",
        fact_mean=_float(run.get("fact_mean")),
        propaganda_share=_float(run.get("propaganda_share")),
        scored=scored,
    )


def run_promptfoo(recipe: Recipe, ctx: Context, *, real: bool, missing: str = "") -> HarnessRun:
    steps = _steps(recipe, ctx)
    (emit_env, emit_argv), (_, cd), (eval_env, eval_argv) = steps
    emit = [sys.executable, "-m", "propeval", *emit_argv[1:]]
    proc = _run(emit, _env(emit_env), ctx.work, ctx.timeout)
    folder = ctx.work / cd[1]
    if proc.returncode != 0:
        return HarnessRun("promptfoo", "failed", note="propeval harness promptfoo failed", log=_tail(proc))
    if real:
        out = folder / "results.json"
        eval_argv = [_bin("promptfoo") or "promptfoo", *eval_argv[1:], "--output", str(out), "--no-cache"]
        proc = _run(eval_argv, _env(eval_env), folder, ctx.timeout)
        if not out.is_file():
            return HarnessRun("promptfoo", "failed", note=f"promptfoo exited {proc.returncode}", log=_tail(proc))
        return _promptfoo_results(json.loads(out.read_text(encoding="utf-8")))
    return _promptfoo_assertion(folder, eval_env, ctx, missing)


def _promptfoo_results(data: dict[str, Any]) -> HarnessRun:
    rows = ((data.get("results") or {}).get("results")) or []
    named = [((r.get("gradingResult") or {}).get("namedScores") or {}) for r in rows]
    return _assertion_row(named, "promptfoo eval")


def _assertion_row(named: list[dict[str, Any]], note: str) -> HarnessRun:
    facts = [n["fact_score"] for n in named if isinstance(n.get("fact_score"), int | float)]
    props = [n["any_propaganda"] for n in named if isinstance(n.get("any_propaganda"), int | float)]
    return HarnessRun(
        "promptfoo",
        "ok",
        fact_mean=sum(facts) / len(facts) if facts else None,
        propaganda_share=sum(props) / len(props) if props else None,
        scored=len(facts),
        note=note,
    )


def _promptfoo_assertion(folder: Path, env: dict[str, str], ctx: Context, missing: str) -> HarnessRun:
    """promptfoo's side of the adapter without promptfoo: each test case's prompt asked as the
    generated provider is configured, and the shipped assertion on the reply."""
    import yaml

    config = yaml.safe_load((folder / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    provider = config["providers"][0]
    settings = dict(provider.get("config") or {})
    model = str(provider["id"]).split(":", 2)[-1]
    base = str(settings.pop("apiBaseUrl"))
    settings.pop("apiKeyEnvar", None)
    settings.update(settings.pop("passthrough", None) or {})
    script = [
        sys.executable,
        "-c",
        _ASSERT_DRIVER,
        str(folder),
        json.dumps({"base": base, "model": model, "settings": settings, "config": config}),
    ]
    proc = _run(script, _env(env), folder, ctx.timeout)
    if proc.returncode != 0:
        return HarnessRun("promptfoo", "failed", note="the assertion failed", log=_tail(proc))
    named = json.loads(proc.stdout)
    return _assertion_row(named, f"the assertion alone, promptfoo not run: {missing}")


# Run in a subprocess with the recipe's variables (PROPEVAL_JUDGE_*), as promptfoo would run the
# assertion: ask the provider as configured, then call get_assert(output, context) per test case.
_ASSERT_DRIVER = r"""
import importlib.util, json, sys, urllib.request
folder, spec = sys.argv[1], json.loads(sys.argv[2])
config = spec["config"]
mod_spec = importlib.util.spec_from_file_location("propeval_assert", folder + "/propeval_assert.py")
module = importlib.util.module_from_spec(mod_spec)
mod_spec.loader.exec_module(module)
out = []
template = config["prompts"][0]
for test in config["tests"]:
    vars_ = {**config["defaultTest"]["vars"], **test["vars"]}
    # the prompt as promptfoo renders it: the item's prompt, or a chat (a JSON list of messages)
    text = template.replace("{{prompt | dump}}", json.dumps(vars_["prompt"])).replace("{{prompt}}", vars_["prompt"])
    messages = json.loads(text) if text.startswith("[") else [{"role": "user", "content": text}]
    body = {"model": spec["model"], "messages": messages, **spec["settings"]}
    req = urllib.request.Request(spec["base"] + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=1800) as resp:
        reply = json.loads(resp.read())
    output = reply["choices"][0]["message"].get("content") or ""
    result = module.get_assert(output, {"vars": vars_})
    out.append(result.get("namedScores") or {})
print(json.dumps(out))
"""


# --------------------------------------------------------------------------- the smoke


def run_smoke(
    config: Config,
    *,
    model: str = "stub",
    items: int = 3,
    harnesses: tuple[str, ...] = HARNESSES,
    workdir: Path,
    threads: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> SmokeResult:
    """Run each harness of ``harnesses`` on ``items`` items of ``config``'s corpus against ``model``."""
    if model not in MODELS:
        raise UsageError(f"no model {model!r}; use one of {', '.join(MODELS)}")
    if items < 2:
        raise UsageError("eval-smoke needs at least 2 items (one is refused, to make the expected score non-trivial)")
    say = progress or (lambda _msg: None)
    started = time.monotonic()
    settings = profile(config.settings.judge, model)
    corpus = workdir / "corpus"
    corpus.mkdir(parents=True)
    ids = write_corpus(config, settings, corpus, items)
    from propeval.harness.source import open_source

    rows = open_source(corpus).items
    refused = [ids[-1]] if model == "stub" else []
    say(f"serving the {'plumbing' if model == 'stub' else 'bundled'} model for {len(ids)} item(s)")
    with serve_model(model, rows, refused, workdir, threads) as (server, requests, name):
        write_pyproject(corpus, settings, Target(server.base_url, name, name))
        values = {
            "source": str(corpus),
            "adapter:lm-eval": str(location("lm-eval")),
            "python": sys.executable,
        }
        ctx = Context(corpus, workdir, values, settings.concurrency, timeout=300.0 if model == "stub" else 3600.0)
        todo: list[tuple[str, Target, bool, str]] = []
        runs: dict[str, HarnessRun] = {}
        for harness in harnesses:
            ok, why = available(harness)
            if not ok and harness != "promptfoo":
                runs[harness] = HarnessRun(harness, "not installed", note=why)
                continue
            # Each harness asks for models of its own names, so that what it sent can be told apart
            # (the stub answers any name; the proxy in front of llama.cpp asks for the served one).
            target = Target(server.base_url, f"{name}-{harness}", f"{name}-{harness}-judge", service="smoke")
            todo.append((harness, target, ok, why))

        def one(job: tuple[str, Target, bool, str]) -> HarnessRun:
            harness, target, ok, why = job
            say(f"{harness}: running" + ("" if ok else f" (the assertion only: {why})"))
            t0 = time.monotonic()
            run = _run_one(harness, target, ctx, real=ok, missing=why)
            run.seconds = time.monotonic() - t0
            say(f"{harness}: done in {run.seconds:.0f} s")
            return run

        # Against the stub the harnesses run side by side (it answers at once; most of their time is
        # their own start-up); against llama.cpp one at a time (one slot, and the CPU is the budget).
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(todo) if model == "stub" and todo else 1) as pool:
            for (harness, target, _, _), run in zip(todo, pool.map(one, todo), strict=True):
                sent = [r for r in requests() if r.model in (target.model, target.judge)]
                run.answer_requests = [r for r in sent if r.kind == "answer"]
                run.judge_requests = [r for r in sent if r.kind == "judge"]
                runs[harness] = run
    shown = {
        k: getattr(settings, k)
        for k in ("temperature", "max_tokens", "judge_temperature", "judge_max_tokens", "max_reasks")
    }
    expected = 5.0 * (len(ids) - len(refused)) / len(ids) if model == "stub" else None
    ordered = [runs[h] for h in harnesses]
    return SmokeResult(model, ids, refused, shown, ordered, expected, time.monotonic() - started)


def _run_one(harness: str, target: Target, ctx: Context, *, real: bool, missing: str) -> HarnessRun:
    try:
        if harness == "propeval":
            return run_propeval(propeval_recipe(target, run_id=RUN_ID), ctx)
        if harness == "inspect":
            return run_inspect(inspect_recipe(target), ctx)
        if harness == "lm-eval":
            return run_lm_eval(lm_eval_recipe(target), ctx)
        return run_promptfoo(promptfoo_recipe(target, out=str(ctx.work / "promptfoo")), ctx, real=real, missing=missing)
    except (OSError, ValueError, KeyError, TypeError, ModelError) as e:
        return HarnessRun(harness, "failed", note=f"{type(e).__name__}: {e}")
