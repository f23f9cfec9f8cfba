"""What a set of graded runs can be compared on, and the pitfalls that make a comparison unfair.

`score` and `report` put runs side by side. Before they do, this module reads what produced each
run (from ``run.json``, the answer records and the grade records) and says:

* **refusals**: runs graded by different judges, judge settings or rubric versions do not share
  one comparison table (a different judge gives different absolute numbers); ``--allow-mixed``
  shows them side by side, each labelled with its judge group;
* **flags**: answer sampling settings that differ between runs (temperature, top_p, max_tokens,
  reasoning effort, thinking, system prompt, seed), runs whose answers hit the token cap
  (``finish_reason`` length, counted as *truncated*) more than ``truncated_warn_share``, and
  token-usage anomalies the client recorded.

It also holds the per-run figures every kind shares: truncated counts, token totals and cost,
and the split of items by source date against a model's declared knowledge cutoff. Nothing here
imports anything heavy; the bootstrap is :mod:`propeval.judge.bootstrap`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from propeval.judge.kinds.base import Row

# The answer settings a run records (answer.AnswerOptions.settings), in table order.
SAMPLING = ("temperature", "top_p", "max_tokens", "reasoning_effort", "thinking", "system_prompt", "seed")
# What must be equal for two runs to share a comparison table: (field, what it is called).
JUDGE_FIELDS = (("judge", "judge model"), ("judge_settings", "judge settings"), ("rubric", "rubric version"))


def _show(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_show_plain(v)}" for k, v in value.items())
    return str(value)


def _show_plain(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, str) and len(v) > 40:
        return json.dumps(v[:37] + "...", ensure_ascii=False)
    return json.dumps(v, ensure_ascii=False) if isinstance(v, str) else str(v)


def judge_of(grade: Mapping[str, Any]) -> str | None:
    """The judge that gave a grade: its model, or the models of a panel joined with ``+``."""
    panel = grade.get("judges")
    if isinstance(panel, list) and panel:
        models = sorted(str(j.get("model") or j.get("judge_model")) for j in panel if isinstance(j, dict))
        if models:
            return "+".join(models)
    model = grade.get("judge_model")
    return str(model) if isinstance(model, str) and model else None


def _rubric_of(grade: Mapping[str, Any]) -> str | None:
    version, digest = grade.get("rubric_version"), grade.get("rubric_hash")
    if version is None and digest is None:
        return None
    return f"{version} ({str(digest).split(':')[-1][:12]})" if digest else str(version)


def _settings_of(grade: Mapping[str, Any]) -> str | None:
    s = grade.get("judge_settings")
    return _show(s) if isinstance(s, dict) else None


@dataclass
class RunInfo:
    """What produced one graded run, as its files record it."""

    run: str
    model: str
    judge: list[str | None] = field(default_factory=list)  # every distinct value in the grade records
    judge_settings: list[str | None] = field(default_factory=list)
    rubric: list[str | None] = field(default_factory=list)
    sampling: dict[str, Any] = field(default_factory=dict)
    knowledge_cutoff: str | None = None
    answered: int = 0  # items with a final answer
    truncated: int = 0  # of those, how many stopped at max_tokens (finish_reason length)
    tokens: dict[str, int] = field(default_factory=dict)
    judge_tokens: dict[str, list[int]] = field(default_factory=dict)  # judge model -> [prompt, completion]
    cost: float | None = None
    anomalies: int = 0
    judged: int = 0  # grade records that asked a judge (every status but unanswered)
    cached: int = 0  # of those, how many took every verdict from the response cache (cached: true)

    def one(self, name: str) -> str:
        values: list[str | None] = getattr(self, name)
        return " | ".join(_show(v) for v in values) if values else "not recorded"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "model": self.model,
            "judge": self.judge,
            "judge_settings": self.judge_settings,
            "rubric": self.rubric,
            "sampling": self.sampling,
            "knowledge_cutoff": self.knowledge_cutoff,
            "answered": self.answered,
            "truncated": self.truncated,
            "tokens": self.tokens,
            "cost": self.cost,
            "usage_anomalies": self.anomalies,
            "grades": {"judged": self.judged, "from_cache": self.cached},
        }


def _distinct(values: Sequence[str | None]) -> list[str | None]:
    return sorted(set(values), key=lambda v: (v is None, v or ""))


def _add_usage(total: dict[str, int], usage: Any, prefix: str) -> bool:
    """Add one call's recorded usage (already checked by the client) to ``total``; False if none."""
    if not isinstance(usage, dict):
        return False
    for name in ("prompt_tokens", "completion_tokens"):
        v = usage.get(name)
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
            return False
    for name in ("prompt_tokens", "completion_tokens"):
        total[f"{prefix}_{name}"] = total.get(f"{prefix}_{name}", 0) + int(usage[name])
    return True


