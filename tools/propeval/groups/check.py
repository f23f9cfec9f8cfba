"""The ``propeval groups`` run: select the claims, build their matrices, run every rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import Corpus, Item
from propeval.embed.protocol import Encoder
from propeval.errors import UsageError
from propeval.groups.context import GroupsContext
from propeval.groups.matrix import FRAMINGS, QUESTION_TYPES, ClaimMatrix, build_matrix
from propeval.groups.rules import CHECKS
from propeval.result import CheckResult
from propeval.settings import GroupsSettings

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class GroupsResult(CheckResult):
    """Problems, notes, and a completeness matrix per claim checked."""

    matrices: dict[str, ClaimMatrix] = field(default_factory=dict)


def check_groups(
    ws: Workspace,
    claims: Sequence[str] = (),
    *,
    changed_since: str | None = None,
    encoder: Encoder | None = None,
    settings: GroupsSettings | None = None,
) -> GroupsResult:
    """Check claim framing groups and build their completeness matrices.

    Every step is linear in the corpus: the items are indexed by claim once, and each rule looks
    only at the claims selected (all of them in one pass when nothing narrows the run).

    Args:
        ws: The workspace (its corpus is read once).
        claims: Claim ids or paths under the questions folder to check; all claims when empty.
        changed_since: Check only the groups with a file added, changed or deleted since the merge
            base with this git ref (always the whole group).
        encoder: The multilingual encoder for the drift rule; when None, the one named by
            ``drift_encoder`` is loaded, or the drift rule is skipped with a note.
        settings: Overrides ``[tool.propeval.groups]``.

    Returns:
        A GroupsResult; ``exit_code`` is 1 when any error-severity problem was found.
    """
    config = ws.config
    settings = settings or config.settings.groups
    corpus = ws.corpus
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
    drafts = corpus.draft_paths()
    draft_claims = [cid for cid in claim_ids if corpus.claims[cid].draft]
    if draft_claims:
        result.notes.append(f"draft claims skipped (status: draft): {', '.join(draft_claims)}")
    claim_ids = [cid for cid in claim_ids if cid not in draft_claims]
    in_scope = _scope(config.questions_dir, selected)

    problems = [p for p in corpus.problems if in_scope(p.path)]
    odd = [i for i in corpus.items.values() if i.framing not in FRAMINGS or i.question_type not in QUESTION_TYPES]
    for item in sorted(odd, key=lambda i: i.id):
        if in_scope(item.doc.relpath):
            result.notes.append(
                f"{item.id}: framing {item.framing!r} / question_type {item.question_type!r} is not valid, so "
                "the item is left out of its group; run propeval check"
            )
    left_out = {id(i) for i in odd}

    ctx = GroupsContext(
        config, corpus, settings, encoder, in_scope, result.notes, result.standing, scoped=_scoped(corpus, in_scope)
    )
    for cid in claim_ids:
        items = [i for i in corpus.items_of(cid) if id(i) not in left_out]
        ctx.items[cid] = items
        ctx.matrices[cid] = result.matrices[cid] = build_matrix(corpus.claims[cid], items, settings, corpus)
    for rule in CHECKS.values():
        # Drafts are held to syntax and schema only (propeval check); no group rule speaks for them.
        problems.extend(p for p in rule.check(ctx) if p.path not in drafts)

    result.files_checked = sum(1 for f in corpus.files if in_scope(f))
    result.extend(problems)
    result.problems = result.sorted()
    result.notes = list(dict.fromkeys(result.notes))
    result.standing = list(dict.fromkeys(result.standing))
    return result


def _scope(questions_dir: str, selected: set[str] | None) -> Callable[[str], bool]:
    """Whether a corpus-relative path lies in a selected claim's folder (every path when None)."""
    if selected is None:
        return lambda path: True
    # in a selected claim's folder: its prefix, one C call per path (a commit's run asks it of every file)
    starts = tuple(f"{questions_dir}/{cid}/" for cid in sorted(selected) if "/" not in cid)
    return lambda path: path.startswith(starts)


def _scoped(corpus: Corpus, in_scope: Callable[[str], bool]) -> list[Item]:
    """Every loaded item in the run's scope, sorted by path (one pass over the corpus)."""
    return sorted((i for i in corpus.all_items if in_scope(i.doc.relpath)), key=lambda i: i.doc.relpath)


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
    # A file deleted since the base is among the changed paths (git names deletions, staged or not).
    prefix = config.questions_dir + "/"
    out = set()
    for p in changed:
        if p.startswith(prefix):
            parts = p[len(prefix) :].split("/")
            if len(parts) > 1:
                out.add(parts[0])
    return out, ""
