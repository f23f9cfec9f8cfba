"""The reviewed-pair allowlist (``dedup-allowlist.yaml``): read it, write and sign an entry, find stale ones.

An entry binds two ids to the hashes of their texts at review; it applies while both texts are
unchanged. Entries are read through the strict loader, since people write them.

An entry is an approval ("a maintainer looked at this pair and kept both"), so it counts only
when a maintainer vouches for it (:class:`Trust`):

* it is on the base (the allowlist as the base ref has it, at the fork point or the base's tip;
  for a run with no base, as HEAD has it): the merge that brought it in was a maintainer's review.
  This is also the migration for entries written before entries were signed;
* or it carries a ``signature`` by a key on ``[tool.propeval.signers]`` (the base branch's, in
  ``propeval ci``) over the entry's own fields (``propeval dedup allow --sign``, or ``propeval
  ledger sign dedup-allowlist.yaml`` for entries a contributor wrote).

Any other entry, however well formed, does not make its pair reviewed: the pair is reported as
unreviewed, saying why. Outside a git repository there is no base to compare with, and every
entry counts.
"""

from __future__ import annotations

import datetime as _dt
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from propeval.config import Config
from propeval.dedup.units import Unit, load_units
from propeval.errors import UsageError
from propeval.loader import Document, LoadError, dumps_json, load_file, load_text
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.signing import SigningKey

ALLOWLIST_FIELDS = ("a", "a_hash", "b", "b_hash", "reviewer", "reason", "date")
BOILERPLATE_FIELDS = ("fact", "fact_hash", "reviewer", "reason", "date")
SIGNATURE = "signature"  # optional in every entry: {alg, key, value} over the entry's other fields
CONTEXT = b"propeval allowlist entry v1\n"


@dataclass
class AllowEntry:
    a: str
    a_hash: str
    b: str
    b_hash: str
    reviewer: str
    reason: str
    date: str
    line: int = 0
    signature: dict[str, Any] | None = None

    KIND: ClassVar[str] = "pair"
    FIELDS: ClassVar[tuple[str, ...]] = ALLOWLIST_FIELDS

    @property
    def fields(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.FIELDS}


@dataclass
class BoilerplateEntry:
    """A fact reviewed and kept though many claims require a near-duplicate of it; it applies
    while the fact's text is unchanged (``fact_hash``)."""

    fact: str
    fact_hash: str
    reviewer: str
    reason: str
    date: str
    line: int = 0
    signature: dict[str, Any] | None = None

    KIND: ClassVar[str] = "boilerplate"
    FIELDS: ClassVar[tuple[str, ...]] = BOILERPLATE_FIELDS

    @property
    def fields(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.FIELDS}


Entry = AllowEntry | BoilerplateEntry


def entry_message(kind: str, fields: Mapping[str, str]) -> bytes:
    """The bytes an entry's signature covers: a context line, then the canonical JSON of its kind
    and fields (everything in it but the signature)."""
    return CONTEXT + dumps_json({"kind": kind, **fields}).encode("utf-8")


def entry_identity(entry: Entry) -> str:
    """An entry as its kind and fields say it (its line and signature aside)."""
    return dumps_json({"kind": entry.KIND, **entry.fields})


def _signature_problem(raw: Any) -> str | None:
    """What is wrong with an entry's ``signature`` value, if anything."""
    if raw is None:
        return None
    fields = ("alg", "key", "value")
    if not isinstance(raw, dict) or set(raw) != set(fields) or not all(isinstance(raw[k], str) for k in fields):
        return (
            f"'{SIGNATURE}' must be a mapping of exactly alg, key and value (strings), as propeval writes it; "
            "delete it and have a maintainer sign the entry again (propeval ledger sign)"
        )
    return None


@dataclass
class Trust:
    """Which allowlist entries count: those on the base, and those signed by a listed maintainer.

    ``base_entries`` None: there is no base to compare with (no git repository), so every entry counts.
    """

    signers: dict[str, str]
    base_entries: set[str] | None
    base: str = ""

    def refusal(self, entry: Entry) -> str | None:
        """Why ``entry`` does not count, or None when it does."""
        from propeval import signing

        if self.base_entries is None or entry_identity(entry) in self.base_entries:
            return None
        how = "a maintainer signs it: propeval ledger sign <allowlist> (or writes it with propeval dedup allow --sign)"
        if entry.signature is None:
            return f"it is new or changed since {self.base} and not signed by a maintainer; {how}"
        verdict = signing.verify(
            {"signature": entry.signature}, self.signers, data=entry_message(entry.KIND, entry.fields)
        )
        if verdict.state == "signed":
            return None
        if verdict.state == "unknown-key":
            listed = ", ".join(sorted(self.signers)) or "none"
            return f"it is signed by a key that is not on [tool.propeval.signers] ({listed}); {how}"
        if verdict.state == "bad":
            return f"its signature by {verdict.signer} does not match the entry (changed after signing); {how}"
        return f"its signature is malformed ({verdict.detail}); {how}"


