"""An OpenAI-compatible chat client with our own retry policy, deadlines and size caps.

The ``openai`` package does the HTTP (over httpx); its own retries are off (``max_retries=0``)
because they have no cap on the total wait, and its reply parsing is bypassed
(``with_raw_response``) because it accepts any shape. Here:

* every reply is read through a byte cap (``max_reply_bytes``, checked on ``Content-Length`` and
  again while the body streams in), with compression refused, so a huge or decompressing reply
  never sits in memory;
* every request has a total deadline (``request_deadline``), on top of the per-read ``timeout``,
  so a server that trickles one byte a second cannot hold it; a request that hits it is not
  retried (a server that trickled once would hold the next try as long);
* every item has a deadline over all its requests, attempts and waits (``item_deadline``), from
  when the run starts on it (:data:`ITEM_STARTED`, set by the run loop): no mix of faults holds
  one item longer;
* a 200 reply is parsed by the strict loader and checked against :data:`REPLY_SCHEMA`; a reply
  that is not UTF-8, not JSON, of the wrong shape (``{}``, ``choices: []``, ``message: null``), or
  holds a lone surrogate or an over-long integer is *malformed*: a fault like a 5xx, never an
  answer;
* 429, 408, 5xx, timeouts, missed deadlines, dropped connections, oversized and malformed
  replies are retried with exponential backoff and full jitter, honouring ``Retry-After``
  (seconds or HTTP date), until ``max_attempts`` or until the next sleep would take the total
  wait past ``max_total_wait`` or the item past its deadline; then :class:`RequestError` carries
  the reason and the last raw reply, cut to :data:`RAW_CAP` characters. A ``Retry-After`` longer
  than propeval will wait is named in the reason, with how long propeval waits at most;
* 401 and 403, and a server that cannot be connected to at all, stop the whole run at once
  (:class:`FatalEndpointError`): every request would fail;
* any other 4xx (400, 404, 422, ...) fails that request at once, with no retry
  (:class:`RequestError`);
* the API key never appears in a message or a kept reply: server text is scrubbed of it before it
  is kept (a server that echoes the Authorization header back gets ``***``).
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import os
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from propeval.errors import DependencyError, EndpointError
from propeval.loader import Limits, LoadError, load_json_text
from propeval.settings import Endpoint, Retry

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
# When the run loop started on the current item (time.monotonic()); None outside a run. Every
# request of the item (attempts, re-asks, a panel's judges) counts against one item_deadline.
ITEM_STARTED: contextvars.ContextVar[float | None] = contextvars.ContextVar("item_started", default=None)
RAW_CAP = 2000  # characters of a failed reply kept in a record
# A stored reply is cut at max_tokens x this many characters: more than any tokenizer yields
# per token on prose, so only a server that ignores max_tokens is cut.
CHARS_PER_TOKEN = 8
MODEL_ID_CAP = 200  # characters of the model id a reply names, as recorded
_REPLY_LIMITS = Limits(max_bytes=1 << 62, max_depth=16, max_nodes=20_000)
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["choices"],
    "properties": {
        "choices": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["message"],
                "properties": {
                    "message": {
                        "type": "object",
                        "required": ["content"],
                        "properties": {"content": {"type": ["string", "null"]}},
                    },
                    "finish_reason": {"type": ["string", "null"], "maxLength": 64},
                },
            },
        }
    },
}


class RequestError(EndpointError):
    """One request failed for good (a non-retryable status, or the retry budget ran out).

    ``raw`` is the last reply's body when it was malformed, cut to :data:`RAW_CAP` characters."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1, raw: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts
        self.raw = raw


