"""``propeval renumber``'s core: give an item or a claim a new id, and every reference with it.

The way out of an id collision between two branches (rule ``id-collision``): the branch that
landed second renumbers its own file. What changes, for an item ``i0172 -> i0175``:

* ``questions/<claim>/i0172.yaml`` becomes ``i0175.yaml`` with ``id: i0175``;
* every item of the same claim with ``translation_of: i0172`` points at ``i0175`` (a translation
  stays inside its claim, so the other branch's ``i0172`` keeps its translations);
* ``ledger/answerability/i0172.json`` becomes ``i0175.json`` with ``subject: i0175``, and its
  ``item_hash`` binding follows the renumbered file when it was fresh (a stale record stays stale);
* dedup allowlist entries naming ``i0172`` name ``i0175``.

For a claim ``c0012 -> c0013``: the folder moves, ``id`` and every item's ``claim_id`` change, the
items' ledger records follow (``claim_hash``, ``item_hash``), and fact ids ``c0012/f1`` in the
allowlist become ``c0013/f1``.

When two files share the id (the base is already merged in), the one to renumber is named by path,
or picked with ``--base REF`` as the one REF does not have; its ledger record and allowlist entries
are told apart from the other's by their hashes.

YAML is edited round-trip (ruamel.yaml, through :func:`propeval.migrate.rewrite`), so comments and
layout survive, and each edited file must load back through the strict loader to the expected
data. Every new text is computed before anything is written; then the files are written
atomically one by one, and a failure part-way puts back every file already touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval import gitutil, textnorm
from propeval.config import Config
from propeval.corpus import CLAIM_FILE, Corpus, Item, ids_of
from propeval.errors import PropevalError, UsageError
from propeval.filetypes import scan
from propeval.fsutil import atomic_write
from propeval.loader import LoadError, load_file

if TYPE_CHECKING:
    from propeval.workspace import Workspace

ITEM_ID = re.compile(r"^i[0-9]{4,}$")
CLAIM_ID = re.compile(r"^c[0-9]{4,}$")


@dataclass
class RenumberResult:
    kind: str  # "item" | "claim"
    old: str
    new: str
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old relpath, new relpath)
    edited: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: bool = False


REMOVE = object()  # a SetKey value: take the key out of the file


@dataclass
class SetKey:
    """A one-key migration step for :func:`propeval.migrate.rewrite`."""

    key: str
    value: Any

    def apply(self, data: Any, kind: str) -> None:
        if self.value is REMOVE:
            data.pop(self.key, None)
        else:
            data[self.key] = self.value


@dataclass
class Plan:
    result: RenumberResult
    root: Path
    writes: dict[Path, bytes] = field(default_factory=dict)
    deletes: list[Path] = field(default_factory=list)
    old_folder: Path | None = None


def renumber(
    ws: Workspace, target: str, *, to: str | None = None, base: str | None = None, dry_run: bool = False
) -> RenumberResult:
    """Renumber the item or claim ``target`` (an id, or a path relative to the working directory).

    Raises:
        UsageError: the target is unknown or ambiguous, the new id is taken or malformed, or a
            file to edit cannot be rewritten safely.
    """
    config, corpus = ws.config, ws.corpus
    tip_paths = _tip_paths(config, base)
    kind, old, path = _resolve(config, corpus, target, base, tip_paths)
    claim_folder = _rel(config, path.parent) + "/"
    broken = [p for p in corpus.problems if p.path.startswith(claim_folder)]
    if broken:  # it might name the old id: renumbering cannot tell, so nothing is changed
        p = broken[0]
        raise UsageError(
            f"{p.path}:{p.line}:{p.col} [{p.rule}] {p.message}; fix it first, then renumber "
            "(a file that does not load might refer to the old id)"
        )
    taken = set(ids_of(tip_paths)) if tip_paths is not None else set()
    new = _new_id(config, kind, to, taken)
    plan = Plan(RenumberResult(kind, old, new), config.root)
    if kind == "item":
        _plan_item(config, corpus, plan, path, old, new)
    else:
        _plan_claim(config, corpus, plan, path.parent, old, new)
    if not dry_run:
        apply_plan(plan)
        plan.result.written = True
    return plan.result


# --------------------------------------------------------------------------- what to renumber


def _tip_paths(config: Config, base: str | None) -> list[str] | None:
    if base is None:
        return None
    sha = gitutil.commit_of(config.root, base)
    if sha is None:
        raise UsageError(f"--base {base}: no such branch, tag or commit here; fetch it first (git fetch origin)")
    return gitutil.files_at(config.root, sha, config.questions_dir)


def _rel(config: Config, path: Path) -> str:
    return path.relative_to(config.root).as_posix()


def _resolve(
    config: Config, corpus: Corpus, target: str, base: str | None, tip_paths: list[str] | None
) -> tuple[str, str, Path]:
    """(kind, old id, path of the item file or of claim.yaml)."""
    if CLAIM_ID.match(target):
        path = config.questions / target / CLAIM_FILE
        if not path.is_file():
            raise UsageError(f"no claim {target!r}: {_rel(config, path)} does not exist")
        return "claim", target, path
    if ITEM_ID.match(target):
        found = [i.doc.path for i in corpus.all_items if i.doc.path.stem == target]
        if not found:
            raise UsageError(f"no item {target!r} under {config.questions_dir}/; give an item id such as i0001")
        if len(found) > 1 and tip_paths is not None:
            at_tip = set(tip_paths)
            found = [p for p in found if _rel(config, p) not in at_tip]
        if len(found) != 1:
            names = ", ".join(_rel(config, p) for p in sorted(found))
            raise UsageError(
                f"{len(found)} files have the id {target!r} ({names}); name the one to renumber by its path"
                + ("" if base else ", or give --base REF to pick the one REF does not have")
            )
        return "item", target, found[0]
    full = Path(os.path.abspath(target))
    try:
        rel = full.relative_to(config.questions)
    except ValueError:
        raise UsageError(
            f"{target!r} is neither an item or claim id (i0001, c0001) nor a path under {config.questions_dir}/"
        ) from None
    parts = rel.parts
    if len(parts) == 1 or (len(parts) == 2 and parts[1] == CLAIM_FILE):
        return _resolve(config, corpus, parts[0], base, tip_paths)
    if len(parts) == 2 and full.suffix == ".yaml" and full.is_file() and ITEM_ID.match(full.stem):
        return "item", full.stem, full
    raise UsageError(f"{target!r} is not a claim folder or an item file under {config.questions_dir}/")


def _new_id(config: Config, kind: str, to: str | None, taken: set[str]) -> str:
    from propeval.scaffold import next_id

    pattern = ITEM_ID if kind == "item" else CLAIM_ID
    if to is None:
        return next_id(config, kind, taken=taken)
    if not pattern.match(to):
        raise UsageError(f"--to {to!r} is not a{'n item' if kind == 'item' else ' claim'} id like {kind[0]}0001")
    found = scan(config.questions, config.root)
    here = {p.stem for p in (*found.files, *found.refused)} | {p.name for p in config.questions.iterdir()}
    if to in here or to in taken:
        raise UsageError(f"--to {to}: that id is already used{' at the base' if to in taken else ''}; pick another")
    return to


# --------------------------------------------------------------------------- the plan


def edit_yaml(config: Config, path: Path, kind: str, changes: dict[str, Any], *, then: str = "renumber") -> bytes:
    """The text of the YAML file ``path`` with top-level ``changes`` (a value :data:`REMOVE` takes
    the key out), edited round-trip; ``then`` names the command in the error's advice."""
    from propeval.migrate import RewriteError, rewrite

    rel = _rel(config, path)
    try:
        text = load_file(path, root=config.root).text
        new_text, _ = rewrite(text, rel, kind, [SetKey(k, v) for k, v in changes.items()])
    except LoadError as e:
        raise UsageError(f"{e}; fix the file first, then {then}") from None
    except RewriteError as e:
        raise UsageError(f"{rel}:{e.line} [{e.rule}] {e}; edit that file by hand") from None
    return new_text.encode("utf-8")


