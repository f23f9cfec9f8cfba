"""``propeval retire`` and ``propeval move``: an item leaves the corpus, or joins another claim.

What a maintainer does with a near-duplicate pair besides keeping both (``dedup allow``):

* **retire** one item: ``status: retired`` with a ``retired_reason``. The file stays and the id stays
  taken (ids are never reused); the item is no longer compared, gated, evaluated or exported, and a
  release lists it as a tombstone.
* **move** one item into the other claim, usually as a translation of an item there
  (``translation_of``). The item keeps its id; its file moves to the claim's folder, with
  ``claim_id`` (and ``translation_of``) changed. Its answerability record keeps its name (records are
  named by item id) and is stale from then on: the item is now asked against the other claim's facts.

A move is refused, with the rule it would break, when the result would not check:

* ``translation``: the item named by ``--translation-of`` is not an item of the target claim, or is
  in the same language;
* ``groups-translation-framing``: the moved item's framing or question type differs from its source's;
* ``groups-conflict``: the target claim already has an item in the same language, framing and question
  type (the two are duplicates: retire one instead);
* ``groups-translation-claim``: items of the old claim are translations of the moved item (they would
  point across claims); move or re-point them first.

YAML is edited round-trip (comments and layout kept, :func:`propeval.renumber.edit_yaml`), each new
text must load back strictly to the expected data, and the files are written all or nothing
(:func:`propeval.renumber.write_files`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from propeval import names
from propeval.config import Config
from propeval.corpus import Corpus, Item
from propeval.errors import UsageError
from propeval.renumber import REMOVE, edit_yaml, write_files

if TYPE_CHECKING:
    from propeval.workspace import Workspace

MAX_REASON = 2000  # a sentence or two; a reason is read in review, not a document


_PAST = {"retire": "retired", "move": "moved"}


@dataclass
class CurationResult:
    """What ``retire`` or ``move`` changed (or would change, with ``dry_run``)."""

    action: str  # "retire" | "move"
    item: str
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old relpath, new relpath)
    edited: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summary: str = ""  # what was done, after the verb: "i0042 (questions/c0002/i0042.yaml)"
    written: bool = False

    def lines(self) -> list[str]:
        """The command's output, one line each: what moved, what was edited, notes, the summary."""
        would = not self.written
        out = [f"{'would move' if would else 'moved'} {a} -> {b}" for a, b in self.moved]
        out += [f"{'would edit' if would else 'edited'} {rel}" for rel in self.edited]
        out += [f"note: {n}" for n in self.notes]
        out.append(f"{'would ' + self.action if would else _PAST[self.action]} {self.summary}")
        return out


def _one_item(config: Config, corpus: Corpus, item_id: str, option: str) -> Item:
    names.item_id(item_id, option)
    found = [i for i in corpus.all_items if i.id == item_id]
    if not found:
        raise UsageError(f"no item {item_id!r} under {config.questions_dir}/; give an item id such as i0001")
    if len(found) > 1:
        paths = ", ".join(sorted(i.doc.relpath for i in found))
        raise UsageError(
            f"{len(found)} files have the id {item_id!r} ({paths}); renumber one first (propeval renumber)"
        )
    return found[0]


def _reason(reason: str) -> str:
    text = reason.strip()
    if not text:
        raise UsageError("--reason must say why the item leaves the corpus (it is kept in retired_reason)")
    if len(text) > MAX_REASON:
        raise UsageError(f"--reason is {len(text)} characters; keep it under {MAX_REASON}")
    return text


def _answerability_record(ws: Workspace, item_id: str) -> str | None:
    path = ws.ledger_paths.answerability(item_id)
    return path.relative_to(ws.root).as_posix() if os.path.lexists(path) else None


def retire(ws: Workspace, item_id: str, *, reason: str, dry_run: bool = False) -> CurationResult:
    """Retire the item ``item_id``: ``status: retired`` and ``retired_reason: reason``.

    Raises:
        UsageError: the id is malformed, unknown or on two files; the item is retired already; the
            reason is empty; or the file cannot be rewritten safely.
    """
    text = _reason(reason)
    config, corpus = ws.config, ws.corpus
    item = _one_item(config, corpus, item_id, "ITEM")
    if item.status == "retired":
        was = str(item.data.get("retired_reason", "")).strip()
        raise UsageError(f"{item_id} is retired already (retired_reason: {was!r}); edit its file to change the reason")
    result = CurationResult("retire", item_id)
    data = edit_yaml(config, item.doc.path, "item", {"status": "retired", "retired_reason": text}, then="retire it")
    result.edited.append(item.doc.relpath)
    translations = sorted(i.id for i in corpus.all_items if i.translation_of == item_id and i.status != "retired")
    if translations:
        result.notes.append(
            f"{', '.join(translations)} {'is a translation' if len(translations) == 1 else 'are translations'} of "
            f"{item_id} and stay{'s' if len(translations) == 1 else ''} active; retire "
            f"{'it' if len(translations) == 1 else 'them'} too if {'it goes' if len(translations) == 1 else 'they go'} "
            "with it"
        )
    record = _answerability_record(ws, item_id)
    if record:
        result.notes.append(f"{record} stays as it is: a retired item needs no answerability record")
    result.summary = f"{item_id} ({item.doc.relpath})"
    if not dry_run:
        write_files(config.root, {item.doc.path: data}, [], what="retire")
        result.written = True
    return result


