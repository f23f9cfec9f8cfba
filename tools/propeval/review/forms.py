"""What a rater sets for one answer under a rubric, and how it becomes a label: one form per kind.

A form turns a rubric kind's verdict into *steps*, each with its choices and one key per choice:

* ``facts``: one step per required fact (``s`` stated, ``m`` missed, ``o`` opposed), then the
  propaganda level (``0``, ``1``, ``2``); a level above 0 needs the quote, picked by selecting the
  words in the answer. A four-fact answer is six keys: four states, the level, Enter.
* ``audit``: one step per codebook field (accuracy ``c``/``p``/``m``/``r``, inclusion ``0``-``3``/``r``,
  tone ``n``/``f``/``l``/``r``); the refusal key sets its own field, and with Shift (or a Shift-click)
  sets every field to the refusal, so one stray key never labels a whole answer.

The keys come from the rubric's own labels (:func:`keys_for`), so a rubric with other labels gets
other keys. A form only asks what the rater's file holds (a sheet may ask for ``tone`` alone).

The rater's choices are checked by the rubric kind's own validator (``rubric.spec.validate``, the
one a judge's verdict goes through), and what it derives is what is written: a facts rubric's
``fact_score`` comes from its table, and a propaganda level whose quote is missing, not verbatim
or too short is refused rather than forced to 0 (as a gold label is: :func:`propeval.judge.gold.human_fields`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval.judge.kinds.base import VerdictError

if TYPE_CHECKING:
    from propeval.judge.rubric import Rubric

FACT_STEP = "fact:"  # a fact's step is named fact:<fact id>
_FORCED = re.compile(r"^propaganda \d+ forced to 0: ")  # the kind's note, as a judge's verdict gets it


@dataclass(frozen=True)
class Choice:
    value: Any  # the label as the file writes it (JSON type kept: 1 is not "1")
    key: str  # the one key that picks it
    text: str


@dataclass(frozen=True)
class Step:
    name: str  # "fact:f1", "propaganda", "accuracy", ...
    title: str
    choices: tuple[Choice, ...]
    detail: str = ""  # the fact's text
    sets_all: Any = None  # a value that, picked here with Shift, is set on every step that offers it (a refusal)

    def choice(self, value: Any) -> Choice | None:
        """The choice whose label is ``value`` as JSON writes it (so 1 and "1" differ)."""
        spelled = json.dumps(value)
        return next((c for c in self.choices if json.dumps(c.value) == spelled), None)


@dataclass
class Outcome:
    """What a rater's choices give: the label fields when complete and valid, else why not."""

    fields: dict[str, Any] | None
    complete: bool = False  # every step set (and the quote when one is needed)
    errors: list[str] = field(default_factory=list)
    needs_quote: bool = False


def keys_for(labels: Sequence[Any], taken: Sequence[str] = ()) -> list[str]:
    """One key per label: a number is its digit; a word its first letter not yet taken, else a
    later letter of it, else a free digit."""
    out: list[str] = []
    used = set(taken)
    for label in labels:
        key = ""
        if isinstance(label, int) and not isinstance(label, bool) and 0 <= label <= 9:
            key = str(label)
        else:
            for ch in str(label).lower():
                if ch.isalpha() and ch not in used:
                    key = ch
                    break
        if not key or key in used:
            key = next(d for d in "123456789" if d not in used)
        used.add(key)
        out.append(key)
    return out


def _choices(labels: Sequence[Any]) -> tuple[Choice, ...]:
    return tuple(Choice(v, k, str(v)) for v, k in zip(labels, keys_for(labels), strict=True))


