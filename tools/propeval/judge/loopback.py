"""A scripted OpenAI-compatible server on 127.0.0.1, for tests and benchmarks (stdlib only).

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models``. A *script* maps each request
(its JSON body and its sequence number) to a :class:`Reply`: a normal completion, an error status
with headers such as ``Retry-After``, a raw body (see :data:`MALFORMED`), a delay before the
reply (a slow read, for timeouts), a body trickled a few bytes at a time (``drip``), a huge body
streamed without ever being held (``pad``), or a connection reset (``reset``). Every request is
recorded, headers included, so tests can assert on what the client sent.

:class:`FaultScript` wraps a script with seeded faults: the same seed gives the same faults for
the same requests whatever order they arrive in, so a test or benchmark is reproducible.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import re
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: bytes | None = None  # sent as is, instead of a completion
    finish_reason: str = "stop"
    reasoning: str | None = None
    drip: float = 0.0  # seconds between chunks of drip_bytes: a reply trickled under any read timeout
    drip_bytes: int = 1
    pad: int = 0  # a completion whose content is this many bytes, streamed in chunks
    announce: bool = True  # with pad: send Content-Length (else the body ends when the connection closes)
    reset: bool = False  # drop the connection with a TCP reset instead of replying
    # The reply's "usage": DEFAULT_USAGE counts about 4 characters a token of the prompt and the
    # content; None leaves usage out; anything else is sent as is (a hostile server's numbers).
    usage: Any = "default"


DEFAULT_USAGE = "default"


@dataclass
class Seen:
    n: int
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        msgs = self.body.get("messages") or [{}]
        return str(msgs[0].get("content", ""))

    @property
    def last(self) -> str:
        msgs = self.body.get("messages") or [{}]
        return str(msgs[-1].get("content", ""))


Script = Callable[[Seen], Reply]


def completion(reply: Reply, model: str, prompt_chars: int = 0) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    body: dict[str, Any] = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
    }
    if isinstance(reply.usage, str) and reply.usage == DEFAULT_USAGE:
        prompt, done = 1 + prompt_chars // 4, 1 + len(reply.content or "") // 4
        body["usage"] = {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}
    elif reply.usage is not None:
        body["usage"] = reply.usage
    return json.dumps(body).encode()


class LoopbackServer:
    """``with LoopbackServer(script) as srv: ... srv.base_url ...``

    ``port`` 0 takes a free one; ``keep`` False records nothing in ``seen`` (a long-running server,
    such as ``serve-local --stub``, whose script keeps what it needs); ``model`` is the id
    ``GET /v1/models`` lists, and with ``names_itself`` the id every reply names (as a real server
    names the model that answered); else a reply names the model the request asked for.
    """

    def __init__(
        self,
        script: Script,
        *,
        latency: float = 0.0,
        port: int = 0,
        keep: bool = True,
        model: str = "loopback",
        names_itself: bool = False,
    ) -> None:
        self.script = script
        self.latency = latency
        self.keep = keep
        self.model = model
        self.names_itself = names_itself
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        outer = self

        # Long on purpose: the handler class is defined here so that it closes over this server's
        # script, lock and log; its methods are each short.
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                with contextlib.suppress(OSError):
                    models = {"object": "list", "data": [{"id": outer.model, "object": "model"}]}
                    self._send(200, json.dumps(models).encode(), {})

            def do_POST(self) -> None:
                try:
                    length = int(self.headers.get("Content-Length", "0"))
                    raw = self.rfile.read(length)
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = {}
                    with outer._lock:
                        seen = Seen(outer._count, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                        outer._count += 1
                        if outer.keep:
                            outer.seen.append(seen)
                    reply = outer.script(seen)
                    wait = outer.latency + reply.delay
                    if wait:
                        time.sleep(wait)
                    if reply.reset:
                        self._reset()
                        return
                    if reply.pad:
                        self._huge(reply, str(body.get("model", "loopback")))
                        return
                    if reply.body is not None:
                        data = reply.body
                    elif reply.status != 200:
                        data = json.dumps(
                            {"error": {"message": f"scripted {reply.status}", "type": "scripted"}}
                        ).encode()
                    else:
                        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
                        chars = sum(len(str(m.get("content", ""))) for m in msgs)
                        named = outer.model if outer.names_itself else str(body.get("model", "loopback"))
                        data = completion(reply, named, chars)
                    if reply.drip:
                        self._drip(reply, data)
                        return
                    self._send(reply.status, data, reply.headers)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    pass

            def _reset(self) -> None:
                # SO_LINGER with a zero timeout makes close() send RST, not FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()

            def _drip(self, reply: Reply, data: bytes) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.flush()
                for i in range(0, len(data), reply.drip_bytes):
                    self.wfile.write(data[i : i + reply.drip_bytes])
                    self.wfile.flush()
                    time.sleep(reply.drip)

            def _huge(self, reply: Reply, model: str) -> None:
                head = json.dumps({"id": "chatcmpl-huge", "object": "chat.completion", "model": model})
                start = (
                    head[:-1] + ', "choices": [{"index": 0, "message": {"role": "assistant", "content": "'
                ).encode()
                end = b'"}, "finish_reason": "stop"}]}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if reply.announce:
                    self.send_header("Content-Length", str(len(start) + reply.pad + len(end)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(start)
                chunk = b"x" * 65536
                left = reply.pad
                while left > 0:
                    self.wfile.write(chunk[: min(left, len(chunk))])
                    left -= len(chunk)
                self.wfile.write(end)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            # socketserver listens with a backlog of 5: a client opening 8 connections at once
            # (concurrency 8) overflows it while the accept thread waits for the GIL, the kernel
            # drops the SYN, and that request waits out TCP's 1 s retransmit.
            request_queue_size = 128

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self._count = 0
        self._server = Server(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------- ready-made scripts

_FACT_LINE = re.compile(r"^- (f[0-9]+):\n<<<FACT-", re.MULTILINE)
_FENCED = re.compile(r"^<<<(QUESTION|ANSWER|MARKER)-([0-9A-F]+)\n.*?\n\1-\2>>>$", re.MULTILINE | re.DOTALL)


def is_judge_request(seen: Seen) -> bool:
    return "<<<ANSWER-" in seen.prompt


def fact_ids(seen: Seen) -> list[str]:
    """The fact ids a judge prompt lists (each above its own fence, outside the question, answer and
    markers)."""
    outside = _FENCED.sub("", seen.prompt)
    return list(dict.fromkeys(_FACT_LINE.findall(outside)))


def facts_verdict(ids: list[str], state: str = "stated", propaganda: int = 0, quote: str | None = None) -> str:
    return json.dumps(
        {
            "rationale": "scripted",
            "facts": [{"id": i, "state": state, "evidence": None} for i in ids],
            "propaganda": propaganda,
            "frame_adopted": quote,
        }
    )


def audit_verdict(accuracy: str = "Correct", inclusion: int | str = 0, tone: str = "Neutral") -> str:
    return json.dumps({"rationale": "scripted", "accuracy": accuracy, "propaganda_inclusion": inclusion, "tone": tone})


def default_script(seen: Seen) -> Reply:
    """Answers a question with a sentence; judges every fact stated (facts rubric) or Correct (audit)."""
    if not is_judge_request(seen):
        return Reply(f"An answer to: {seen.prompt[:60]}")
    if "propaganda_inclusion" in _FENCED.sub("", seen.prompt):
        return Reply(audit_verdict())
    return Reply(facts_verdict(fact_ids(seen)))


# --------------------------------------------------------------------------- faults

_TOKEN = re.compile(r"\b[0-9A-F]{16}\b")
_HUGE_INT = "9" * 5000  # past Python's 4,300-digit limit for int()

MALFORMED: dict[str, bytes] = {
    "truncated": b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "ass',
    "not_json": b"<html><body>502 Bad Gateway</body></html>",
    "not_utf8": b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "\xff\xfe"}}]}',
    "wrong_shape": b'{"choices": {"0": {"text": "an answer"}}}',
    "surrogate": b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "A \\ud800 B"},'
    b' "finish_reason": "stop"}]}',
    "empty_object": b"{}",
    "no_choices": b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": []}',
    "null_message": b'{"choices": [{"index": 0, "message": null, "finish_reason": "stop"}]}',
    "huge_int": (
        '{"choices": [{"index": ' + _HUGE_INT + ', "message": {"role": "assistant", "content": "hi"},'
        ' "finish_reason": "stop"}]}'
    ).encode(),
    "error_200": b'{"error": {"message": "overloaded", "type": "server_error"}}',
}

FAULT_KINDS: tuple[str, ...] = (
    *MALFORMED,
    "http_429",
    "http_500",
    "http_503",
    "reset",
    "drip",
    "huge",
    "huge_unannounced",
)


def fault_reply(kind: str, *, drip: float = 0.05, huge_bytes: int = 100_000_000) -> Reply:
    """The :class:`Reply` for one fault kind of :data:`FAULT_KINDS`."""
    if kind in MALFORMED:
        return Reply(body=MALFORMED[kind])
    if kind.startswith("http_"):
        status = int(kind[5:])
        return Reply(status=status, headers={"Retry-After": "0"} if status == 429 else {})
    if kind == "reset":
        return Reply(reset=True)
    if kind == "drip":
        return Reply("a reply that arrives one byte at a time", drip=drip)
    if kind in ("huge", "huge_unannounced"):
        return Reply(pad=huge_bytes, announce=kind == "huge")
    raise ValueError(f"no fault kind {kind!r}; use one of {', '.join(FAULT_KINDS)}")


class FaultScript:
    """``base`` with a seeded share ``rate`` of requests answered by a fault from ``kinds``.

    The draw for a request depends on the seed, its messages and how many times the same messages
    were sent before, never on arrival order, so concurrent runs see the same faults. ``counts``
    tallies the faults served by kind, and ``"ok"`` for the rest.
    """

    def __init__(
        self,
        seed: int,
        rate: float,
        *,
        kinds: Sequence[str] = FAULT_KINDS,
        base: Script | None = None,
        drip: float = 0.05,
        huge_bytes: int = 100_000_000,
    ) -> None:
        self.seed = seed
        self.rate = rate
        self.kinds = tuple(kinds)
        self.base = base or default_script
        self.drip = drip
        self.huge_bytes = huge_bytes
        self.counts: Counter[str] = Counter()
        self._sent: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, seen: Seen) -> Reply:
        # A judge prompt's boundary token is drawn fresh per call: leave it out of the key.
        key = _TOKEN.sub("TOKEN", json.dumps(seen.body.get("messages"), sort_keys=True))
        with self._lock:
            n = self._sent[key]
            self._sent[key] += 1
        digest = hashlib.sha256(f"{self.seed}\0{n}\0{key}".encode()).digest()
        rng = random.Random(digest)
        if rng.random() < self.rate:
            kind = rng.choice(self.kinds)
            with self._lock:
                self.counts[kind] += 1
            return fault_reply(kind, drip=self.drip, huge_bytes=self.huge_bytes)
        with self._lock:
            self.counts["ok"] += 1
        return self.base(seen)
