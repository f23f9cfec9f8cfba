"""Language tags: the one rule for what a tag must look like, and the one rule for which language it names.

- :func:`canonical` is a tag's canonical BCP 47 form (langcodes' ``standardize_tag``: ``ru_RU`` ->
  ``ru-RU``, ``RU`` -> ``ru``, ``iw`` -> ``he``). A tag that is not already canonical is refused by
  ``propeval new`` and ``propeval check``, and ``propeval check --fix`` rewrites it.
- :func:`suggestion` is what to write instead of a tag that is not valid at all; a country code
  written as a language (``ua``, ``cn``, ``jp``) gets the language most spoken there (``uk``, ``zh``,
  ``ja``) from the CLDR likely-subtags data that langcodes ships.
- :func:`language_key` is the language a tag counts as, everywhere (stats, export, groups, dedup):
  the primary language subtag of the canonical form, so ``ru-RU`` and ``ru`` are one language.

Examples::

    >>> canonical("ru_RU"), canonical("RU"), canonical("ua")
    ('ru-RU', 'ru', None)
    >>> suggestion("ua"), suggestion("ru_RU")
    ('uk', 'ru-RU')
    >>> language_key("ru-RU"), language_key("zh-Hans"), language_key("RU")
    ('ru', 'zh', 'ru')
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1024)
def canonical(tag: str) -> str | None:
    """The canonical BCP 47 form of ``tag``; None when it is not a valid tag."""
    import langcodes

    if not isinstance(tag, str) or not tag or tag != tag.strip():
        return None
    try:
        if not langcodes.tag_is_valid(tag.replace("_", "-")):
            return None
        return str(langcodes.standardize_tag(tag))
    except (ValueError, langcodes.LanguageTagError):
        return None


@lru_cache(maxsize=1024)
def suggestion(tag: str) -> str | None:
    """What to write instead of ``tag``: its canonical form, or for a region code written as a
    language (``ua``), the language most spoken in that region (``uk``). None when unknown."""
    import langcodes

    fixed = canonical(tag.strip())
    if fixed is not None:
        return fixed
    t = tag.strip()
    if len(t) == 2 and t.isascii() and t.isalpha():
        # CLDR's likely subtags for a region alone ("und-UA" -> "uk-Cyrl-UA"). Read from the table,
        # not through maximize(), which answers English for any region it does not know ("xx").
        from langcodes.data_dicts import LIKELY_SUBTAGS

        likely = LIKELY_SUBTAGS.get(f"und-{t.upper()}")
        if likely:
            return str(langcodes.Language.get(likely).language)
    return None


def problem(tag: str) -> tuple[str, str | None] | None:
    """Why ``tag`` is not acceptable and what to write instead; None when it is canonical.

    >>> problem("ua")
    ("'ua' is not a valid BCP 47 language tag; did you mean 'uk'?", 'uk')
    """
    fixed = canonical(tag)
    if fixed == tag:
        return None
    if fixed is not None:
        return f"{tag!r} is not in canonical BCP 47 form; write {fixed!r}", fixed
    guess = suggestion(tag)
    if guess is not None:
        return f"{tag!r} is not a valid BCP 47 language tag; did you mean {guess!r}?", guess
    return f"{tag!r} is not a valid BCP 47 language tag; use a tag such as en, zh-Hans, ru, uk or de", None


def language_key(tag: str) -> str:
    """The language ``tag`` counts as: the primary subtag of its canonical form, lower-cased.

    A tag that is not valid keeps its own primary subtag (``ru_RU`` -> ``ru``), so counts still
    group it with its language while ``check`` reports it.
    """
    if isinstance(tag, str):
        return _language_key(tag)
    return str(tag).strip().replace("_", "-").split("-", 1)[0].lower()


@lru_cache(maxsize=4096)
def _language_key(tag: str) -> str:
    # groups asks it for every item several times: 130,000 calls on a 10,000-item corpus
    fixed = canonical(tag.strip())
    return (fixed or tag).strip().replace("_", "-").split("-", 1)[0].lower()
