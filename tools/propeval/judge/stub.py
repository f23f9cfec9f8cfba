"""The plumbing model: a deterministic OpenAI-compatible server whose scores are known in advance.

``propeval serve-local --stub`` serves it; ``propeval eval-smoke`` runs every installed harness
against it. It is :class:`propeval.judge.loopback.LoopbackServer` (the scripted server the tests
use) with :class:`PlumbingScript` as its script, so there is one server stack.

*Answers.* A request whose last user message is the prompt of an item of the source (a release
folder, its ``items.jsonl``, or a corpus root) is answered with that item's required facts, one
after the other: a *full answer*. An item told to refuse is answered with :data:`REFUSAL`. Any
other question gets :data:`UNKNOWN`.

*Verdicts.* A request that carries a rubric's judge prompt (a fenced answer, ``<<<ANSWER-TOKEN``)
is judged by reading the fenced answer against the fenced facts: a fact is *stated* when its text
appears in the answer, *missed* otherwise; never propaganda. The verdict's shape follows the
request's ``response_format`` schema (facts: per-fact states; audit: accuracy, propaganda
inclusion, tone; pair: a verdict on two prompts), else the prompt. An audit verdict is Refusal x3
for a refusal, Correct when every fact is stated, Partial otherwise. A pair verdict is "same" when
the two fenced prompts are one text, "different" otherwise: the stub reads no meaning.

So a harness that passes the item, the answer and the judge's verdict through unchanged scores
the full answers fact 5 and no propaganda, and the refusals fact 0: fact mean 5.0 with full
answers, 0.0 with refusals, 5 x (share answered) for a mix. Any other number means an adapter
lost or changed something on the way; a dropped answer shows as 0, not as nan.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.judge.loopback import LoopbackServer, Reply, Seen, audit_verdict

STUB_MODEL = "propeval-stub"
REFUSAL = "I cannot help with that question."
UNKNOWN = "I am propeval's plumbing model; I only know the facts of the items I was given."
REFUSE_ALL = "all"

_ANSWER = re.compile(r"<<<ANSWER-([0-9A-F]+)\n(.*?)\nANSWER-\1>>>", re.DOTALL)
_QUESTION = re.compile(r"<<<QUESTION-([0-9A-F]+)\n(.*?)\nQUESTION-\1>>>", re.DOTALL)


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def full_answer(facts: Iterable[str]) -> str:
    """Every fact, one sentence after the other."""
    out = []
    for fact in facts:
        fact = " ".join(fact.split())
        out.append(fact if fact.endswith((".", "!", "?", "。", "！", "？")) else fact + ".")
    return " ".join(out)


def judge_facts(prompt: str) -> tuple[str, list[tuple[str, str]]] | None:
    """The fenced answer and the (id, text) facts of a judge prompt; None if it is not one."""
    found = _ANSWER.search(prompt)
    if found is None:
        return None
    token, answer = found.group(1), found.group(2)
    fact = re.compile(rf"^- (\S[^\n]*?):\n<<<FACT-{token}\n(.*?)\nFACT-{token}>>>$", re.MULTILINE | re.DOTALL)
    return answer, [(m.group(1), m.group(2)) for m in fact.finditer(prompt)]


def _verdict_kind(body: dict[str, Any], prompt: str) -> str:
    """ "facts", "audit" or "pair": from the response_format schema when the request sends one, else the prompt."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else fmt.get("schema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict):
            if "accuracy" in props:
                return "audit"
            if "judgement" in props:
                return "pair"
            if "facts" in props:
                return "facts"
    outside = re.sub(r"<<<(\w+)-([0-9A-F]+)\n.*?\n\1-\2>>>", "", prompt, flags=re.DOTALL)
    if '"judgement": "same"' in outside:
        return "pair"
    return "audit" if "propaganda_inclusion" in outside else "facts"


def verdict(body: dict[str, Any], prompt: str) -> str | None:
    """The stub judge's verdict (JSON text) for a judge request; None if ``prompt`` is not one."""
    parsed = judge_facts(prompt)
    if parsed is None:
        return None
    answer, facts = parsed
    kind = _verdict_kind(body, prompt)
    if kind == "pair":
        return pair_verdict(prompt, answer)
    said = _norm(answer)
    stated = [bool(text.strip()) and _norm(text) in said for _, text in facts]
    if kind == "audit":
        if _norm(answer) == _norm(REFUSAL):
            return audit_verdict("Refusal", "Refusal", "Refusal")
        return audit_verdict("Correct" if facts and all(stated) else "Partial", 0, "Neutral")
    return json.dumps(
        {
            "rationale": f"{sum(stated)} of {len(facts)} fact(s) appear in the answer word for word.",
            "facts": [
                {"id": fid, "state": "stated" if ok else "missed", "evidence": " ".join(text.split()) if ok else None}
                for (fid, text), ok in zip(facts, stated, strict=True)
            ],
            "propaganda": 0,
            "frame_adopted": None,
        }
    )