def describe(
    run: str,
    meta: Mapping[str, Any],
    rows: Sequence[Row],
    *,
    cutoffs: Mapping[str, str] | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> RunInfo:
    """Read what produced one run from its ``run.json`` (``meta``) and its rows.

    ``cutoffs`` (model -> knowledge cutoff, from the endpoints of the config) is used when the
    run did not record one; ``prices`` (model -> [input, output] per 1M tokens) gives the cost.
    """
    models = sorted({r.model for r in rows}) or [str(meta.get("model") or "?")]
    info = RunInfo(run, "+".join(models))
    grades = [r.grade for r in rows if r.grade is not None]
    info.judge = _distinct([judge_of(g) for g in grades if g.get("status") != "unanswered"]) if grades else []
    info.judge_settings = _distinct([_settings_of(g) for g in grades if g.get("status") != "unanswered"])
    info.rubric = _distinct([_rubric_of(g) for g in grades])
    asked = [g for g in grades if g.get("status") != "unanswered"]
    info.judged = len(asked)
    info.cached = sum(g.get("cached") is True for g in asked)
    recorded = meta.get("settings")
    if not isinstance(recorded, dict):
        given = [r.answer["settings"] for r in rows if r.answer and isinstance(r.answer.get("settings"), dict)]
        recorded = given[0] if given else {}
    info.sampling = {k: recorded.get(k) for k in SAMPLING}
    cutoff = meta.get("knowledge_cutoff")
    if not isinstance(cutoff, str) or not cutoff:
        cutoff = (cutoffs or {}).get(info.model)
    info.knowledge_cutoff = cutoff or None
    # without_usage: the server sent no usable usage (flagged); unrecorded: the record predates
    # usage recording (an older run; its tokens are unknown, not an anomaly)
    tokens: dict[str, int] = {"answer_calls": 0, "answer_calls_without_usage": 0, "answer_calls_unrecorded": 0}
    tokens["judge_calls"] = 0
    tokens.update(answer_prompt_tokens=0, answer_completion_tokens=0, judge_prompt_tokens=0, judge_completion_tokens=0)
    for r in rows:
        a = r.answer or {}
        if a.get("status") in ("answered", "unanswered"):
            info.answered += 1
            info.truncated += a.get("finish_reason") == "length"
            tokens["answer_calls"] += 1
            if "usage" not in a:
                tokens["answer_calls_unrecorded"] += 1
            elif not _add_usage(tokens, a.get("usage"), "answer"):
                tokens["answer_calls_without_usage"] += 1
            anomalies = a.get("anomalies")
            info.anomalies += len(anomalies) if isinstance(anomalies, list) else 0
        for judge, calls in _judge_calls(r.grade or {}):
            for u in calls:
                tokens["judge_calls"] += 1
                before = (tokens.get("judge_prompt_tokens", 0), tokens.get("judge_completion_tokens", 0))
                if _add_usage(tokens, u, "judge"):
                    got = info.judge_tokens.setdefault(judge, [0, 0])
                    got[0] += tokens["judge_prompt_tokens"] - before[0]
                    got[1] += tokens["judge_completion_tokens"] - before[1]
    info.tokens = tokens
    if prices is not None:
        info.cost = _cost(info, grades, prices)
    return info


def _judge_calls(grade: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """(judge model, the usage of each of its calls) of a grade record: its own calls, and each
    panel judge's (``judges``)."""
    out: list[tuple[str, list[Any]]] = []
    own = grade.get("usage")
    if isinstance(own, list) and own:
        out.append((str(grade.get("judge_model")), own))
    panel = grade.get("judges")
    if isinstance(panel, list):
        for j in panel:
            if isinstance(j, dict) and isinstance(j.get("usage"), list):
                out.append((str(j.get("judge_model")), j["usage"]))
    return out


def _cost(
    info: RunInfo, grades: Sequence[Mapping[str, Any]], prices: Mapping[str, tuple[float, float]]
) -> float | None:
    """Answer tokens at the answer model's price plus judge tokens at the judge's; None when a
    price is missing (a partial cost would pass for the whole)."""
    t = info.tokens
    total = 0.0
    if t["answer_calls"]:
        if info.model not in prices:
            return None
        p_in, p_out = prices[info.model]
        total += (t["answer_prompt_tokens"] * p_in + t["answer_completion_tokens"] * p_out) / 1e6
    for judge, (prompt, completion) in info.judge_tokens.items():
        if judge not in prices:
            return None
        p_in, p_out = prices[judge]
        total += (prompt * p_in + completion * p_out) / 1e6
    return total


# --------------------------------------------------------------------------- comparability


@dataclass
class Comparison:
    """What `score` or `report` may put in one table: ``refusals`` stop it (unless allowed),
    ``flags`` are printed with it; ``groups`` labels each run's judge group (J1, J2, ...) and
    ``settings_groups`` its sampling settings (S1, S2, ...)."""

    refusals: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)  # run -> J1
    group_legend: dict[str, str] = field(default_factory=dict)  # J1 -> judge, settings, rubric
    settings_groups: dict[str, str] = field(default_factory=dict)  # run -> S1
    settings_legend: dict[str, dict[str, Any]] = field(default_factory=dict)  # S1 -> settings

    def to_dict(self) -> dict[str, Any]:
        return {
            "refusals": self.refusals,
            "flags": self.flags,
            "judge_groups": self.groups,
            "judge_group_legend": self.group_legend,
            "settings_groups": self.settings_groups,
            "settings_legend": self.settings_legend,
        }


def _names(runs: Sequence[str]) -> str:
    return ", ".join(runs)


def compare(infos: Sequence[RunInfo], *, truncated_warn_share: float) -> Comparison:
    """The refusals and flags of putting ``infos`` in one table."""
    out = Comparison()
    for info in infos:
        for name, label in JUDGE_FIELDS:
            values = getattr(info, name)
            if len(values) > 1:
                out.refusals.append(
                    f"run {info.run} mixes {label}s within itself ({info.one(name)}): its grades came from "
                    f"different {label}s; grade its answers again with one (a copy of the run), or pass --allow-mixed"
                )
    if len(infos) > 1:
        for name, label in JUDGE_FIELDS:
            by_value: dict[str, list[str]] = {}
            for info in infos:
                by_value.setdefault(info.one(name), []).append(info.run)
            if len(by_value) > 1:
                parts = "; ".join(f"{_names(rs)}: {v}" for v, rs in by_value.items())
                out.refusals.append(
                    f"{label} differs between runs ({parts}): a different {label} gives different absolute "
                    "numbers, so these runs do not share one comparison table; grade them alike, or pass "
                    "--allow-mixed to show them side by side, labelled by judge group"
                )
    keys: dict[tuple[str, ...], str] = {}
    for info in infos:
        k = tuple(info.one(n) for n, _ in JUDGE_FIELDS)
        label = keys.setdefault(k, f"J{len(keys) + 1}")
        out.groups[info.run] = label
        out.group_legend[label] = f"judge {k[0]}; judge settings {k[1]}; rubric {k[2]}"
    skeys: dict[str, str] = {}
    for info in infos:
        sk = json.dumps(info.sampling, sort_keys=True)
        label = skeys.setdefault(sk, f"S{len(skeys) + 1}")
        out.settings_groups[info.run] = label
        out.settings_legend[label] = dict(info.sampling)
    if len(skeys) > 1:
        differing = [name for name in SAMPLING if len({json.dumps(i.sampling.get(name)) for i in infos}) > 1]
        detail = "; ".join(
            f"{name}: "
            + ", ".join(f"{label} {_show_plain(out.settings_legend[label].get(name))}" for label in out.settings_legend)
            for name in differing
        )
        out.flags.append(
            f"sampling settings differ between runs ({detail}); settings change scores, and not by the same "
            "amount for every model: compare runs within one settings group (S column)"
        )
    for info in infos:
        if info.answered and info.truncated / info.answered > truncated_warn_share:
            cap = info.sampling.get("max_tokens")
            out.flags.append(
                f"run {info.run}: {info.truncated} of {info.answered} answers "
                f"({100 * info.truncated / info.answered:.1f}%) stopped at the token cap (max_tokens {cap}, "
                f"finish_reason length): cut answers lose facts, and one with no final text scores 0; above the "
                f"{100 * truncated_warn_share:g}% "
                "truncated_warn_share: answer again with a larger cap (--max-tokens, or the endpoint's max_tokens)"
            )
        if info.anomalies:
            out.flags.append(
                f"run {info.run}: the server's replies had {info.anomalies} usage or finish_reason anomal"
                f"{'y' if info.anomalies == 1 else 'ies'} (see the answers' anomalies field); token counts may be short"
            )
        if info.tokens.get("answer_calls_without_usage"):
            out.flags.append(
                f"run {info.run}: {info.tokens['answer_calls_without_usage']} answer call(s) recorded no usable token "
                "usage; its token totals and cost leave them out"
            )
    return out


# --------------------------------------------------------------------------- knowledge cutoff