def move(
    ws: Workspace,
    item_id: str,
    *,
    to_claim: str,
    translation_of: str | None = None,
    dry_run: bool = False,
    framing: str | None = None,
    question_type: str | None = None,
) -> CurationResult:
    """Move the item ``item_id`` into the claim ``to_claim``, as a translation of ``translation_of``
    (an item of that claim) when given. The item keeps its id; ``framing`` and ``question_type``,
    when given, are set in the same edit.

    Raises:
        UsageError: an id is malformed or unknown; the item is in that claim already; or the move
            would break a rule (see the module docstring), naming the rule and what to do instead.
    """
    names.claim_id(to_claim, "--to-claim")
    config, corpus = ws.config, ws.corpus
    item = _one_item(config, corpus, item_id, "ITEM")
    claim = corpus.claims.get(to_claim)
    if claim is None:
        raise UsageError(f"no claim {to_claim!r} under {config.questions_dir}/; give a claim id such as c0001")
    if item.claim_id == to_claim:
        raise UsageError(f"{item_id} is in claim {to_claim} already")
    if item.status == "retired":
        raise UsageError(f"{item_id} is retired; a retired item stays where it left the corpus")
    changes: dict[str, object] = {"claim_id": to_claim}
    set_to = {k: v for k, v in (("framing", framing), ("question_type", question_type)) if v is not None}
    changes.update(set_to)
    moved = {key: set_to.get(key, item.data.get(key)) for key in ("framing", "question_type")}
    source: Item | None = None
    if translation_of is not None:
        names.item_id(translation_of, "--translation-of")
        source = corpus.items.get(translation_of)
        if source is None or source.claim_id != to_claim:
            raise UsageError(
                f"[translation] --translation-of {translation_of} is not an item of claim {to_claim}; "
                "name the item of that claim it translates"
            )
        if source.language == item.language:
            raise UsageError(
                f"[translation] {item_id} and {translation_of} are both in {item.language}; a translation is in "
                "another language: move it without --translation-of, or retire one of them"
            )
        for key in ("framing", "question_type"):
            if moved[key] != source.data.get(key):
                raise UsageError(
                    f"[groups-translation-framing] {item_id} has {key} {moved[key]} but {translation_of} "
                    f"has {source.data.get(key)}; a translation keeps its source's {key.replace('_', ' ')}: "
                    f"add --{key.replace('_', '-')} {source.data.get(key)}, or move it without --translation-of"
                )
        changes["translation_of"] = translation_of
    elif item.translation_of is not None:
        changes["translation_of"] = REMOVE  # it named an item of the old claim
    if item.status == "active":
        cell = (item.language, str(moved["framing"] or ""), str(moved["question_type"] or ""))
        clash = sorted(
            i.id
            for i in corpus.items_of(to_claim)
            if i.status == "active" and (i.language, i.framing, i.question_type) == cell
        )
        if clash:
            raise UsageError(
                f"[groups-conflict] claim {to_claim} already has {', '.join(clash)} in {', '.join(cell)}; "
                "two such items are duplicates: retire one instead"
            )
    dependants = sorted(
        i.id for i in corpus.all_items if i.translation_of == item_id and i.claim_id == item.claim_id and i is not item
    )
    if dependants:
        raise UsageError(
            f"[groups-translation-claim] {', '.join(dependants)} in claim {item.claim_id} "
            f"{'is a translation' if len(dependants) == 1 else 'are translations'} of {item_id}, and a translation "
            f"stays in its claim: move {'it' if len(dependants) == 1 else 'them'} too, or point "
            f"{'it' if len(dependants) == 1 else 'them'} at another item of {item.claim_id} first"
        )
    dst = config.questions / to_claim / item.doc.path.name
    if os.path.lexists(dst):
        raise UsageError(f"{dst.relative_to(config.root).as_posix()} already exists; renumber one of the two first")
    data = edit_yaml(config, item.doc.path, "item", changes, then="move it")
    result = CurationResult("move", item_id)
    new_rel = dst.relative_to(config.root).as_posix()
    result.moved.append((item.doc.relpath, new_rel))
    record = _answerability_record(ws, item_id)
    if record and item.status == "active":
        result.notes.append(
            f"{record} is stale now: {item_id} is asked against the facts of {to_claim}; "
            f"a maintainer records it again (propeval gate answerability --online {item_id}: SECURITY.md)"
        )
    left = [i for i in corpus.items_of(item.claim_id) if i.active and i is not item]
    if not left and item.active:
        result.notes.append(f"claim {item.claim_id} has no active item left; retire or refill it (propeval groups)")
    as_what = f" as a translation of {translation_of}" if translation_of else ""
    result.summary = f"{item_id} from claim {item.claim_id} to {to_claim}{as_what}"
    if not dry_run:
        write_files(config.root, {dst: data}, [item.doc.path], what="move")
        result.written = True
    return result
