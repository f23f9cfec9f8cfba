"""The rater's guidelines, read from the rubric's own files: the judge's instructions (the prompt
template's sections between its first heading and the fenced material) and a few of its gold cases
as examples. One source for the judge and the rater: a rubric that changes a definition changes
what both read.

Only the definitions are taken: the template's placeholders (``${...}``), its fence rules and its
reply format are for the model and never shown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric

MAX_EXAMPLES = 4
MAX_EXAMPLE_CHARS = 400
_TERM = re.compile(r'^-\s+"?([^":]{1,40})"?:\s*(.*)$')
_END = ("Untrusted text is fenced", "Reply with")


@dataclass
class Block:
    lead: str = ""  # the paragraph before the definitions ("tone:", "Then score propaganda:")
    terms: list[tuple[str, str]] = field(default_factory=list)  # (label, its definition)
    note: str = ""  # what follows the definitions


@dataclass
class Example:
    note: str
    question: str
    answer: str
    label: str


@dataclass
class Guide:
    rubric: str
    blocks: list[Block]
    examples: list[Example]


def _blocks(template: str) -> list[Block]:
    lines = template.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ")), None)
    if start is None:
        return []
    out: list[Block] = []
    block = Block()
    for line in lines[start + 1 :]:
        if line.startswith("## ") or line.startswith(_END):
            break
        if not line.strip():
            if block.lead or block.terms:
                out.append(block)
            block = Block()
            continue
        term = _TERM.match(line)
        if term:
            block.terms.append((term.group(1).strip(), term.group(2).strip()))
        elif line.startswith("- "):
            block.terms.append(("", line[2:].strip()))
        elif line.startswith(" ") and block.terms:
            label, text = block.terms[-1]
            block.terms[-1] = (label, f"{text} {line.strip()}")
        elif block.terms:
            block.note = f"{block.note} {line.strip()}".strip()
        else:
            block.lead = f"{block.lead} {line.strip()}".strip()
    if block.lead or block.terms:
        out.append(block)
    return [b for b in out if "${" not in b.lead + b.note and all("${" not in t for _, t in b.terms)]


def _label_text(label: Any) -> str:
    if not isinstance(label, dict):
        return ""
    parts = []
    for k, v in label.items():
        if k == "facts" and isinstance(v, list):
            parts.append(", ".join(f"{f.get('id')} {f.get('state')}" for f in v if isinstance(f, dict)))
        elif v is not None:
            parts.append(f"{k} {v}")
    return "; ".join(parts)


def _examples(gold: Path) -> list[Example]:
    out: list[Example] = []
    seen: set[str] = set()
    try:
        lines = gold.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            case = json.loads(line)
        except ValueError:
            continue
        if not isinstance(case, dict) or not isinstance(case.get("answer"), str):
            continue
        tags = case.get("tags") if isinstance(case.get("tags"), list) else []
        kind = str(tags[0]) if tags else str(case.get("note"))
        if kind in seen:
            continue
        seen.add(kind)
        answer = case["answer"]
        cut = answer if len(answer) <= MAX_EXAMPLE_CHARS else answer[:MAX_EXAMPLE_CHARS] + "…"
        note, question = str(case.get("note") or ""), str(case.get("question") or "")
        out.append(Example(note, question, cut, _label_text(case.get("label"))))
        if len(out) >= MAX_EXAMPLES:
            break
    return out


def guide_for(rubric: Rubric, folder: Path, *, examples: bool) -> Guide:
    """The guidelines of ``rubric`` (its folder ``folder``); ``examples`` from its gold set (never
    while the gold set itself is what is being labelled)."""
    return Guide(rubric.name, _blocks(rubric.template), _examples(folder / "gold.jsonl") if examples else [])
