"""A scripted OpenAI-compatible server on 127.0.0.1, for tests and benchmarks (stdlib only).

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models``. A *script* maps each request
(its JSON body and its sequence number) to a :class:`Reply`: a normal completion, an error status
with headers such as ``Retry-After``, a raw body (truncated or not JSON), or a delay before the
reply (a slow read, for timeouts). Every request is recorded, headers included, so tests can
assert on what the client sent.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable
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


def completion(reply: Reply, model: str) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    return json.dumps(
        {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


class LoopbackServer:
    """``with LoopbackServer(script) as srv: ... srv.base_url ...``"""

    def __init__(self, script: Script, *, latency: float = 0.0) -> None:
        self.script = script
        self.latency = latency
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        outer = self

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
                    self._send(200, json.dumps({"object": "list", "data": [{"id": "loopback"}]}).encode(), {})

            def do_POST(self) -> None:
                try:
                    length = int(self.headers.get("Content-Length", "0"))
                    raw = self.rfile.read(length)
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = {}
                    with outer._lock:
                        seen = Seen(len(outer.seen), self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                        outer.seen.append(seen)
                    reply = outer.script(seen)
                    wait = outer.latency + reply.delay
                    if wait:
                        time.sleep(wait)
                    if reply.body is not None:
                        data = reply.body
                    elif reply.status != 200:
                        data = json.dumps(
                            {"error": {"message": f"scripted {reply.status}", "type": "scripted"}}
                        ).encode()
                    else:
                        data = completion(reply, str(body.get("model", "loopback")))
                    self._send(reply.status, data, reply.headers)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self._server = Server(("127.0.0.1", 0), Handler)
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

_FACT_LINE = re.compile(r"^- (f[0-9]+): ", re.MULTILINE)
_FENCED = re.compile(r"^<<<(QUESTION|ANSWER)-([0-9A-F]+)\n.*?\n\1-\2>>>$", re.MULTILINE | re.DOTALL)


def is_judge_request(seen: Seen) -> bool:
    return "<<<ANSWER-" in seen.prompt


def fact_ids(seen: Seen) -> list[str]:
    """The fact ids a judge prompt lists (outside the fenced question and answer)."""
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