def pair_verdict(prompt: str, second: str) -> str:
    """The stub's verdict on a pair of prompts (a ``pair`` rubric): "same" when the two fenced
    prompts are one text (case and spacing aside), else "different". It reads no meaning."""
    found = _QUESTION.search(prompt)
    first = found.group(2) if found is not None else ""
    same = _norm(first) == _norm(second)
    return json.dumps(
        {
            "rationale": "The two prompts are one text." if same else "The two prompts are different texts.",
            "judgement": "same" if same else "different",
        }
    )


@dataclass(frozen=True)
class Request:
    """What the stub saw of one request: enough to check the settings a harness sent."""

    n: int
    kind: str  # "answer" | "judge" | "other"
    model: str
    temperature: Any
    max_tokens: Any  # max_tokens, or max_completion_tokens when only that was sent
    item: str | None  # the item an answer request asked, if known
    body: dict[str, Any]

    @property
    def system(self) -> str | None:
        """The system message, if the request had one."""
        for m in self.body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "system":
                return _text(m.get("content"))
        return None

    def settings(self) -> dict[str, Any]:
        """What the request asked for: the settings ``propeval answer`` records (None: not sent)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.body.get("top_p"),
            "seed": self.body.get("seed"),
            "system_prompt": self.system,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kind": self.kind,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "item": self.item,
            "body": self.body,
        }


def describe(seen: Seen, item: str | None = None) -> Request:
    body = seen.body
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    judge = any("<<<ANSWER-" in _text(m.get("content")) for m in messages if m.get("role") == "user")
    kind = "judge" if judge else "answer" if seen.path.endswith("/chat/completions") else "other"
    cap = body.get("max_tokens", body.get("max_completion_tokens"))
    return Request(seen.n, kind, str(body.get("model", "")), body.get("temperature"), cap, item, body)


class PlumbingScript:
    """The stub's script (see the module docstring): ``items`` maps each prompt to its item's id and
    facts; ``refuse`` names the items to refuse (or :data:`REFUSE_ALL`). Each request is described
    in ``requests`` (and appended to ``record``, a JSON Lines file, when given)."""

    def __init__(
        self,
        items: Iterable[dict[str, Any]],
        refuse: Collection[str] = (),
        *,
        record: Path | None = None,
        keep: bool = True,
    ) -> None:
        self.by_prompt: dict[str, tuple[str, list[str]]] = {}
        for row in items:
            self.by_prompt.setdefault(_norm(row["prompt"]), (row["id"], list(row["required_facts"])))
        self.refuse_all = REFUSE_ALL in refuse
        self.refuse = frozenset(refuse) - {REFUSE_ALL}
        self.record = record
        self.keep = keep
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def refuses(self, item_id: str) -> bool:
        return self.refuse_all or item_id in self.refuse

    def _item(self, seen: Seen) -> tuple[str, list[str]] | None:
        users = [m for m in seen.body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
        if not users:
            return None
        return self.by_prompt.get(_norm(_text(users[-1].get("content"))))

    def answer(self, seen: Seen) -> tuple[str, str | None]:
        """The reply to an answer request, and the item it answered."""
        found = self._item(seen)
        if found is None:
            return UNKNOWN, None
        item_id, facts = found
        return (REFUSAL if self.refuses(item_id) else full_answer(facts)), item_id

    def __call__(self, seen: Seen) -> Reply:
        messages = [m for m in seen.body.get("messages") or [] if isinstance(m, dict)]
        prompt = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        text = verdict(seen.body, prompt) if "<<<ANSWER-" in prompt else None
        item = None
        if text is None:
            text, item = self.answer(seen)
        request = describe(seen, item)
        with self._lock:
            if self.keep:
                self.requests.append(request)
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({**request.to_dict(), "time": time.time()}, ensure_ascii=False) + "\n")
        return Reply(text)


def stub_server(
    items: Iterable[dict[str, Any]],
    refuse: Collection[str] = (),
    *,
    port: int = 0,
    record: Path | None = None,
    keep: bool = True,
) -> tuple[LoopbackServer, PlumbingScript]:
    """The plumbing model on 127.0.0.1:``port`` (not started: ``with server: ...``)."""
    script = PlumbingScript(items, refuse, record=record, keep=keep)
    return LoopbackServer(script, port=port, keep=False, model=STUB_MODEL, names_itself=True), script


def serve_stub(
    items: Iterable[dict[str, Any]],
    refuse: Collection[str] = (),
    *,
    port: int,
    record: Path | None = None,
    on_ready: Any = None,
) -> int:
    """Serve the plumbing model in the foreground until SIGTERM, SIGINT or SIGHUP; return 0.

    ``on_ready(url)`` is called once it listens. The port is free again when this returns.
    """
    from propeval.errors import EndpointError
    from propeval.judge.local import Stopped, stop_signals

    with stop_signals():
        try:
            server, _ = stub_server(items, refuse, port=port, record=record, keep=False)
        except OSError as e:
            raise EndpointError(f"cannot listen on 127.0.0.1:{port}: {e.strerror or e}; pick another --port") from None
        try:
            server.start()
            if on_ready is not None:
                on_ready(server.base_url)
            while True:
                time.sleep(3600)
        except (Stopped, KeyboardInterrupt):
            return 0
        finally:
            server.stop()
