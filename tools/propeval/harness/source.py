"""What every harness adapter reads: the items and rubrics of a release or a corpus, and the judge.

A *source* is one of:

* a release folder that ``propeval export`` wrote (``items.jsonl`` with ``rubrics/`` beside it);
* an ``items.jsonl`` file, with its rubrics in ``rubrics/`` beside it;
* a corpus root (a folder whose ``pyproject.toml`` has ``[tool.propeval]``): its active items, and
  the rubrics where ``[tool.propeval.judge] rubrics_dir`` says.

Each item becomes a plain dict (JSON-able, so harnesses can store it as sample metadata) with the
fields the judge prompt needs: ``id``, ``prompt``, ``fact_ids``, ``required_facts`` (texts, in
``fact_ids`` order), ``frame_markers`` (``{language, text}``), ``language``, ``framing``,
``question_type``. :func:`case_of` turns it into the judge's :class:`~propeval.judge.grade.Case`,
and every adapter grades with :func:`propeval.judge.grade.grade_answer`: the rubric files, the
score table and the re-ask loop are the ones ``propeval grade`` uses; nothing is copied here. Each
reports a grade's figures as its rubric's kind gives them
(:meth:`propeval.judge.kinds.base.KindView.harness_score`), so no adapter tests a kind's name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from propeval.errors import UsageError
from propeval.judge.prompt import Case
from propeval.judge.rubric import Rubric, load_rubric
from propeval.settings import Endpoint, JudgeSettings, check_url, optional_sampling

ITEMS_FILE = "items.jsonl"
RUBRICS_DIR = "rubrics"
# The fields of a release row the judge prompt needs, with their JSON types.
FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "prompt": str,
    "fact_ids": list,
    "required_facts": list,
    "frame_markers": list,
    "language": str,
    "framing": str,
    "question_type": str,
}
# The judge of the lm-eval and promptfoo adapters (inspect_ai picks its own with --model-role grader=).
ENV_BASE_URL = "PROPEVAL_JUDGE_BASE_URL"
ENV_MODEL = "PROPEVAL_JUDGE_MODEL"
ENV_KEY_ENV = "PROPEVAL_JUDGE_API_KEY_ENV"
ENV_SOURCE = "PROPEVAL_SOURCE"


@dataclass(frozen=True)
class Source:
    """Items and rubrics from one place; ``settings`` is the corpus's ``[tool.propeval.judge]``
    (defaults for a release)."""

    path: Path
    items: list[dict[str, Any]]
    rubrics_dir: Path
    settings: JudgeSettings

    def rubric(self, name: str) -> Rubric:
        return load_rubric(self.rubrics_dir, name, root=self.rubrics_dir.parent)


def _row(path: Path, line: int, data: Any) -> dict[str, Any]:
    where = f"{path}:{line}"
    if not isinstance(data, dict):
        raise UsageError(f"{where}: a row must be a JSON object; is this a propeval release's {ITEMS_FILE}?")
    for name, kind in FIELDS.items():
        if not isinstance(data.get(name), kind):
            raise UsageError(
                f"{where}: field {name!r} is missing or not a {getattr(kind, '__name__', kind)}; "
                f"rows need {', '.join(FIELDS)} (export the release again with `propeval export`)"
            )
    ids, texts = data["fact_ids"], data["required_facts"]
    if len(ids) != len(texts) or not all(isinstance(x, str) for x in [*ids, *texts]):
        raise UsageError(f"{where}: fact_ids and required_facts must be lists of strings of the same length")
    markers = data["frame_markers"]
    if not all(isinstance(m, dict) and isinstance(m.get("text"), str) for m in markers):
        raise UsageError(f"{where}: frame_markers must be objects with a string text")
    return {name: data[name] for name in FIELDS} | {
        "claim_id": data.get("claim_id"),
        "categories": data.get("categories") or [],
    }


def read_items(path: Path) -> list[dict[str, Any]]:
    """The rows of a release's ``items.jsonl`` (machine-written: read with json.loads, checked)."""
    rows = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read it ({e})") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as e:
            raise UsageError(f"{path}:{n}: not JSON ({e}); is this a propeval release's {ITEMS_FILE}?") from None
        rows.append(_row(path, n, data))
    return rows


def corpus_items(root: Path) -> tuple[list[dict[str, Any]], Path, JudgeSettings]:
    from propeval.config import require_corpus
    from propeval.corpus import load_corpus

    config = require_corpus(root)
    corpus = load_corpus(config)
    rows = []
    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        claim = corpus.claim_of(item)
        if claim is None:
            continue
        rows.append(
            {
                "id": item.id,
                "prompt": item.prompt,
                "fact_ids": [f.id for f in claim.facts],
                "required_facts": [f.text for f in claim.facts],
                "frame_markers": [{"language": lang, "text": text} for lang, text in claim.markers],
                "language": item.language,
                "framing": item.framing,
                "question_type": item.question_type,
                "claim_id": item.claim_id,
                "categories": [str(x) for x in claim.data.get("categories") or []],
            }
        )
    settings = config.settings.judge
    return rows, config.root / settings.rubrics_dir, settings


