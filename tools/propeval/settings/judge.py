"""``[tool.propeval.judge]`` and its ``endpoints``: where runs and rubrics live, which servers answer
and grade, and how hard to try. ``runs_dir`` and ``rubrics_dir`` live here alone (:data:`RUNS_DIR_MOVED`).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from propeval.errors import ConfigError
from propeval.settings.table import (
    Integer,
    Number,
    Table,
    Text,
    TextList,
    ValueType,
    Where,
    derived,
    is_number,
    key,
    read_table,
    shown,
)

# What a table that once held these keys says now (difficulty, release).
RUNS_DIR_MOVED = "moved to [tool.propeval.judge] runs_dir, the one place every command reads it from; delete it here"
RUBRICS_DIR_MOVED = (
    "moved to [tool.propeval.judge] rubrics_dir, the one place every command reads it from; delete it here"
)
RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_CUTOFF = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?")
REASONING_EFFORTS = ("", "none", "minimal", "low", "medium", "high")
THINKING = ("", "on", "off")


class Prices(ValueType):
    """A table of model name -> ``[input, output]`` prices per million tokens (numbers >= 0)."""

    doc = "a table of model names to [input, output] prices per 1M tokens"

    def parse(self, value: Any, where: Where) -> dict[str, tuple[float, float]]:
        if not isinstance(value, dict):
            raise self.wrong(value, where)
        out: dict[str, tuple[float, float]] = {}
        for model, pair in value.items():
            if not (isinstance(pair, list) and len(pair) == 2 and all(is_number(v) and v >= 0 for v in pair)):
                raise where.error(
                    f"[{str(model)!r}] must be [input, output] prices per 1M tokens, two numbers >= 0 "
                    f"(got {shown(pair)})"
                )
            out[str(model)] = (float(pair[0]), float(pair[1]))
        return out


@dataclass(frozen=True)
class Endpoint(Table):
    """One OpenAI-compatible server. ``api_key_env`` names the variable that holds the key."""

    NAME = "judge.endpoints.NAME"
    DOC = (
        "One table per OpenAI-compatible server. Without any, `local` is http://127.0.0.1:8080/v1 "
        '(`propeval serve-local`, model "gemma-3-270m", response_format "json_schema"). '
        "The maintainer's own config.toml (`$PROPEVAL_CONFIG`) takes the same keys under `[endpoints.NAME]`."
    )
    MOVED: ClassVar[dict[str, str]] = {
        "api_key": "is an API key: never put keys in config; name the environment variable that holds it "
        "with api_key_env"
    }

    name: str = derived("", "the table's name")
    base_url: str = key(Text(nonempty=True), "", "required: the server's /v1 URL; https, or http on loopback")
    model: str = key(Text(nonempty=True), "", "required: the model name the server knows")
    api_key_env: str = key(Text(), "", 'the environment variable that holds the API key ("": none needed)')
    response_format: str = key(
        Text(choices=RESPONSE_FORMATS),
        "json_schema",
        "how the server takes a JSON schema (OpenAI, vLLM, llama-server: json_schema; llama-cpp-python: "
        "json_object_schema)",
    )
    max_tokens: int | None = key(
        Integer(lo=1), None, "answer cap for this model (wins over [tool.propeval.judge] max_tokens); unset: that"
    )
    knowledge_cutoff: str = key(
        Text(),
        "",
        'the model\'s training cutoff, YYYY-MM or YYYY-MM-DD ("": not declared); `score` reports items whose '
        "source predates it apart from the rest",
    )

    def validate(self, where: Where) -> None:
        if not self.base_url or not self.model:
            raise where.error("needs base_url and model")
        if self.knowledge_cutoff and not _CUTOFF.fullmatch(self.knowledge_cutoff):
            raise where.at("knowledge_cutoff").error(
                f'= {shown(self.knowledge_cutoff)} must be a date YYYY-MM or YYYY-MM-DD (or "" for none)'
            )

    def api_key(self) -> str:
        """The key from the environment. Never logged, never written, never put in a message."""
        if not self.api_key_env:
            return "no-key"  # local servers ignore it; the client insists on a non-empty value
        check_url(self)
        value = os.environ.get(self.api_key_env, "")
        if not value:
            raise self.key_unset()
        return value

    def key_unset(self, hint: str = "") -> ConfigError:
        """The one error for an API key variable that is not set (the variable's name, never a value)."""
        return ConfigError(
            f"endpoint {self.name!r} reads its API key from the environment variable "
            f"{self.api_key_env}, which is not set; export it first" + (f", {hint}" if hint else ""),
            key="api_key_env",
        )


def require_keys(endpoints: Sequence[Endpoint], hint: str = "") -> None:
    """Fail before any request when an endpoint's API key variable is unset: the same ConfigError
    (exit 2) for ``answer``, ``grade`` and the gates' ``--online``; ``hint`` adds what else to do."""
    for ep in endpoints:
        if ep.api_key_env and not os.environ.get(ep.api_key_env):
            raise ep.key_unset(hint)


def check_url(endpoint: Endpoint) -> None:
    """Refuse an endpoint that is not https, unless it is on loopback (a local server)."""
    try:
        parts = urlsplit(endpoint.base_url)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is not None and host and (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host))):
        return
    raise ConfigError(
        f"endpoint {endpoint.name!r} has base_url {endpoint.base_url!r}: requests and API keys go only over "
        "https, or plain http to a loopback address (127.0.0.1, ::1, localhost); fix base_url",
        key="base_url",
    )