def _hash_of(config: Config, data: bytes, relpath: str) -> str:
    from propeval.corpus import content_hash
    from propeval.loader import load_text

    return content_hash(load_text(data, relpath).data)


def _ledger_dir(config: Config) -> Path:
    from propeval.ledger.paths import ANSWERABILITY, LedgerPaths

    return LedgerPaths.of(config).kind_folder(ANSWERABILITY)


def _rebind_record(
    config: Config, plan: Plan, item_id: str, new_id: str, rebind: dict[str, tuple[str, str]], *, mine: str | None
) -> None:
    """Move and re-bind ``ledger/answerability/<item_id>.json``.

    ``rebind`` maps a binding key to (old hash, new hash): a binding equal to the old hash (fresh)
    takes the new one. ``mine``: when another file shares the id, the record moves only if its
    ``item_hash`` is this hash (it belongs to the file being renumbered).
    """
    from propeval.ledger.records import digest

    folder = _ledger_dir(config)
    src = folder / f"{item_id}.json"
    if not os.path.lexists(src):
        return
    rel = _rel(config, src)
    try:
        record = load_file(src, root=config.root).data
    except LoadError as e:
        raise UsageError(f"{e}; restore or remake the record first, then renumber") from None
    binding = record.get("binding")
    if not isinstance(binding, dict):
        raise UsageError(f"{rel}: the record has no binding; remake it, then renumber")
    if mine is not None and binding.get("item_hash") != mine:
        plan.result.notes.append(f"{rel} is bound to the other file with id {item_id}; left in place")
        return
    stale = []
    for key, (old_hash, new_hash) in rebind.items():
        if binding.get(key) == old_hash:
            binding[key] = new_hash
        else:
            stale.append(key)
    if stale:
        plan.result.notes.append(f"{rel} was already stale ({', '.join(stale)}); it moves but stays stale")
    record["subject"] = new_id
    if "digest" in record:
        record["digest"] = digest(record)
    dst = folder / f"{new_id}.json"
    if dst != src and os.path.lexists(dst):
        raise UsageError(f"{_rel(config, dst)} already exists; remove it or pick another id with --to")
    plan.writes[dst] = (json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")
    if dst == src:
        plan.result.edited.append(rel)
    else:
        plan.deletes.append(src)
        plan.result.moved.append((rel, _rel(config, dst)))
    plan.result.notes.append(f"{_rel(config, dst)} was re-bound: a gate that checks signatures needs it signed again")


def _allowlist(config: Config) -> Path:
    return config.root / config.settings.dedup.allowlist


def _edit_allowlist(config: Config, plan: Plan, rename: dict[str, str], mine: dict[str, str] | None) -> None:
    """Rename ids in the dedup allowlist; ``mine`` (id -> text hash) tells colliding ids apart."""
    path = _allowlist(config)
    if not path.is_file():
        return
    from ruamel.yaml import YAML

    from propeval.migrate import RewriteError, rewrite

    rel = _rel(config, path)
    try:
        text = load_file(path, root=config.root).text
    except LoadError as e:
        raise UsageError(f"{e}; fix the allowlist first, then renumber") from None
    data = YAML(typ="safe").load(text) or {}
    pairs = data.get("pairs") if isinstance(data, dict) else None
    if not isinstance(pairs, list):
        return
    changed: list[tuple[int, str, str]] = []
    for n, pair in enumerate(pairs):
        if not isinstance(pair, dict):
            continue
        for side in ("a", "b"):
            uid = str(pair.get(side, ""))
            if uid not in rename:
                continue
            if mine is not None and pair.get(f"{side}_hash") != mine.get(uid):
                continue
            changed.append((n, side, rename[uid]))
    if not changed:
        return
    # A signed entry's signature covers its ids: renamed, it no longer verifies. It is dropped, and
    # the entry counts again once a maintainer signs it (the pull request's renamed review is new).
    unsigned = sorted({n for n, _, _ in changed if isinstance(pairs[n], dict) and "signature" in pairs[n]})

    class _Pairs:
        def apply(self, doc: Any, kind: str) -> None:
            for n, side, value in changed:
                doc["pairs"][n][side] = value
            for n in unsigned:
                del doc["pairs"][n]["signature"]

    try:
        new_text, _ = rewrite(text, rel, "allowlist", [_Pairs()])
    except RewriteError as e:
        raise UsageError(f"{rel}:{e.line} [{e.rule}] {e}; edit the allowlist by hand") from None
    plan.writes[path] = new_text.encode("utf-8")
    plan.result.edited.append(rel)
    if unsigned:
        plan.result.notes.append(
            f"{rel}: {len(unsigned)} signed entr{'y' if len(unsigned) == 1 else 'ies'} renamed, so no longer signed; "
            f"a maintainer signs them again: propeval ledger sign {rel}"
        )


def _plan_item(config: Config, corpus: Corpus, plan: Plan, path: Path, old: str, new: str) -> None:
    rel = _rel(config, path)
    dst = path.with_name(f"{new}.yaml")
    if os.path.lexists(dst):
        raise UsageError(f"{_rel(config, dst)} already exists; pick another id with --to")
    old_bytes = load_file(path, root=config.root).text.encode("utf-8")
    new_bytes = edit_yaml(config, path, "item", {"id": new})
    plan.writes[dst] = new_bytes
    plan.deletes.append(path)
    plan.result.moved.append((rel, _rel(config, dst)))
    siblings: list[Item] = [i for i in corpus.all_items if i.doc.path.parent == path.parent and i.doc.path != path]
    for item in siblings:
        if item.translation_of == old:
            plan.writes[item.doc.path] = edit_yaml(config, item.doc.path, "item", {"translation_of": new})
            plan.result.edited.append(item.doc.relpath)
    shared = sum(i.doc.path.stem == old for i in corpus.all_items) > 1
    old_hash, new_hash = _hash_of(config, old_bytes, rel), _hash_of(config, new_bytes, rel)
    _rebind_record(config, plan, old, new, {"item_hash": (old_hash, new_hash)}, mine=old_hash if shared else None)
    prompt = next((i.prompt for i in corpus.all_items if i.doc.path == path), "")
    mine = {old: f"sha256:{textnorm.text_hash(prompt)}"} if shared else None
    _edit_allowlist(config, plan, {old: new}, mine)


def _plan_claim(config: Config, corpus: Corpus, plan: Plan, folder: Path, old: str, new: str) -> None:
    dst_folder = folder.with_name(new)
    if os.path.lexists(dst_folder):
        raise UsageError(f"{_rel(config, dst_folder)} already exists; pick another id with --to")
    found = scan(folder, config.root)
    if found.problems:
        p = found.problems[0]
        raise UsageError(f"{p.path} [{p.rule}] {p.message}")
    claim_old = load_file(folder / CLAIM_FILE, root=config.root).text.encode("utf-8")
    claim_new = edit_yaml(config, folder / CLAIM_FILE, "claim", {"id": new})
    claim_hashes = (
        _hash_of(config, claim_old, _rel(config, folder / CLAIM_FILE)),
        _hash_of(config, claim_new, _rel(config, folder / CLAIM_FILE)),
    )
    items = {i.doc.path: i for i in corpus.all_items}
    for src in found.files:
        dst = dst_folder / src.relative_to(folder)
        if src.name == CLAIM_FILE:
            data = claim_new
        elif src in items and items[src].claim_id == old:
            before = load_file(src, root=config.root).text.encode("utf-8")
            data = edit_yaml(config, src, "item", {"claim_id": new})
            item_id = items[src].id
            _rebind_record(
                config,
                plan,
                item_id,
                item_id,
                {
                    "claim_hash": claim_hashes,
                    "item_hash": (_hash_of(config, before, src.name), _hash_of(config, data, src.name)),
                },
                mine=None,
            )
        else:
            data = src.read_bytes()
        plan.writes[dst] = data
        plan.deletes.append(src)
        plan.result.moved.append((_rel(config, src), _rel(config, dst)))
    plan.old_folder = folder
    facts = {}
    claim = corpus.claims.get(old)
    if claim is not None:
        facts = {f"{old}/{f.id}": f"{new}/{f.id}" for f in claim.facts}
    _edit_allowlist(config, plan, facts, None)


# --------------------------------------------------------------------------- writing


def apply_plan(plan: Plan) -> None:
    """Write the plan's files (:func:`write_files`)."""
    write_files(plan.root, plan.writes, plan.deletes, what="renumber", old_folder=plan.old_folder)


def write_files(
    root: Path, writes: dict[Path, bytes], deletes: list[Path], *, what: str, old_folder: Path | None = None
) -> None:
    """Write every new file, then remove the old ones; on any failure, put every file back.

    ``what`` names the command in the error; an ``old_folder`` left empty by the deletes goes too.

    Raises:
        PropevalError: a write failed (disk full, file too large, ...); every file touched so far
            was put back first.
    """
    # A ledger record re-bound in place (same name) is both written and "deleted": keep it.
    deletes = [p for p in deletes if p not in writes]
    touched = [*writes, *deletes]
    before: dict[Path, bytes | None] = {p: (p.read_bytes() if p.is_file() else None) for p in touched}
    new_folders = sorted({p.parent for p in writes if not p.parent.exists()}, key=lambda p: -len(p.parts))
    done: list[Path] = []
    current: Path | None = None
    try:
        for current, data in writes.items():
            atomic_write(current, data)
            done.append(current)
        for current in deletes:
            current.unlink()
            done.append(current)
    except BaseException as e:
        for path in reversed(done):
            old = before[path]
            if old is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, old)
        for folder in new_folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
        if isinstance(e, OSError):
            where = current.relative_to(root).as_posix() if current is not None else "a file"
            raise PropevalError(
                f"{what} could not write {where}: {e.strerror}; every file it had touched was put back"
            ) from e
        raise
    if old_folder is not None:
        for folder in sorted({p.parent for p in deletes}, key=lambda p: len(p.parts), reverse=True):
            if folder.is_relative_to(old_folder):
                with contextlib.suppress(OSError):  # not empty: something else lives there
                    folder.rmdir()