def open_source(path: str | os.PathLike[str] | None = None) -> Source:
    """The release folder, ``items.jsonl`` or corpus root at ``path`` (default ``$PROPEVAL_SOURCE``,
    else the current folder)."""
    where = Path(path if path is not None else os.environ.get(ENV_SOURCE) or ".").expanduser().resolve()
    if where.is_file():
        return Source(where, read_items(where), where.parent / RUBRICS_DIR, JudgeSettings())
    if (where / ITEMS_FILE).is_file():
        return Source(where, read_items(where / ITEMS_FILE), where / RUBRICS_DIR, JudgeSettings())
    if (where / "pyproject.toml").is_file():
        rows, rubrics, settings = corpus_items(where)
        return Source(where, rows, rubrics, settings)
    raise UsageError(
        f"{where} is neither a release (no {ITEMS_FILE}) nor a corpus (no pyproject.toml); "
        "pass a folder that `propeval export` wrote, its items.jsonl, or a corpus root"
    )


def case_of(row: dict[str, Any]) -> Case:
    """The judge's view of one item row."""
    return Case(
        question=row["prompt"],
        facts=list(zip(row["fact_ids"], row["required_facts"], strict=True)),
        markers=[(str(m.get("language") or ""), m["text"]) for m in row["frame_markers"]],
        language=row["language"],
        framing=row["framing"],
        question_type=row["question_type"],
    )


def _thinking(settings: JudgeSettings) -> dict[str, Any] | None:
    if not settings.thinking:
        return None
    return {"chat_template_kwargs": {"enable_thinking": settings.thinking == "on"}}


def inspect_config(settings: JudgeSettings) -> dict[str, Any]:
    """inspect_ai ``GenerateConfig`` fields for the answers (the system prompt is a solver)."""
    out: dict[str, Any] = {"temperature": settings.temperature, "max_tokens": settings.max_tokens}
    out.update(optional_sampling(settings.top_p, settings.seed, settings.reasoning_effort))
    if (extra := _thinking(settings)) is not None:
        out["extra_body"] = extra
    return out


def lm_eval_generation(settings: JudgeSettings) -> dict[str, Any]:
    """lm-evaluation-harness ``generation_kwargs``: its chat-completions models send each key
    (``max_gen_toks`` as ``max_tokens``; anything it does not know, as is)."""
    out: dict[str, Any] = {
        "until": [],
        "do_sample": settings.temperature > 0,
        "temperature": settings.temperature,
        "max_gen_toks": settings.max_tokens,
    }
    # a seed set here goes over lm-eval's own (1234), which it sends otherwise
    out.update(optional_sampling(settings.top_p, settings.seed, settings.reasoning_effort))
    if (extra := _thinking(settings)) is not None:
        out.update(extra)
    return out


def promptfoo_provider(
    settings: JudgeSettings, provider: str, *, base_url: str | None = None, api_key_env: str | None = None
) -> dict[str, Any]:
    """promptfoo's provider entry: ``provider`` (an id such as ``openai:chat:MODEL``) with the
    source's sampling settings, and where the OpenAI-compatible server is (``apiBaseUrl``) and which
    variable holds its key (``apiKeyEnvar``) when given."""
    config: dict[str, Any] = {"temperature": settings.temperature, "max_tokens": settings.max_tokens}
    config.update(optional_sampling(settings.top_p, settings.seed, settings.reasoning_effort))
    if (extra := _thinking(settings)) is not None:
        config["passthrough"] = extra
    if base_url:
        config["apiBaseUrl"] = base_url
    if api_key_env:
        config["apiKeyEnvar"] = api_key_env
    return {"id": provider, "config": config}


def judge_endpoint(settings: JudgeSettings) -> Endpoint:
    """The judge for the lm-eval and promptfoo adapters: ``[tool.propeval.judge] judge_endpoint``
    (the local server for a release), with ``$PROPEVAL_JUDGE_BASE_URL``, ``$PROPEVAL_JUDGE_MODEL``
    and ``$PROPEVAL_JUDGE_API_KEY_ENV`` (the name of the variable holding the key) over it."""
    ep = settings.endpoint(settings.judge_endpoint)
    base_url = os.environ.get(ENV_BASE_URL)
    model = os.environ.get(ENV_MODEL)
    key_env = os.environ.get(ENV_KEY_ENV)
    ep = replace(
        ep,
        name="harness" if base_url else ep.name,
        base_url=base_url or ep.base_url,
        model=model or ep.model,
        api_key_env=ep.api_key_env if key_env is None else key_env,
    )
    check_url(ep)
    return ep


def grade_blocking(source: Source, rubric: Rubric, row: dict[str, Any], answer: str | None) -> dict[str, Any]:
    """Grade one answer with propeval's own client (for harnesses that call a plain function)."""
    import asyncio

    from propeval.judge._engine import make_client
    from propeval.judge.grade import client_completer, grade_answer

    settings = source.settings

    async def run() -> dict[str, Any]:
        client = make_client(judge_endpoint(settings), settings)
        try:
            complete = client_completer(client, settings.judge_temperature, settings.judge_max_tokens)
            verdict = await grade_answer(complete, rubric, case_of(row), answer, settings.max_reasks)
            return verdict.to_json()
        finally:
            await client.aclose()

    return asyncio.run(run())


def __getattr__(name: str) -> Any:
    """An adapter copied by an earlier propeval (``propeval harness ... --out``) imports
    ``item_scores``, which each rubric kind's ``harness_score`` replaced: say how to refresh the copy
    instead of a bare "cannot import name"."""
    if name == "item_scores":
        raise ImportError(
            "this harness adapter was copied by an earlier propeval and imports item_scores, which is gone; "
            "copy it again with this version: propeval harness <inspect|lm-eval|promptfoo> --out DIR"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
