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

# Every two-letter lower-case tag that langcodes accepts, with its canonical form: the tags a corpus
# mostly holds, answered without importing langcodes, whose validity pattern (one regular expression
# over the whole IANA registry) costs each command 30-100 ms to compile. Made from langcodes 3.5; checked
# against the installed langcodes for all 676 two-letter strings by tests/test_langtags.py
# (test_two_letter_tags_are_langcodes_answers). Any other tag asks langcodes.
_SAME = (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da "
    "de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz "
    "ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln "
    "lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi "
    "pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti "
    "tk tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"
)
_TWO_LETTER: dict[str, str] = {t: t for t in _SAME.split()} | {
    "in": "id",
    "iw": "he",
    "ji": "yi",
    "jw": "jv",
    "mo": "ro",
    "sh": "sr-Latn",
    "tl": "fil",
}


@lru_cache(maxsize=1024)
def canonical(tag: str) -> str | None:
    """The canonical BCP 47 form of ``tag``; None when it is not a valid tag."""
    if not isinstance(tag, str) or not tag or tag != tag.strip():
        return None
    if len(tag) == 2 and tag.isascii() and tag.isalpha() and tag.islower():
        return _TWO_LETTER.get(tag)
    import langcodes

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