def load_trust(config: Config, allowlist: str, changed_since: str | None) -> Trust:
    """The :class:`Trust` of a run: signers from ``config`` (in ``ci``, the base's), and the entries
    of the allowlist at the merge base with ``changed_since`` and at its tip (no ``changed_since``:
    at HEAD)."""
    from propeval import gitutil
    from propeval.errors import GitError
    from propeval.signing import load_signers

    signers = load_signers(config)
    try:
        gitutil.toplevel(config.root)
    except GitError:
        return Trust(signers, None)
    ref = changed_since or "HEAD"
    refs = [ref]
    try:
        refs.insert(0, gitutil.merge_base(config.root, ref))
    except GitError:
        if changed_since is not None:
            raise
        refs = []  # no commit yet: nothing is on the base
    seen: set[str] = set()
    for r in refs:
        blob = gitutil.blob_at(config.root, r, allowlist)
        if blob is None:
            continue
        try:
            doc = load_text(blob, f"{allowlist} at {r}", kind=_kind(allowlist))
        except LoadError:
            continue
        pairs, boiler, _ = _parse(doc)
        seen.update(entry_identity(e) for e in pairs)
        seen.update(entry_identity(e) for e in boiler)
    return Trust(signers, seen, ref)


def _kind(path: str) -> str:
    return "json" if path.lower().endswith(".json") else "yaml"


def _parse(doc: Document) -> tuple[list[AllowEntry], list[BoilerplateEntry], list[Problem]]:
    """The entries of a loaded allowlist, and the problems of those that are malformed."""
    problems: list[Problem] = []
    unknown = sorted(set(doc.data) - {"pairs", "boilerplate"})
    if unknown:
        problems.append(
            doc.problem(
                f"/{unknown[0]}",
                "dedup-allowlist",
                f"unknown key {unknown[0]!r}; keep only 'pairs' and 'boilerplate'",
                key=True,
            )
        )
    pairs: list[AllowEntry] = []
    raw_pairs = doc.data.get("pairs")
    if raw_pairs is not None and not isinstance(raw_pairs, list):
        problems.append(doc.problem("/pairs", "dedup-allowlist", "'pairs' must be a list of reviewed pairs"))
        raw_pairs = None
    for n, raw in enumerate(raw_pairs or []):
        ptr = f"/pairs/{n}"
        if not isinstance(raw, dict):
            problems.append(
                doc.problem(ptr, "dedup-allowlist", "each entry must be a mapping with " + ", ".join(ALLOWLIST_FIELDS))
            )
            continue
        missing = [k for k in ALLOWLIST_FIELDS if not isinstance(raw.get(k), str) or not raw.get(k, "").strip()]
        extra = sorted(set(raw) - set(ALLOWLIST_FIELDS) - {SIGNATURE})
        if missing or extra:
            what = []
            if missing:
                what.append(f"missing or empty: {', '.join(missing)}")
            if extra:
                what.append(f"unknown: {', '.join(extra)}")
            problems.append(
                doc.problem(
                    ptr,
                    "dedup-allowlist",
                    f"allowlist entry {'; '.join(what)}; write entries with `propeval dedup allow A B --reason ...`",
                )
            )
            continue
        bad_sig = _signature_problem(raw.get(SIGNATURE))
        if bad_sig is not None:
            problems.append(doc.problem(f"{ptr}/{SIGNATURE}", "dedup-allowlist", bad_sig))
            continue
        line, _ = doc.locate(ptr)
        pairs.append(AllowEntry(**{k: str(raw[k]) for k in ALLOWLIST_FIELDS}, line=line, signature=raw.get(SIGNATURE)))
    boiler: list[BoilerplateEntry] = []
    raw_boiler = doc.data.get("boilerplate")
    if raw_boiler is not None and not isinstance(raw_boiler, list):
        problems.append(
            doc.problem("/boilerplate", "dedup-allowlist", "'boilerplate' must be a list of reviewed facts")
        )
        raw_boiler = None
    for n, entry in enumerate(raw_boiler or []):
        ptr = f"/boilerplate/{n}"
        keys = set(entry) - {SIGNATURE} if isinstance(entry, dict) else set()
        ok = isinstance(entry, dict) and keys == set(BOILERPLATE_FIELDS)
        if not ok or not all(isinstance(entry[k], str) and entry[k].strip() for k in BOILERPLATE_FIELDS):
            problems.append(
                doc.problem(
                    ptr,
                    "dedup-allowlist",
                    "each boilerplate entry is a mapping with exactly "
                    + ", ".join(BOILERPLATE_FIELDS)
                    + " (non-empty)",
                )
            )
            continue
        bad_sig = _signature_problem(entry.get(SIGNATURE))
        if bad_sig is not None:
            problems.append(doc.problem(f"{ptr}/{SIGNATURE}", "dedup-allowlist", bad_sig))
            continue
        line, _ = doc.locate(ptr)
        boiler.append(
            BoilerplateEntry(
                **{k: str(entry[k]) for k in BOILERPLATE_FIELDS}, line=line, signature=entry.get(SIGNATURE)
            )
        )
    return pairs, boiler, problems


