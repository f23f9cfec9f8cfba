"""``propeval new``'s core: the next free id, and a file with every required field present.

Fields that were not given get a ``TODO`` placeholder, which ``propeval check`` rejects until it
is filled in. The text is checked by the strict loader before it is written, and written
atomically, so a scaffold is never half there.

Ids are allocated under a lock (``filelock``, one allocation at a time per repository) and the
file is created with ``O_EXCL`` (a claim's folder with ``mkdir``), so parallel ``new``s never
share an id and never overwrite a file, even one made by a process that does not take the lock.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from propeval import names
from propeval.config import Config
from propeval.corpus import CLAIM_FILE, corpus_scan
from propeval.errors import PropevalError, UsageError
from propeval.fsutil import create_exclusive
from propeval.loader import load_file, load_text
from propeval.names import CLAIM_ID, ITEM_ID


def next_id(config: Config, kind: str, *, taken: Iterable[str] = ()) -> str:
    """The next free claim (``c0001``) or item (``i0001``) id: one past the highest in use.

    Every name under questions/ counts, refused ones (links) included, and so do ``taken`` ids
    (those at a base ref, say): an id is never handed out twice.
    """
    pattern, prefix = (CLAIM_ID, "c") if kind == "claim" else (ITEM_ID, "i")
    found = corpus_scan(config.questions, config.root)
    highest = 0
    seen = list(taken)
    for path in (*found.files, *found.refused):
        seen.append(path.parent.name if path.name == CLAIM_FILE else path.stem)
        if kind == "claim" and path.parent.parent == config.questions:
            seen.append(path.parent.name)
    if kind == "claim" and config.questions.is_dir():
        seen.extend(entry.name for entry in os.scandir(config.questions))  # empty claim folders too
    for name in seen:
        m = pattern.fullmatch(name)
        if m:
            highest = max(highest, int(m.group(1)))
    return f"{prefix}{highest + 1:04d}"


LOCK_TIMEOUT = 60.0
_MAX_TRIES = 50


@contextlib.contextmanager
def allocation_lock(config: Config) -> Iterator[None]:
    """One id allocation at a time per repository (``filelock``), across processes.

    The lock file lives in the git folder (never committed, shared by worktrees); outside a
    repository, at the corpus root.
    """
    from filelock import FileLock, Timeout

    from propeval import gitutil

    git_dir = gitutil.common_dir(config.root)
    path = git_dir / "propeval-new.lock" if git_dir is not None else config.root / ".propeval-new.lock"
    lock = FileLock(str(path), timeout=LOCK_TIMEOUT)
    try:
        with lock:
            yield
    except Timeout as e:
        raise PropevalError(
            f"another `propeval new` has held {lock.lock_file} for {LOCK_TIMEOUT:.0f} s; "
            "wait for it, or remove the file if no propeval process is running"
        ) from e


@dataclass
class ClaimSpec:
    kind: str = "censorship"
    title: str | None = None
    facts: Sequence[str] = ()
    source_url: str | None = None
    source_date: str | None = None
    anchor: str | None = None
    categories: Sequence[str] = ()
    markers: Sequence[tuple[str, str]] = ()  # (language, text)
    narrative: str | None = None
    actor: str | None = None
    id: str | None = None
    draft: bool = False


@dataclass
class ItemSpec:
    claim_id: str
    language: str = "en"
    framing: str | None = None  # None: the translated item's, else neutral
    question_type: str | None = None  # None: the translated item's, else named_fact
    prompt: str | None = None
    translation_of: str | None = None
    id: str | None = None
    draft: bool = False


def check_language(tag: str, option: str) -> None:
    """Refuse a tag that is not canonical BCP 47, with the one to write instead (``ua`` -> ``uk``)."""
    from propeval.langtags import problem

    found = problem(tag)
    if found is not None:
        message, fixed = found
        again = f" Run again with {option} {fixed}" if fixed else ""
        raise UsageError(f"{option}: {message}{again}")


def check_kind(config: Config, kind: str, option: str) -> None:
    """Refuse a claim kind the corpus's schema does not list, naming those it does. A schema that
    cannot be read or lists none lets any kind through: ``propeval check`` reports the schema."""
    from propeval.schema import claim_kinds

    kinds = claim_kinds(config.schema_source[0])
    if kinds is not None and kind not in kinds:
        raise UsageError(f"{option} {kind!r} is not a claim kind of the schema; use one of: {', '.join(kinds)}")


def check_facts(config: Config, facts: Sequence[str]) -> None:
    """Refuse a number of ``--fact`` the corpus's schema does not allow, in ``check``'s words (none
    given: the scaffold's placeholders)."""
    from propeval.schema import claim_facts_count

    wrong = claim_facts_count(config.schema_source[0], len(facts)) if facts else ""
    if wrong:
        raise UsageError(f"--fact [schema] {wrong}; give each required fact with its own --fact")


def claim_data(config: Config, spec: ClaimSpec) -> dict[str, Any]:
    cid = spec.id or next_id(config, "claim")
    facts = list(spec.facts) or [
        "TODO: the first required fact, in our own words",
        "TODO: the second required fact",
    ]
    data: dict[str, Any] = {
        "id": cid,
        "kind": spec.kind,
        "title": spec.title or "TODO: a short title",
        "facts": [{"id": f"f{n}", "text": t} for n, t in enumerate(facts, start=1)],
        "source_url": spec.source_url or "TODO: https://... a source that supports every fact",
    }
    if spec.source_date:
        data["source_date"] = spec.source_date
    data["anchor"] = spec.anchor or "TODO: where in the source the facts stand (section, article, paragraph)"
    data["categories"] = list(spec.categories) or ["TODO: one of the seven categories"]
    data["official_frame_markers"] = [{"text": t, "language": lang} for lang, t in spec.markers]
    if spec.kind == "narrative" or spec.narrative:
        data["narrative"] = spec.narrative or "TODO: the narrative, stated as one sentence"
    if spec.kind == "narrative" or spec.actor:
        data["actor"] = spec.actor or "TODO: US, West, EU, Russia or Ukraine"
    if spec.draft:
        data["status"] = "draft"
    return data


def item_data(config: Config, spec: ItemSpec) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": spec.id or next_id(config, "item"),
        "claim_id": spec.claim_id,
        "language": spec.language,
        "framing": spec.framing or "neutral",
        "question_type": spec.question_type or "named_fact",
        "prompt": spec.prompt or "TODO: the question, as a user would ask it",
    }
    if spec.translation_of:
        data["translation_of"] = spec.translation_of
    data["status"] = "draft" if spec.draft else "active"
    return data


