"""An OpenAI-compatible chat client with our own retry policy.

The ``openai`` package does the HTTP; its own retries are off (``max_retries=0``) because they
have no cap on the total wait. Here:

* 429, 408, 5xx, timeouts and dropped connections are retried with exponential backoff and
  full jitter, honouring ``Retry-After`` (seconds or HTTP date), until ``max_attempts`` or until
  the next sleep would take the total wait past ``max_total_wait``;
* 401 and 403 stop the whole run at once (:class:`FatalEndpointError`): every request would fail;
* any other 4xx (400, 404, 422, ...) fails that request at once, with no retry
  (:class:`RequestError`);
* the API key never appears in a message or a kept reply: server text is scrubbed of it before it
  is kept (a server that echoes the Authorization header back gets ``***``).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from propeval.errors import DependencyError, EndpointError
from propeval.judge.settings import Endpoint, Retry

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


class RequestError(EndpointError):
    """One request failed for good (a non-retryable status, or the retry budget ran out)."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class FatalEndpointError(EndpointError):
    """The endpoint refuses us (bad key, no permission, unreachable): stop the run."""


@dataclass
class Completion:
    """The final text of one reply (reasoning excluded) and how it ended."""

    text: str | None
    finish_reason: str | None
    attempts: int


def final_text(message: Any) -> str | None:
    """The answer's final text: ``content`` only, never ``reasoning_content``, and no leading
    ``<think>`` block. ``None`` when nothing is left."""
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        return None
    content = _THINK.sub("", content, count=1).strip()
    return content or None


def response_format(kind: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``response_format`` body for a server flavour (see ``settings.RESPONSE_FORMATS``)."""
    if schema is None or kind == "none":
        return None
    if kind == "json_schema":  # OpenAI, vLLM, llama.cpp's own llama-server
        return {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
    if kind == "json_object_schema":  # llama-cpp-python's server
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def retry_after(headers: Any) -> float | None:
    """Seconds asked for by ``Retry-After`` / ``retry-after-ms``, or None."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatClient:
    """Chat completions against one endpoint, at most ``concurrency`` requests in flight."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: Retry,
        timeout: float,
        connect_timeout: float,
        concurrency: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        try:
            import openai
        except ImportError as e:
            raise DependencyError("openai", "judge") from e
        self.endpoint = endpoint
        self.retry = retry
        self._key = endpoint.api_key()
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=self._key,
            max_retries=0,
            timeout=openai.Timeout(timeout, connect=connect_timeout),
        )
        self._sem = asyncio.Semaphore(concurrency)
        self._sleep = sleep
        self.total_wait = 0.0

    async def aclose(self) -> None:
        await self._client.close()

    def redact(self, text: str) -> str:
        """``text`` without the API key: a server may echo the Authorization header back."""
        if self._key and self._key != "no-key":
            text = text.replace(self._key, "***")
        return text

    def _scrub(self, text: str) -> str:
        return self.redact(text)[:500]

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_tokens: int,
        schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One chat completion, retried by the policy above."""
        openai = self._openai
        fmt = response_format(self.endpoint.response_format, schema)
        extra: dict[str, Any] = {"response_format": fmt} if fmt else {}
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            asked: float | None = None
            try:
                async with self._sem:
                    resp = await self._client.chat.completions.create(
                        model=self.endpoint.model,
                        messages=messages,  # type: ignore[arg-type]
                        temperature=temperature,
                        max_tokens=max_tokens,
                        **extra,
                    )
            except openai.APIStatusError as e:
                status = e.status_code
                if status in (401, 403):
                    raise FatalEndpointError(
                        f"endpoint {self.endpoint.name!r} refused the request with HTTP {status}: "
                        f"check the key in ${self.endpoint.api_key_env or '(none configured)'} and its permissions"
                    ) from None
                if not (status == 429 or status == 408 or status >= 500):
                    raise RequestError(
                        f"HTTP {status} from {self.endpoint.name!r} (not retried): {self._scrub(str(e.message))}",
                        status=status,
                        attempts=attempt,
                    ) from None
                reason = f"HTTP {status}"
                asked = retry_after(e.response.headers)
            except openai.APITimeoutError:
                reason = "timeout"
            except openai.APIConnectionError as e:
                reason = f"connection failed ({self._scrub(str(e.__cause__ or e))})"
            else:
                if not resp.choices:
                    return Completion(None, None, attempt)
                choice = resp.choices[0]
                text = final_text(choice.message)
                return Completion(self.redact(text) if text else text, choice.finish_reason, attempt)

            if asked is not None:
                delay = asked + random.uniform(0, 0.1 * max(asked, 0.1))
            else:
                cap = min(self.retry.backoff_max, self.retry.backoff_base * 2 ** (attempt - 1))
                delay = random.uniform(cap / 2, cap)
            if attempt >= self.retry.max_attempts or waited + delay > self.retry.max_total_wait:
                why = (
                    f"{attempt} attempt(s)"
                    if attempt >= self.retry.max_attempts
                    else f"the {self.retry.max_total_wait:g}s retry budget"
                )
                if reason.startswith("connection failed"):
                    from propeval.judge.local import postmortem

                    died = postmortem(self.endpoint.base_url)
                    raise FatalEndpointError(
                        f"endpoint {self.endpoint.name!r} at {self.endpoint.base_url} is unreachable: {reason}; "
                        + (died if died else "start the server (e.g. propeval serve-local) or fix base_url")
                    )
                raise RequestError(f"{reason}; gave up after {why}", attempts=attempt)
            waited += delay
            self.total_wait += delay
            await self._sleep(delay)