def _load(path: Path, root: Path) -> tuple[list[AllowEntry], list[BoilerplateEntry], list[Problem]]:
    if not path.is_file():
        return [], [], []
    try:
        doc = load_file(path, root=root)
    except LoadError as e:
        return [], [], [e.problem]
    return _parse(doc)


def load_boilerplate_allowlist(path: Path, root: Path) -> tuple[list[BoilerplateEntry], list[Problem]]:
    """The ``boilerplate:`` entries of the allowlist file (its problems are reported by
    :func:`load_allowlist`, with the pairs')."""
    return _load(path, root)[1], []


def load_allowlist(path: Path, root: Path) -> tuple[list[AllowEntry], list[Problem]]:
    """Entries of the allowlist file (missing file: none). Bad entries are problems, not crashes."""
    pairs, _, problems = _load(path, root)
    return pairs, problems


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def allow_messages(config: Config, path: Path, entry: AllowEntry, replaced: bool, key: SigningKey | None) -> list[str]:
    """What `propeval dedup allow` says about the entry :func:`add_allow_entry` wrote (the review app
    shows the same lines): where it went, and whether it counts yet."""
    rel = path.relative_to(config.root).as_posix()
    verb = "updated" if replaced else "added"
    lines = [f"{rel}: {verb} {entry.a} / {entry.b} (reviewer {entry.reviewer}, {entry.date})"]
    if key is None:
        lines.append(
            "unsigned: in a pull request it counts once a maintainer signs it "
            f"(propeval ledger sign {rel}, or propeval dedup allow ... --sign)"
        )
    else:
        from propeval.signing import load_signers

        signer = next((n for n, k in load_signers(config).items() if k == key.public), None)
        lines.append(
            f"signed by {signer}"
            if signer
            else "signed with a key that is not on [tool.propeval.signers]: it counts "
            "nowhere until that key is listed on the base branch"
        )
    return lines


def add_allow_entry(
    config: Config,
    a: str,
    b: str,
    *,
    reason: str,
    reviewer: str,
    date: str | None = None,
    key: SigningKey | None = None,
) -> tuple[Path, AllowEntry, bool]:
    """Write (or refresh) the allowlist entry for ``a`` and ``b`` with their current text hashes,
    signed with ``key`` when given (a maintainer's review; unsigned, it counts once one signs it).

    The file is edited round-trip (comments and order kept) and replaced atomically.
    Returns (path, entry, replaced_an_existing_entry).
    """
    from propeval.fsutil import atomic_write

    settings = config.settings.dedup
    if a == b:
        raise UsageError("a pair needs two different ids")
    if not reason.strip():
        raise UsageError("--reason must say why the pair is kept")
    units = {u.id: u for u in load_units(config, settings, facts=True)[0]}
    for uid in (a, b):
        if uid not in units:
            raise UsageError(f"{uid!r} is neither an active item id nor a fact id like c0001/f1")
    ua, ub = units[a], units[b]
    if ua.claim_id == ub.claim_id:
        raise UsageError(f"{a} and {b} belong to the same claim {ua.claim_id}; such pairs are never flagged")
    path = config.root / settings.allowlist
    _, problems = load_allowlist(path, config.root)
    if problems:
        p = problems[0]
        raise UsageError(f"{p.path}:{p.line}:{p.col} {p.message}; fix the allowlist first")
    first, second = sorted((ua, ub), key=lambda u: u.id)
    entry = AllowEntry(
        a=first.id,
        a_hash=first.hash,
        b=second.id,
        b_hash=second.hash,
        reviewer=reviewer,
        reason=reason.strip(),
        date=date or _dt.date.today().isoformat(),
    )
    if key is not None:
        entry.signature = key.signature(entry_message(entry.KIND, entry.fields))
    yaml = _yaml()
    data = yaml.load(path.read_text(encoding="utf-8")) if path.is_file() else None
    if data is None:
        from ruamel.yaml.comments import CommentedMap

        data = CommentedMap()
        data.yaml_set_start_comment(
            "Near-duplicate pairs reviewed and kept. Written by `propeval dedup allow A B --reason ...`.\n"
            "An entry stops applying when either text changes (its hash no longer matches)."
        )
    if data.get("pairs") is None:
        data["pairs"] = []
    replaced = False
    record: dict[str, Any] = dict(entry.fields)
    if entry.signature is not None:
        record[SIGNATURE] = dict(entry.signature)
    for n, old in enumerate(data["pairs"]):
        if pair_key(str(old.get("a")), str(old.get("b"))) == (first.id, second.id):
            data["pairs"][n] = record
            replaced = True
            break
    else:
        data["pairs"].append(record)
    buf = io.StringIO()
    yaml.dump(data, buf)
    atomic_write(path, buf.getvalue())
    return path, entry, replaced