def dump_yaml(data: dict[str, Any]) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    buf = io.StringIO()
    yaml.dump(_literal_multiline(data), buf)
    return buf.getvalue()


def _literal_multiline(node: Any) -> Any:
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(node, dict):
        return {k: _literal_multiline(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_literal_multiline(v) for v in node]
    if isinstance(node, str) and "\n" in node:
        return LiteralScalarString(node if node.endswith("\n") else node + "\n")
    return node


def render(path: Path, data: dict[str, Any]) -> str:
    """``data`` as YAML, checked to load back through the strict loader to the same data."""
    text = dump_yaml(data)
    loaded = load_text(text, str(path)).data  # never write what the strict loader would refuse
    if loaded != _plain(data):
        raise UsageError("the scaffold would not load back to the same data; report this as a bug")
    return text


def write_new(config: Config, relfolder: str, name: str, data: dict[str, Any]) -> Path:
    """Write ``data`` as YAML to questions/<relfolder>/<name>; exclusive: never overwrites."""
    path = config.questions / relfolder / name
    text = render(path, data)
    try:
        create_exclusive(path, text)
    except FileExistsError:
        raise UsageError(f"{path.relative_to(config.root)} already exists; pick another id") from None
    return path


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def new_claim(config: Config, spec: ClaimSpec) -> Path:
    """Create questions/<id>/claim.yaml under the allocation lock; the folder is taken with mkdir."""
    check_kind(config, spec.kind, "--kind")
    check_facts(config, spec.facts)
    for lang, _ in spec.markers:
        check_language(lang, "--marker")
    if spec.id is not None:
        names.claim_id(spec.id)
    with allocation_lock(config):
        for _ in range(_MAX_TRIES):
            data = claim_data(config, spec)
            folder = config.questions / data["id"]
            config.questions.mkdir(parents=True, exist_ok=True)
            try:
                folder.mkdir()  # atomic: of two processes, one gets the folder
            except FileExistsError:
                if spec.id:
                    raise UsageError(f"questions/{data['id']} already exists; pick another id") from None
                continue  # taken by something that does not take the lock (a checkout); next one
            try:
                return write_new(config, data["id"], CLAIM_FILE, data)
            except BaseException:
                with contextlib.suppress(OSError):
                    folder.rmdir()
                raise
    raise PropevalError(f"no free claim id found after {_MAX_TRIES} tries; is something creating folders?")


def new_item(config: Config, spec: ItemSpec) -> Path:
    """Create questions/<claim>/<id>.yaml under the allocation lock, with an exclusive create."""
    names.claim_id(spec.claim_id, "--claim")
    check_language(spec.language, "--language")
    if spec.id is not None:
        names.item_id(spec.id)
    if spec.translation_of is not None:
        names.item_id(spec.translation_of, "--translation-of")
    folder = config.questions / spec.claim_id
    if not (folder / CLAIM_FILE).is_file():
        raise UsageError(
            f"claim {spec.claim_id!r} does not exist (no {folder.relative_to(config.root)}/{CLAIM_FILE}); "
            "create it first with: propeval new claim"
        )
    if spec.translation_of:
        source = folder / f"{spec.translation_of}.yaml"
        if not source.is_file():
            raise UsageError(
                f"--translation-of {spec.translation_of}: no such item in claim {spec.claim_id!r}; "
                "a translation stays inside its claim"
            )
        src = load_file(source, root=config.root).data
        spec = replace(
            spec,
            framing=spec.framing or str(src.get("framing", "neutral")),
            question_type=spec.question_type or str(src.get("question_type", "named_fact")),
        )
    with allocation_lock(config):
        for _ in range(_MAX_TRIES):
            data = item_data(config, spec)
            path = folder / f"{data['id']}.yaml"
            try:
                create_exclusive(path, render(path, data))
            except FileExistsError:
                if spec.id:
                    raise UsageError(f"{path.relative_to(config.root)} already exists; pick another id") from None
                continue
            return path
    raise PropevalError(f"no free item id found after {_MAX_TRIES} tries; is something creating files?")
