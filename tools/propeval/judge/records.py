"""The records of a run, typed: a model's reply (:class:`AnswerRecord`) and a judge's verdict on it
(:class:`GradeRecord`; a panel's record holds a :class:`JudgeRecord` per judge). The ledger's
record, which a maintainer signs, is :class:`propeval.ledger.records.LedgerRecord`.

``propeval answer`` and ``propeval grade`` build these and append ``to_json()``; ``from_json``
reads one back from a parsed line and refuses what does not fit (:class:`RecordError`, naming the
field). ``to_json`` writes the keys in the order propeval has always written them (RUNS.md), so a
run file is byte for byte what the dict-built records of earlier versions made:
``tests/judge/test_run_records.py`` holds this against committed files of those bytes.

The verdict's fields are the rubric kind's (``Kind.record_fields``, always present, null before a
verdict) and any other field its verdict adds (a facts verdict's ``propaganda_judged``); they stay a
mapping, since each kind owns its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from propeval.errors import RecordError

AnswerStatus = Literal["answered", "unanswered", "error"]
GradeStatus = Literal["scored", "unscored", "unanswered", "error"]
ANSWER_STATUSES: tuple[AnswerStatus, ...] = ("answered", "unanswered", "error")
GRADE_STATUSES: tuple[GradeStatus, ...] = ("scored", "unscored", "unanswered", "error")
Json = dict[str, Any]


def _take(d: Mapping[str, Any], key: str, kind: type | tuple[type, ...], *, optional: bool = False) -> Any:
    if key not in d:
        if optional:
            return None
        raise RecordError(f"the record has no {key!r}")
    value = d[key]
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
        raise RecordError(f"{key!r} is {value!r}; expected {_names(kind)}{' or null' if optional else ''}")
    return value


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _names(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object"}
    return " or ".join(names.get(t, t.__name__) for t in _types(kind))


# --------------------------------------------------------------------------- answers


@dataclass
class AnswerRecord:
    """One line of ``answers.jsonl``: what the model answered to one item, or why it could not."""

    item_id: str
    claim_id: str | None
    model: str
    item_hash: str | None
    claim_hash: str | None
    item: Json  # the item's language, framing, question type, categories and source date
    settings: Json  # every sampling setting of the run (None: not sent)
    status: AnswerStatus = "error"
    answer: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    attempts: int = 0
    truncated: bool = False  # a reply only: the server stopped at max_tokens
    usage: Json | None = None  # a reply only: its checked token usage
    raw: str | None = None  # an error only: the start of what the server sent
    anomalies: list[Any] = field(default_factory=list)  # a reply only, written when any
    cut: str | None = None  # a reply only, written when the client cut it
    # a reply only, written when the server named another model than ``model`` (the one asked):
    # who answered, as the server says (the plumbing stub names itself propeval-stub)
    served_model: str | None = None
    created: str = ""

    def to_json(self) -> Json:
        out: Json = {
            "item_id": self.item_id,
            "claim_id": self.claim_id,
            "model": self.model,
            "item_hash": self.item_hash,
            "claim_hash": self.claim_hash,
            "item": self.item,
            "settings": self.settings,
            "status": self.status,
            "answer": self.answer,
            "error": self.error,
            "finish_reason": self.finish_reason,
        }
        if self.status == "error":
            out.update(attempts=self.attempts, raw=self.raw)
        else:
            out.update(truncated=self.truncated, usage=self.usage, attempts=self.attempts)
            if self.anomalies:
                out["anomalies"] = self.anomalies
            if self.cut is not None:
                out["cut"] = self.cut
            if self.served_model is not None and self.served_model != self.model:
                out["served_model"] = self.served_model
        out["created"] = self.created
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AnswerRecord:
        status = d.get("status")
        if status not in ANSWER_STATUSES:
            raise RecordError(f"'status' is {status!r}; expected one of {', '.join(ANSWER_STATUSES)}")
        error = status == "error"
        return cls(
            item_id=_take(d, "item_id", str),
            claim_id=_take(d, "claim_id", str, optional=True),
            model=_take(d, "model", str),
            item_hash=_take(d, "item_hash", str, optional=True),
            claim_hash=_take(d, "claim_hash", str, optional=True),
            item=_take(d, "item", dict),
            settings=_take(d, "settings", dict),
            status=cast(AnswerStatus, status),
            answer=_take(d, "answer", str, optional=True),
            error=_take(d, "error", str, optional=True),
            finish_reason=_take(d, "finish_reason", str, optional=True),
            attempts=_take(d, "attempts", int),
            truncated=False if error else _take(d, "truncated", bool),
            usage=None if error else _take(d, "usage", dict, optional=True),
            raw=_take(d, "raw", str, optional=True) if error else None,
            anomalies=[] if error else list(_take(d, "anomalies", list, optional=True) or []),
            cut=None if error else _take(d, "cut", str, optional=True),
            served_model=None if error else _take(d, "served_model", str, optional=True),
            created=_take(d, "created", str),
        )


# --------------------------------------------------------------------------- grades

Usage = dict[str, int] | None


@dataclass
class Verdict:
    """What one judge's grading loop (:func:`propeval.judge.grade.grade_answer`) fills in: the
    harness adapters use it as it is; :class:`JudgeRecord` and :class:`GradeRecord` add who judged."""

    fields: Json  # the rubric kind's record_fields, in its order (null before a verdict)
    more: Json = field(default_factory=dict)  # any other field a verdict adds (propaganda_judged)
    prompt_hash: str | None = None
    attempts: int = 0
    status: GradeStatus | None = None  # None: not graded yet
    verdict: Any = None
    reason: str | None = None
    raw: str | None = None
    cached: bool | None = None  # None: not recorded (an unanswered item asks no judge)

    @classmethod
    def empty(cls, record_fields: tuple[str, ...]) -> Verdict:
        return cls(dict.fromkeys(record_fields))

    def set_fields(self, values: Mapping[str, Any]) -> None:
        """The verdict's fields: each of the kind's is set in place, any other is kept after them."""
        for k, v in values.items():
            (self.fields if k in self.fields else self.more)[k] = v

    def get(self, key: str) -> Any:
        """A verdict field by name (the kind's, or another the verdict added)."""
        return self.fields[key] if key in self.fields else self.more.get(key)

    def _loop_json(self) -> Json:
        out: Json = dict(self.fields)
        if self.cached is not None:
            out["cached"] = self.cached
        out.update(self.more)
        out.update(status=self.status, verdict=self.verdict, reason=self.reason, raw=self.raw)
        return out

    def to_json(self) -> Json:
        """The grading loop's fields as the harness adapters read them."""
        return {"prompt_hash": self.prompt_hash, "attempts": self.attempts, **self._loop_json()}

    @classmethod
    def _read(cls, d: Mapping[str, Any], record_fields: tuple[str, ...], known: frozenset[str]) -> Verdict:
        status = d.get("status")
        if status not in GRADE_STATUSES:
            raise RecordError(f"'status' is {status!r}; expected one of {', '.join(GRADE_STATUSES)}")
        cached = d.get("cached")
        if cached is not None and not isinstance(cached, bool):
            raise RecordError(f"'cached' is {cached!r}; expected true or false")
        return cls(
            fields={k: d.get(k) for k in record_fields},
            more={k: v for k, v in d.items() if k not in known and k not in record_fields},
            prompt_hash=_take(d, "prompt_hash", str, optional=True),
            attempts=_take(d, "attempts", int),
            status=cast(GradeStatus, status),
            verdict=d.get("verdict"),
            reason=_take(d, "reason", str, optional=True),
            raw=_take(d, "raw", str, optional=True),
            cached=cached,
        )


_LOOP_KEYS = frozenset({"prompt_hash", "attempts", "usage", "cached", "status", "verdict", "reason", "raw"})
_JUDGE_KEYS = _LOOP_KEYS | {"endpoint", "judge_model", "base_url"}
_GRADE_KEYS = _LOOP_KEYS | {
    "item_id",
    "model",
    "rubric",
    "rubric_version",
    "rubric_hash",
    "judge_model",
    "judge_settings",
    "judges",
    "panel",
    "created",
}


@dataclass
class JudgeRecord:
    """One judge of a panel: its endpoint and its own verdict (kept in the panel's record)."""

    endpoint: str
    judge_model: str
    base_url: str
    verdict: Verdict
    usage: list[Usage] = field(default_factory=list)  # this judge's calls

    def to_json(self) -> Json:
        v = self.verdict
        return {
            "endpoint": self.endpoint,
            "judge_model": self.judge_model,
            "base_url": self.base_url,
            "prompt_hash": v.prompt_hash,
            "attempts": v.attempts,
            "usage": self.usage,
            **v._loop_json(),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any], record_fields: tuple[str, ...]) -> JudgeRecord:
        return cls(
            endpoint=_take(d, "endpoint", str),
            judge_model=_take(d, "judge_model", str),
            base_url=_take(d, "base_url", str),
            verdict=Verdict._read(d, record_fields, _JUDGE_KEYS),
            usage=list(_take(d, "usage", list)),
        )