class MalformedReplyError(EndpointError):
    """A 200 reply that is not a chat completion; ``raw`` is its start, for the record."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


class ReplyTooLargeError(Exception):
    """Raised inside httpx while a body streams in, once it passes the byte cap."""

    def __init__(self, cap: int, announced: int | None = None) -> None:
        said = f" (it announced {announced} bytes)" if announced is not None else ""
        super().__init__(f"the reply is over the {cap}-byte cap{said}")


class FatalEndpointError(EndpointError):
    """The endpoint refuses us (bad key, no permission, unreachable): stop the run."""


@dataclass
class Completion:
    """The final text of one reply (reasoning excluded) and how it ended. ``cut`` says the text
    was cut at ``max_tokens`` x :data:`CHARS_PER_TOKEN` characters because the server sent more.
    ``usage`` is the server's token count, checked by :func:`read_usage` (None when it sent none
    usable); ``anomalies`` says what in ``usage`` or ``finish_reason`` was off and how it was kept."""

    text: str | None
    finish_reason: str | None
    attempts: int
    cut: bool = False
    usage: dict[str, int] | None = None
    anomalies: list[str] = field(default_factory=list)
    served_model: str | None = None  # the model id the server named in its reply (None: it named none)


# finish_reason values of the chat-completions protocol; any other string is kept as "other".
FINISH_REASONS = ("stop", "length", "content_filter", "tool_calls", "function_call")
# A count above this is not a count of one call's tokens: refused as an anomaly.
MAX_USAGE_TOKENS = 10_000_000


def read_finish(finish: str | None) -> tuple[str | None, list[str]]:
    """A reply's finish_reason as recorded: one of :data:`FINISH_REASONS`, None, or "other" with
    the value it had named in an anomaly."""
    if finish is None or finish in FINISH_REASONS:
        return finish, []
    return "other", [f"finish_reason {finish[:64]!r} is not one of {', '.join(FINISH_REASONS)}; kept as 'other'"]


def read_usage(usage: Any, max_tokens: int | None) -> tuple[dict[str, int] | None, list[str]]:
    """``(prompt_tokens, completion_tokens, total_tokens[, reasoning_tokens])`` from a reply's
    ``usage``, checked: each an integer 0..:data:`MAX_USAGE_TOKENS` (booleans, floats, strings and
    negatives refused), the total recomputed as their sum. What was off is named in the anomalies;
    a count that is refused makes the whole usage None (never a guess)."""
    if usage is None:
        return None, ["the reply has no usage; its tokens are not counted"]
    if not isinstance(usage, dict):
        return None, [f"usage is {type(usage).__name__}, not an object; its tokens are not counted"]
    out: dict[str, int] = {}
    notes: list[str] = []
    for name in ("prompt_tokens", "completion_tokens"):
        v = usage.get(name)
        if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_USAGE_TOKENS):
            return None, [f"usage.{name} is {str(v)[:40]!r}, not an integer 0-{MAX_USAGE_TOKENS}; tokens not counted"]
        out[name] = v
    out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
    total = usage.get("total_tokens")
    if total is not None and total != out["total_tokens"]:
        notes.append(f"usage.total_tokens {str(total)[:40]!r} is not prompt + completion; recorded the sum")
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if isinstance(reasoning, int) and not isinstance(reasoning, bool) and 0 <= reasoning <= out["completion_tokens"]:
        out["reasoning_tokens"] = reasoning
    elif reasoning is not None:
        notes.append(f"usage reasoning_tokens {str(reasoning)[:40]!r} is out of range; left out")
    if max_tokens is not None and out["completion_tokens"] > max_tokens:
        notes.append(f"usage.completion_tokens {out['completion_tokens']} is over max_tokens {max_tokens}")
    return out, notes


def final_text(message: Any) -> str | None:
    """The answer's final text: ``content`` only, never ``reasoning_content``, and no leading
    ``<think>`` block. ``None`` when nothing is left."""
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
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


def _raw_text(body: bytes) -> str:
    """The start of a reply body as text, for a record: cut to RAW_CAP, undecodable bytes replaced."""
    text = body[: RAW_CAP * 4].decode("utf-8", errors="replace")
    return text if len(text) <= RAW_CAP else text[:RAW_CAP] + f"[... cut at {RAW_CAP} characters]"


def _encodable(value: str, where: str, raw: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise MalformedReplyError(
            f"{where} holds a lone surrogate (U+{ord(value[e.start]):04X}) at character {e.start}", raw
        ) from None
    return value


def parse_reply_data(body: bytes, max_chars: int) -> tuple[str | None, str | None, bool, dict[str, Any]]:
    """``(final text, finish_reason, cut, the parsed reply)`` of a 200 chat-completion body (the
    reply for its ``usage``), or :class:`MalformedReplyError` with what is wrong and the body's start."""
    import jsonschema

    raw = _raw_text(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MalformedReplyError(f"the reply is not UTF-8 (byte {e.start})", raw) from None
    try:
        data = load_json_text(text, "reply", limits=_REPLY_LIMITS).data
    except LoadError as e:
        p = e.problem
        where = f"at line {p.line}, column {p.col}"
        # The strict loader refuses over-long numbers and lone surrogate escapes before int() or
        # UTF-8 can fail on them: still a malformed reply, said as such.
        if p.rule == "number-size":
            raise MalformedReplyError(f"the reply holds an integer too long to read ({where})", raw) from None
        if "lone surrogate" in p.message:
            raise MalformedReplyError(f"the reply holds a lone surrogate escape ({where})", raw) from None
        raise MalformedReplyError(f"the reply is not valid JSON ({p.message} {where})", raw) from None
    except ValueError:  # an integer past Python's 4,300-digit limit for int()
        raise MalformedReplyError("the reply holds an integer too long to read", raw) from None
    error = next(iter(jsonschema.Draft202012Validator(REPLY_SCHEMA).iter_errors(data)), None)
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "the reply"
        raise MalformedReplyError(f"the reply is not a chat completion ({where}: {error.message[:200]})", raw)
    choice = data["choices"][0]
    finish = choice.get("finish_reason")
    if isinstance(finish, str):
        _encodable(finish, "finish_reason", raw)
    content = choice["message"].get("content")
    if isinstance(content, str):
        _encodable(content, "the content", raw)
    final = final_text(choice["message"])
    cut = final is not None and len(final) > max_chars
    if cut:
        final = final[:max_chars]  # type: ignore[index]
    return final, finish, cut, data


def http_module(openai: Any) -> Any:
    """The httpx flavour the installed ``openai`` is built on: ``httpx`` (1.x) or ``httpx2`` (3.x)."""
    import importlib

    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


# httpx's default TLS context per process: building one loads the CA bundle (~40 ms), and a run
# makes a client per endpoint and per gate step. Keyed by the variables httpx reads to build it.
_TLS_CONTEXTS: dict[tuple[str, str | None, str | None], Any] = {}


def tls_context(httpx: Any) -> Any:
    """The context ``httpx`` would make by default (``verify=True``), made once and shared."""
    key = (httpx.__name__, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    if key not in _TLS_CONTEXTS:
        _TLS_CONTEXTS[key] = httpx.create_ssl_context()
    return _TLS_CONTEXTS[key]


def capped_transport(httpx: Any, cap: int) -> Any:
    """An httpx transport that asks for uncompressed replies, refuses a compressed one (a small
    body could inflate past any cap) and stops reading any body past ``cap`` bytes."""

    class CappedStream(httpx.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > cap:
                    raise ReplyTooLargeError(cap)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = "identity"
            response = await super().handle_async_request(request)
            announced = response.headers.get("content-length", "")
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            too_big = announced.isdigit() and int(announced) > cap
            if too_big or encoding not in ("", "identity"):
                await response.aclose()
                if too_big:
                    raise ReplyTooLargeError(cap, int(announced))
                raise httpx.DecodingError(f"the reply is compressed ({encoding}) though identity was asked for")
            response.stream = CappedStream(response.stream)
            return response

    return Transport(verify=tls_context(httpx))


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
        request_deadline: float = 300.0,
        item_deadline: float = 0.0,
        max_reply_bytes: int = 1_000_000,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        try:
            import openai
        except ImportError as e:
            raise DependencyError("openai", "judge") from e
        self.endpoint = endpoint
        self.retry = retry
        self.request_deadline = request_deadline
        self.item_deadline = item_deadline  # 0: none
        self.max_reply_bytes = max_reply_bytes
        self._key = endpoint.api_key()
        self._openai = openai
        self._httpx = http_module(openai)
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=self._key,
            max_retries=0,
            timeout=openai.Timeout(timeout, connect=connect_timeout),
            http_client=openai.DefaultAsyncHttpxClient(transport=capped_transport(self._httpx, max_reply_bytes)),
        )
        self._sem = asyncio.Semaphore(concurrency)
        self._sleep = sleep

    async def aclose(self) -> None:
        await self._client.close()

    def redact(self, text: str) -> str:
        """``text`` without the API key: a server may echo the Authorization header back."""
        if self._key and self._key != "no-key":
            text = text.replace(self._key, "***")
        return text

    def _scrub(self, text: str) -> str:
        return self.redact(text)[:500]

    def _item_deadline_at(self) -> float | None:
        """When the current item's deadline passes (time.monotonic()), or None."""
        started = ITEM_STARTED.get()
        if started is None or self.item_deadline <= 0:
            return None
        return started + self.item_deadline

    async def _once(self, messages: list[dict[str, str]], max_chars: int, deadline: float, **params: Any) -> Completion:
        """One HTTP request under ``deadline`` seconds; a malformed reply raises."""
        async with self._sem, asyncio.timeout(deadline):
            resp = await self._client.chat.completions.with_raw_response.create(
                model=self.endpoint.model,
                messages=messages,
                **params,
            )
        text, finish, cut, data = parse_reply_data(resp.http_response.content, max_chars)
        finish, notes = read_finish(finish)
        usage, more = read_usage(data.get("usage"), params.get("max_tokens"))
        served = data.get("model")
        served = self.redact(served)[:MODEL_ID_CAP] if isinstance(served, str) and served.isprintable() else None
        return Completion(self.redact(text) if text else text, finish, 0, cut, usage, [*notes, *more], served)

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        max_tokens: int,
        schema: dict[str, Any] | None = None,
        sampling: dict[str, Any] | None = None,
    ) -> Completion:
        """One chat completion, retried by the policy above. ``sampling`` holds more request
        parameters (top_p, seed, reasoning_effort, extra_body), each sent as given."""
        # One loop on purpose (about 100 lines): each failure class decides retry or give up
        # against the same attempt count, wait budget and item deadline, which split functions
        # would pass around.
        openai = self._openai
        fmt = response_format(self.endpoint.response_format, schema)
        extra: dict[str, Any] = {"response_format": fmt} if fmt else {}
        extra.update(sampling or {})
        item_deadline = self._item_deadline_at()
        item_rule = f"the {self.item_deadline:g}s item deadline ([tool.propeval.judge] item_deadline)"
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            asked: float | None = None
            raw: str | None = None
            unreachable = False
            final = False  # give up now, whatever the budget left
            limit = self.request_deadline
            if item_deadline is not None:
                left = item_deadline - time.monotonic()
                if left <= 0:
                    raise RequestError(f"{item_rule} passed before attempt {attempt}", attempts=attempt - 1)
                limit = min(limit, left)
            try:
                c = await self._once(
                    messages,
                    max_tokens * CHARS_PER_TOKEN,
                    limit,
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
            except TimeoutError:
                final = True  # a server that held one try this long would hold the next as long
                if limit < self.request_deadline:
                    reason = f"{item_rule} passed during attempt {attempt}"
                else:
                    reason = (
                        f"no complete reply within the {self.request_deadline:g}s request deadline "
                        "([tool.propeval.judge] request_deadline; a deadline hit is not retried)"
                    )
            except ReplyTooLargeError as e:  # openai 3.x lets it through unwrapped
                reason = str(e)
            except openai.APITimeoutError:
                reason = "timeout"
            except openai.APIConnectionError as e:
                cause = e.__cause__
                if isinstance(cause, ReplyTooLargeError):
                    reason = str(cause)
                else:
                    unreachable = isinstance(cause, self._httpx.ConnectError)
                    what = f"{type(cause).__name__}: {cause}" if cause is not None and str(cause) else repr(cause or e)
                    reason = f"connection failed ({self._scrub(what)})"
            except MalformedReplyError as e:
                reason = f"malformed reply: {self._scrub(str(e))}"
                raw = self.redact(e.raw)
            else:
                c.attempts = attempt
                return c

            if asked is not None:
                delay = asked + random.uniform(0, 0.1 * max(asked, 0.1))
            else:
                cap = min(self.retry.backoff_max, self.retry.backoff_base * 2 ** (attempt - 1))
                delay = random.uniform(cap / 2, cap)
            budget = self.retry.max_total_wait - waited  # seconds propeval still waits for this request
            budget_rule = f"the {self.retry.max_total_wait:g}s retry budget ([tool.propeval.judge] max_total_wait)"
            if item_deadline is not None and item_deadline - time.monotonic() < budget:
                budget, budget_rule = item_deadline - time.monotonic(), item_rule
            if final or attempt >= self.retry.max_attempts or delay > budget:
                why = f"{attempt} attempt(s)" if final or attempt >= self.retry.max_attempts else budget_rule
                if unreachable:
                    from propeval.judge.local import postmortem

                    died = postmortem(self.endpoint.base_url)
                    raise FatalEndpointError(
                        f"endpoint {self.endpoint.name!r} at {self.endpoint.base_url} is unreachable: {reason}; "
                        + (died if died else "start the server (e.g. propeval serve-local) or fix base_url")
                    )
                if asked is not None and not final and attempt < self.retry.max_attempts and asked > budget:
                    raise RequestError(
                        f"{reason}: the server asked to wait {_duration(asked)} before the next try (Retry-After), "
                        f"longer than propeval will wait ({_duration(max(budget, 0.0))} at most, by {budget_rule}); "
                        f"gave up after {attempt} attempt(s)",
                        attempts=attempt,
                        raw=raw,
                    )
                raise RequestError(f"{reason}; gave up after {why}", attempts=attempt, raw=raw)
            waited += delay
            await self._sleep(delay)


def _duration(seconds: float) -> str:
    """``100000 s (27.8 h)``: seconds, and a unit people read for long waits."""
    if seconds >= 7200:
        return f"{seconds:g} s ({seconds / 3600:.1f} h)"
    if seconds >= 120:
        return f"{seconds:g} s ({seconds / 60:.1f} min)"
    return f"{seconds:.3g} s"
