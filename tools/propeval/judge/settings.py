"""``[tool.propeval.judge]``: where the models are and how hard to try.

Every key has a default, so an empty section works against a local server on port 8080.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from propeval.config import Config
from propeval.errors import ConfigError

RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")

DEFAULT_ENDPOINTS: dict[str, dict[str, Any]] = {
    "local": {
        "base_url": "http://127.0.0.1:8080/v1",
        "model": "gemma-3-270m",
        "api_key_env": "",
        "response_format": "json_object_schema",
    }
}


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible server. ``api_key_env`` names the variable that holds the key."""

    name: str
    base_url: str
    model: str
    api_key_env: str = ""
    response_format: str = "json_schema"

    def api_key(self) -> str:
        """The key from the environment. Never logged, never written, never put in a message."""
        if not self.api_key_env:
            return "no-key"  # local servers ignore it; the client insists on a non-empty value
        check_url(self)
        value = os.environ.get(self.api_key_env, "")
        if not value:
            raise ConfigError(
                f"endpoint {self.name!r} reads its API key from the environment variable "
                f"{self.api_key_env}, which is not set; export it first",
                key="api_key_env",
            )
        return value


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


@dataclass(frozen=True)
class Retry:
    """Retries on 429, 5xx, timeouts and dropped connections; none on other 4xx."""

    max_attempts: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_total_wait: float = 300.0


@dataclass(frozen=True)
class JudgeSettings:
    """``timeout`` bounds each read; ``request_deadline`` bounds one HTTP request from connect to
    last byte, so a reply trickled a byte at a time cannot hold a request past it;
    ``run_deadline`` (0: none) bounds the wall time of a whole `answer` or `grade` run;
    ``max_reply_bytes`` caps the bytes read from one reply."""

    runs_dir: str = "runs"
    rubrics_dir: str = "rubrics"
    answer_endpoint: str = "local"
    judge_endpoint: str = "local"
    concurrency: int = 8
    timeout: float = 120.0
    connect_timeout: float = 10.0
    request_deadline: float = 300.0
    run_deadline: float = 0.0
    max_reply_bytes: int = 1_000_000
    retry: Retry = field(default_factory=Retry)
    max_reasks: int = 2
    temperature: float = 0.0
    max_tokens: int = 1024
    judge_temperature: float = 0.0
    judge_max_tokens: int = 1024
    endpoints: dict[str, Endpoint] = field(default_factory=dict)

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


def _num(table: dict[str, Any], key: str, default: Any, kind: type, minimum: float, where: str) -> Any:
    value = table.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        ok = ok and isinstance(value, int)
    if not ok or value < minimum:
        raise ConfigError(f"[tool.propeval.{where}] {key} must be a number >= {minimum} (got {value!r})", key=key)
    return kind(value)


def _str(table: dict[str, Any], key: str, default: str, where: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"[tool.propeval.{where}] {key} must be a string (got {value!r})", key=key)
    return value


def load_settings(config: Config) -> JudgeSettings:
    """Read and check ``[tool.propeval.judge]``."""
    t = config.section("judge")
    w = "judge"
    retry = Retry(
        max_attempts=_num(t, "max_attempts", 6, int, 1, w),
        backoff_base=_num(t, "backoff_base", 0.5, float, 0, w),
        backoff_max=_num(t, "backoff_max", 30.0, float, 0, w),
        max_total_wait=_num(t, "max_total_wait", 300.0, float, 0, w),
    )
    raw_eps = t.get("endpoints", DEFAULT_ENDPOINTS)
    if not isinstance(raw_eps, dict):
        raise ConfigError("[tool.propeval.judge.endpoints] must be a table of tables", key="endpoints")
    endpoints = {}
    for name, ep in raw_eps.items():
        where = f"judge.endpoints.{name}"
        if not isinstance(ep, dict):
            raise ConfigError(f"[tool.propeval.{where}] must be a table", key="endpoints")
        if "api_key" in ep:
            raise ConfigError(
                f"[tool.propeval.{where}] has an api_key: never put keys in config; "
                "name the environment variable that holds it with api_key_env",
                key="api_key",
            )
        fmt = _str(ep, "response_format", "json_schema", where)
        if fmt not in RESPONSE_FORMATS:
            raise ConfigError(
                f"[tool.propeval.{where}] response_format must be one of {', '.join(RESPONSE_FORMATS)}",
                key="response_format",
            )
        base_url = _str(ep, "base_url", "", where)
        model = _str(ep, "model", "", where)
        if not base_url or not model:
            raise ConfigError(f"[tool.propeval.{where}] needs base_url and model", key="endpoints")
        endpoints[name] = Endpoint(name, base_url, model, _str(ep, "api_key_env", "", where), fmt)
    return JudgeSettings(
        runs_dir=_str(t, "runs_dir", "runs", w),
        rubrics_dir=_str(t, "rubrics_dir", "rubrics", w),
        answer_endpoint=_str(t, "answer_endpoint", "local", w),
        judge_endpoint=_str(t, "judge_endpoint", "local", w),
        concurrency=_num(t, "concurrency", 8, int, 1, w),
        timeout=_num(t, "timeout", 120.0, float, 0.001, w),
        connect_timeout=_num(t, "connect_timeout", 10.0, float, 0.001, w),
        request_deadline=_num(t, "request_deadline", 300.0, float, 0.001, w),
        run_deadline=_num(t, "run_deadline", 0.0, float, 0, w),
        max_reply_bytes=_num(t, "max_reply_bytes", 1_000_000, int, 1024, w),
        retry=retry,
        max_reasks=_num(t, "max_reasks", 2, int, 0, w),
        temperature=_num(t, "temperature", 0.0, float, 0, w),
        max_tokens=_num(t, "max_tokens", 1024, int, 1, w),
        judge_temperature=_num(t, "judge_temperature", 0.0, float, 0, w),
        judge_max_tokens=_num(t, "judge_max_tokens", 1024, int, 1, w),
        endpoints=endpoints,
    )