@dataclass
class GradeRecord:
    """One line of ``grades-<rubric>.jsonl``: the verdict on one answer, of one judge or a panel."""

    item_id: str
    model: str | None  # the answer's model
    rubric: str
    rubric_version: Any
    rubric_hash: str
    judge_model: str  # the model, or panel(m1, m2, ...)
    judge_settings: Json
    verdict: Verdict
    usage: list[Usage] = field(default_factory=list)  # each judge call's checked token usage
    judges: list[JudgeRecord] | None = None  # a panel's judges (None: one judge)
    panel: Json | None = None  # a panel's size, how many scored, its rule and its ties
    created: str = ""

    @property
    def status(self) -> GradeStatus | None:
        return self.verdict.status

    def to_json(self) -> Json:
        v = self.verdict
        out: Json = {
            "item_id": self.item_id,
            "model": self.model,
            "rubric": self.rubric,
            "rubric_version": self.rubric_version,
            "rubric_hash": self.rubric_hash,
            "judge_model": self.judge_model,
            "judge_settings": self.judge_settings,
            "prompt_hash": v.prompt_hash,
            "attempts": v.attempts,
            "usage": self.usage,
        }
        if self.judges is None:
            out.update(v._loop_json())
        else:  # a panel: its judges and its tally, then the combined verdict
            out.update(v.fields)
            out["judges"] = [j.to_json() for j in self.judges]
            if v.cached is not None:
                out["cached"] = v.cached
            out["panel"] = self.panel
            out.update(v.more)
            out.update(status=v.status, verdict=v.verdict, raw=v.raw, reason=v.reason)
        out["created"] = self.created
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any], record_fields: tuple[str, ...]) -> GradeRecord:
        """A grade record, its verdict fields those of the rubric kind's ``record_fields``."""
        judges = d.get("judges")
        if judges is not None and not isinstance(judges, list):
            raise RecordError(f"'judges' is {judges!r}; expected a list")
        return cls(
            item_id=_take(d, "item_id", str),
            model=_take(d, "model", str, optional=True),
            rubric=_take(d, "rubric", str),
            rubric_version=d.get("rubric_version"),
            rubric_hash=_take(d, "rubric_hash", str),
            judge_model=_take(d, "judge_model", str),
            judge_settings=_take(d, "judge_settings", dict),
            verdict=Verdict._read(d, record_fields, _GRADE_KEYS),
            usage=list(_take(d, "usage", list)),
            judges=None if judges is None else [JudgeRecord.from_json(j, record_fields) for j in judges],
            panel=_take(d, "panel", dict, optional=True),
            created=_take(d, "created", str),
        )