@dataclass
class SignedEntries:
    """What :func:`sign_allowlist` did: the entries it signed, and why it left others unsigned."""

    signed: list[str]
    problems: list[Problem]
    notes: list[str]


def sign_allowlist(config: Config, key: SigningKey, trust: Trust, *, resign: bool = False) -> SignedEntries:
    """Sign every entry of the allowlist that does not count yet (``trust``: not on the base, not
    signed by a listed key) and is sound: well formed, and bound to the current text of each id it
    names (a stale entry is a review of texts that are gone: review it again). With ``resign``,
    every sound entry is signed again.

    The file is edited round-trip and replaced atomically, once, when anything was signed.
    """
    from propeval.fsutil import atomic_write

    settings = config.settings.dedup
    path = config.root / settings.allowlist
    rel = settings.allowlist
    out = SignedEntries([], [], [])
    pairs, boiler, problems = _load(path, config.root)
    if not path.is_file():
        raise UsageError(f"there is no {rel} to sign")
    if problems:
        p = problems[0]
        raise UsageError(f"{p.path}:{p.line}:{p.col} {p.message}; fix the allowlist first")
    units = {u.id: u for u in load_units(config, settings, facts=True)[0]}
    yaml = _yaml()
    data = yaml.load(path.read_text(encoding="utf-8"))
    sections: list[tuple[str, list[Entry]]] = [("pairs", list(pairs)), ("boilerplate", list(boiler))]
    for section, entries in sections:
        for n, entry in enumerate(entries):
            ids = (
                [(entry.a, entry.a_hash), (entry.b, entry.b_hash)]
                if isinstance(entry, AllowEntry)
                else [(entry.fact, entry.fact_hash)]
            )
            label = " / ".join(i for i, _ in ids)
            if not resign and trust.refusal(entry) is None:
                how = "signed by a listed maintainer" if entry.signature is not None else f"on {trust.base}"
                out.notes.append(f"{rel}:{entry.line} {label}: already counts ({how}); left alone")
                continue
            stale = [i for i, h in ids if i not in units or units[i].hash != h]
            if stale:
                out.problems.append(
                    Problem(
                        rel,
                        entry.line,
                        1,
                        "ledger-sign",
                        f"not signed: the entry for {label} is stale ({' and '.join(stale)} changed or is gone since "
                        "the review); review the pair again and write it anew (propeval dedup allow ... --sign)",
                    )
                )
                continue
            data[section][n][SIGNATURE] = key.signature(entry_message(entry.KIND, entry.fields))
            out.signed.append(f"{rel}:{entry.line} {label}")
    if out.signed:
        buf = io.StringIO()
        yaml.dump(data, buf)
        atomic_write(path, buf.getvalue())
    return out


def stale_reviews(
    allow: Mapping[tuple[str, str], AllowEntry],
    units: list[Unit],
    focus: set[int] | None,
    allow_path: str,
) -> list[Problem]:
    """Entries that no longer apply: a text changed since the review, or an id is gone. With a
    ``focus`` (the changed texts), only entries touching it are looked at."""
    by_id = {u.id: u for u in units}
    index_of = {u.id: n for n, u in enumerate(units)}
    out = []
    for key, e in allow.items():
        if focus is not None and not any(uid in index_of and index_of[uid] in focus for uid in key):
            continue
        changed_ids = [uid for uid, h in ((e.a, e.a_hash), (e.b, e.b_hash)) if uid in by_id and by_id[uid].hash != h]
        gone = [uid for uid in key if uid not in by_id]
        if not (changed_ids or gone):
            continue
        why = []
        if changed_ids:
            why.append(f"the text of {' and '.join(changed_ids)} changed since the review on {e.date}")
        if gone:
            why.append(f"{' and '.join(gone)} is no longer an active item or fact")
        out.append(
            Problem(
                allow_path,
                e.line,
                1,
                "dedup-stale-review",
                f"the review of {e.a} / {e.b} no longer applies: {'; '.join(why)}; review the pair again "
                f"and run `propeval dedup allow {e.a} {e.b} --reason ...`, or delete the entry",
                severity=Severity.WARNING,
            )
        )
    return out