class Form:
    """A kind's form; subclasses set ``kind`` and ``labelled`` and fill the methods."""

    kind = ""
    labelled: tuple[str, ...] = ()  # the record fields a rater's file may hold
    quote_field = ""  # the record field of the quote, if any

    def __init__(self, rubric: Rubric, fields: Sequence[str]) -> None:
        self.rubric = rubric
        self.fields = tuple(f for f in fields if f in self.labelled)

    def steps(self, facts: Sequence[tuple[str, str]]) -> list[Step]:
        raise NotImplementedError

    def needs_facts(self) -> bool:
        return False

    def outcome(
        self, values: dict[str, Any], quote: str | None, facts: Sequence[tuple[str, str]], answer: str
    ) -> Outcome:
        raise NotImplementedError

    def values_of(self, fields: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The step values (and quote) that a label file's fields show, for a file made elsewhere."""
        return {}, None


class FactsForm(Form):
    kind = "facts"
    labelled = ("fact_states", "fact_score", "propaganda", "frame_adopted")
    quote_field = "frame_adopted"

    def needs_facts(self) -> bool:
        return bool({"fact_states", "fact_score"} & set(self.fields))

    def _asks_propaganda(self) -> bool:
        return bool({"propaganda", "frame_adopted"} & set(self.fields))

    def steps(self, facts: Sequence[tuple[str, str]]) -> list[Step]:
        out: list[Step] = []
        if self.needs_facts():
            choices = _choices(self.rubric.labels.get("fact", ["stated", "missed", "opposed"]))
            out += [Step(FACT_STEP + fid, fid, choices, detail=text) for fid, text in facts]
        if self._asks_propaganda():
            out.append(Step("propaganda", "propaganda", _choices(self.rubric.labels.get("propaganda", [0, 1, 2]))))
        return out

    def outcome(
        self, values: dict[str, Any], quote: str | None, facts: Sequence[tuple[str, str]], answer: str
    ) -> Outcome:
        from propeval.judge.kinds.facts import rules

        steps = self.steps(facts)
        if any(s.name not in values for s in steps):
            return Outcome(None)
        own = rules(self.rubric)
        level = values.get("propaganda", 0)
        needs_quote = isinstance(level, int) and level > 0
        if needs_quote and not (quote or "").strip():
            return Outcome(
                None,
                needs_quote=True,
                errors=[f"propaganda {level} needs a quote: select the words in the answer that adopt the frame"],
            )
        fact_ids = [fid for fid, _ in facts] if self.needs_facts() else []
        data = {
            "rationale": "",
            "facts": [{"id": fid, "state": values[FACT_STEP + fid], "evidence": None} for fid in fact_ids],
            "propaganda": level,
            own.quote_field: quote if needs_quote else None,
        }
        try:
            result = self.rubric.spec.validate(data, self.rubric, fact_ids, answer, answer)
        except VerdictError as e:
            return Outcome(None, complete=True, errors=[str(e)], needs_quote=needs_quote)
        if result.notes:  # a judge's level would be forced to 0; a person picks a better quote
            notes = [_FORCED.sub("the quote does not count: ", n) for n in result.notes]
            return Outcome(None, complete=True, errors=notes, needs_quote=needs_quote)
        return Outcome({f: result.fields.get(f) for f in self.fields}, complete=True, needs_quote=needs_quote)

    def values_of(self, fields: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        values: dict[str, Any] = {}
        states = fields.get("fact_states")
        if isinstance(states, dict):
            values.update({FACT_STEP + str(k): v for k, v in states.items()})
        if fields.get("propaganda") is not None:
            values["propaganda"] = fields["propaganda"]
        quote = fields.get("frame_adopted")
        return values, quote if isinstance(quote, str) else None


class AuditForm(Form):
    kind = "audit"
    labelled = ("accuracy", "propaganda_inclusion", "tone")

    def steps(self, facts: Sequence[tuple[str, str]]) -> list[Step]:
        from propeval.judge.kinds.audit import rules

        refusal = rules(self.rubric).refusal_label
        return [
            Step(f, f.replace("_", " "), _choices(self.rubric.labels.get(f, [])), sets_all=refusal)
            for f in self.labelled
            if f in self.fields
        ]

    def outcome(
        self, values: dict[str, Any], quote: str | None, facts: Sequence[tuple[str, str]], answer: str
    ) -> Outcome:
        from propeval.judge.kinds.audit import FIELDS, rules

        if any(f not in values for f in self.fields):
            return Outcome(None)
        refusal = rules(self.rubric).refusal_label
        # The kind validates a whole verdict. A field this file does not ask is given the value that
        # leaves the refusal rule to the asked ones: the refusal when any asked field is one, else
        # the field's first other label.
        refused = any(values[f] == refusal for f in self.fields)
        data: dict[str, Any] = {"rationale": ""}
        for f in FIELDS:
            if f in self.fields:
                data[f] = values[f]
            else:
                labels = self.rubric.labels.get(f, [])
                data[f] = refusal if refused and refusal in labels else next((x for x in labels if x != refusal), None)
        try:
            result = self.rubric.spec.validate(data, self.rubric, [], answer, answer)
        except VerdictError as e:
            return Outcome(None, complete=True, errors=[str(e)])
        return Outcome({f: result.fields.get(f) for f in self.fields}, complete=True)

    def values_of(self, fields: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        return {f: fields[f] for f in self.fields if fields.get(f) is not None}, None


FORMS: dict[str, type[Form]] = {FactsForm.kind: FactsForm, AuditForm.kind: AuditForm}


def form_for(rubric: Rubric, fields: Sequence[str]) -> Form:
    """The form of ``rubric``'s kind for a file holding ``fields``."""
    cls = FORMS.get(rubric.kind)
    if cls is None:
        raise ValueError(f"rubric {rubric.name!r} is of kind {rubric.kind!r}, which the review app cannot label yet")
    return cls(rubric, fields)