DEFAULT_ENDPOINTS: dict[str, Endpoint] = {
    "local": Endpoint(
        name="local",
        base_url="http://127.0.0.1:8080/v1",
        model="gemma-3-270m",
        api_key_env="",
        response_format="json_schema",  # serve-local is llama.cpp's own llama-server
    )
}


@dataclass(frozen=True)
class Retry:
    """Retries on 429, 5xx, timeouts and dropped connections; none on other 4xx."""

    max_attempts: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_total_wait: float = 300.0


@dataclass(frozen=True)
class JudgeSettings(Table):
    """``timeout`` bounds each read; ``request_deadline`` bounds one HTTP request from connect to
    last byte, so a reply trickled a byte at a time cannot hold a request past it (and a request
    that hits it is not retried); ``item_deadline`` bounds one item over every request, retry,
    wait and re-ask it takes; ``run_deadline`` (0: none) bounds the wall time of a whole `answer`
    or `grade` run; ``max_reply_bytes`` caps the bytes read from one reply. At the defaults a
    trickling server holds an item 5 minutes, and nothing holds one past 10."""

    NAME = "judge"
    DOC = (
        "`propeval answer` and `grade`: where runs and rubrics live, which endpoints answer and grade, "
        "how hard to try. `runs_dir` and `rubrics_dir` are read here by every command that needs them."
    )

    runs_dir: str = key(Text(folder=True), "runs", "run folders: <runs_dir>/<run-id>/ (not committed)")
    rubrics_dir: str = key(
        Text(folder=True), "rubrics", "rubric folders: <rubrics_dir>/<name>/{rubric.yaml, prompt.md, gold.jsonl}"
    )
    answer_endpoint: str = key(Text(), "local", "the endpoint `propeval answer` asks by default")
    judge_endpoint: str = key(Text(), "local", "the endpoint `propeval grade` asks by default")
    panel: tuple[str, ...] = key(
        TextList(),
        (),
        "endpoints that grade together as one judge panel by default (two or more; [] : judge_endpoint alone)",
    )
    concurrency: int = key(Integer(lo=1), 8, "requests in flight at once")
    timeout: float = key(Number(lo=0.001), 120.0, "seconds per read")
    connect_timeout: float = key(Number(lo=0.001), 10.0, "seconds to connect")
    request_deadline: float = key(
        Number(lo=0.001),
        300.0,
        "seconds for one whole request, first byte to last (a slow drip is cut, and not retried)",
    )
    item_deadline: float = key(
        Number(lo=0),
        600.0,
        "seconds for one item over all its requests, attempts, waits and re-asks (0: none); then it is an error",
    )
    run_deadline: float = key(Number(lo=0), 0.0, "seconds for a whole answer or grade run (0: none); a rerun continues")
    max_reply_bytes: int = key(Integer(lo=1024), 1_000_000, "bytes read from one reply at most; more is a fault")
    max_attempts: int = key(
        Integer(lo=1), 6, "attempts per request, the first included (429, 408, 5xx, timeouts, bad replies)"
    )
    backoff_base: float = key(Number(lo=0), 0.5, "seconds; exponential backoff with full jitter")
    backoff_max: float = key(Number(lo=0), 30.0, "seconds; the cap on one backoff")
    max_total_wait: float = key(Number(lo=0), 300.0, "seconds; the cap on the retry sleep of one request")
    max_reasks: int = key(Integer(lo=0), 2, "re-asks after an invalid verdict before it is recorded unscored")
    temperature: float = key(Number(lo=0), 0.0, "sampling temperature when answering")
    max_tokens: int = key(
        Integer(lo=1), 32768, "tokens per answer at most (reasoning included; the release's cap); an endpoint's wins"
    )
    top_p: float | None = key(Number(lo=0, hi=1, lo_open=True), None, "nucleus sampling when answering; unset: none")
    seed: int | None = key(Integer(lo=0), None, "sampling seed sent when answering; unset: not sent")
    reasoning_effort: str = key(
        Text(choices=REASONING_EFFORTS), "", 'reasoning_effort sent when answering ("": not sent: the server decides)'
    )
    thinking: str = key(
        Text(choices=THINKING),
        "",
        'thinking mode when answering: "on"/"off" sends chat_template_kwargs.enable_thinking; "": not sent',
    )
    system_prompt: str = key(Text(), "", 'a system message before each prompt ("": none, the default)')
    judge_temperature: float = key(Number(lo=0), 0.0, "sampling temperature when grading")
    judge_max_tokens: int = key(Integer(lo=1), 1024, "tokens per verdict at most")
    truncated_warn_share: float = key(
        Number(lo=0, hi=1), 0.05, "`score` warns when more than this share of a run's answers hit the token cap"
    )
    min_breakdown_items: int = key(
        Integer(lo=1), 30, "`score` marks a breakdown group with fewer counted items as too small to compare"
    )
    bootstrap_draws: int = key(Integer(lo=100), 2000, "`score`'s bootstrap resamples per 95% confidence interval")
    bootstrap_seed: int = key(Integer(lo=0), 0, "`score`'s bootstrap seed (numpy default_rng)")
    prices: dict[str, tuple[float, float]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        Prices(), None, "`score`'s cost: model name -> [input, output] price per 1M tokens", factory=dict
    )
    endpoints: dict[str, Endpoint] = field(default_factory=lambda: dict(DEFAULT_ENDPOINTS))

    @property
    def retry(self) -> Retry:
        return Retry(self.max_attempts, self.backoff_base, self.backoff_max, self.max_total_wait)

    def answer_cap(self, endpoint: Endpoint) -> int:
        """The answer token cap for ``endpoint``: its own max_tokens, else this table's."""
        return endpoint.max_tokens or self.max_tokens

    def endpoint(self, name: str, *, model: str | None = None, base_url: str | None = None) -> Endpoint:
        if name not in self.endpoints:
            known = ", ".join(sorted(self.endpoints)) or "none"
            raise ConfigError(
                f"no endpoint {name!r} in [tool.propeval.judge.endpoints] (known: {known}); add it or pick another",
                key="endpoints",
            )
        ep = self.endpoints[name]
        if model:
            ep = replace(ep, model=model)
        if base_url:
            ep = replace(ep, base_url=base_url)
        return ep

    def judges(self, names: Sequence[str] = ()) -> tuple[Endpoint, ...]:
        """The judge endpoints: ``names`` when given, else ``panel``, else ``judge_endpoint``
        alone. A name given twice is refused: a panel counts each judge once."""
        chosen = tuple(names) or self.panel or (self.judge_endpoint,)
        twice = sorted({n for n in chosen if chosen.count(n) > 1})
        if twice:
            raise ConfigError(
                f"judge endpoint(s) {', '.join(twice)} named twice in the panel; name each judge once",
                key="panel",
            )
        return tuple(self.endpoint(n) for n in chosen)


def optional_sampling(top_p: float | None, seed: int | None, reasoning_effort: str) -> dict[str, object]:
    """The sampling settings sent only when set (temperature and the token cap always are): what
    ``propeval answer`` adds to its request, and each harness adapter to its harness's config."""
    out: dict[str, object] = {}
    if top_p is not None:
        out["top_p"] = top_p
    if seed is not None:
        out["seed"] = seed
    if reasoning_effort:
        out["reasoning_effort"] = reasoning_effort
    return out


def read_endpoints(raw: Any, where: Where) -> dict[str, Endpoint]:
    """A table of endpoint tables (``[tool.propeval.judge.endpoints]``, or ``[endpoints]`` of the
    maintainer's own config file)."""
    if not isinstance(raw, dict):
        raise where.error("must be a table of tables")
    return {
        str(name): replace(read_table(Endpoint, ep, replace(where, table=f"{where.table}.{name}")), name=str(name))
        for name, ep in raw.items()
    }


def read_judge(raw: Any, where: Where) -> JudgeSettings:
    settings = read_table(JudgeSettings, raw, where, tables=("endpoints",))
    if "endpoints" not in raw:
        return settings
    endpoints = read_endpoints(raw["endpoints"], Where(where.source, "judge.endpoints"))
    return replace(settings, endpoints=endpoints)
