"""Canonical language tags: `new` and `check` refuse, `check --fix` rewrites in place,
and stats, groups and dedup count a tag as one language by one rule."""

from __future__ import annotations

import json

from click.testing import CliRunner

from propeval.cli import cli
from propeval.langtags import canonical, language_key, problem, suggestion


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_rule() -> None:
    assert [canonical(t) for t in ("ru_RU", "RU", "ru-RU", "iw", "ua", "english", " en")] == [
        "ru-RU",
        "ru",
        "ru-RU",
        "he",
        None,
        None,
        None,
    ]
    assert [suggestion(t) for t in ("ua", "cn", "jp", "xx", "us")] == ["uk", "zh", "ja", None, None]
    assert problem("uk") is None
    assert [language_key(t) for t in ("ru-RU", "ru_RU", "RU", "zh-Hans", "sh")] == ["ru", "ru", "ru", "zh", "sr"]


def test_two_letter_tags_are_langcodes_answers() -> None:
    """The table that answers two-letter tags without importing langcodes says what langcodes says,
    for every two-letter lower-case string (valid or not)."""
    import itertools
    import string

    import langcodes

    from propeval import langtags

    def by_langcodes(tag: str) -> str | None:
        return str(langcodes.standardize_tag(tag)) if langcodes.tag_is_valid(tag) else None

    for a, b in itertools.product(string.ascii_lowercase, repeat=2):
        tag = a + b
        assert langtags._TWO_LETTER.get(tag) == by_langcodes(tag), tag
        assert canonical(tag) == by_langcodes(tag), tag


def test_new_item_refuses_non_canonical_tags_and_writes_nothing(good_corpus) -> None:  # type: ignore[no-untyped-def]
    before = good_corpus.snapshot()
    for tag, said in (
        ("ru_RU", "--language: 'ru_RU' is not in canonical BCP 47 form; write 'ru-RU' Run again with --language ru-RU"),
        ("ua", "--language: 'ua' is not a valid BCP 47 language tag; did you mean 'uk'? Run again with --language uk"),
        ("RU", "--language: 'RU' is not in canonical BCP 47 form; write 'ru' Run again with --language ru"),
    ):
        code, out, err = run("new", "item", "--claim", "c0001", "--language", tag)
        assert (code, out, err) == (2, "", f"propeval: error: {said}\n")
    code, _, err = run("new", "claim", "--marker", "ua:щось")
    assert code == 2 and "--marker: 'ua' is not a valid BCP 47 language tag; did you mean 'uk'?" in err
    assert good_corpus.snapshot() == before
    assert run("new", "item", "--claim", "c0001", "--language", "uk")[:2] == (0, "questions/c0001/i0002.yaml\n")


def test_check_refuses_with_the_tag_to_write(good_corpus) -> None:  # type: ignore[no-untyped-def]
    good_corpus.item("i0002", language="ru_RU", prompt="Что произошло?")
    good_corpus.item("i0003", language="ua", prompt="Що сталося?")
    code, out, _ = run("check")
    assert code == 1
    # One mistake, one message: schema.json's pattern refuses ru_RU as well, without a suggestion;
    # the language rule names the fix, so the raw pattern message is left out.
    assert [
        line for line in out.splitlines() if line.startswith(("questions/c0001/i0002", "questions/c0001/i0003"))
    ] == [
        "questions/c0001/i0002.yaml:3:11 [language] 'ru_RU' is not in canonical BCP 47 form; write 'ru-RU' (propeval check --fix writes it)",
        "questions/c0001/i0003.yaml:3:11 [language] 'ua' is not a valid BCP 47 language tag; did you mean 'uk'?",
    ]
    # Asked for the schema rule alone, the pattern message is there: nothing else speaks for the value.
    code, out, _ = run("check", "--rule", "schema")
    assert "questions/c0001/i0002.yaml:3:11 [schema] 'ru_RU' does not match the pattern" in out


MESSY = """\
# A hand-edited item: comments, odd quoting and spacing must survive a fix.
id:   i0002      # the id
claim_id: 'c0001'
language: ru_RU  # was written by an old `new`
framing: "neutral"
question_type: named_fact
prompt: >-
  Что произошло
  в Пекине?
status: active
"""


def test_fix_rewrites_only_the_tags_and_leaves_the_rest_byte_for_byte(good_corpus) -> None:  # type: ignore[no-untyped-def]
    good_corpus.write("questions/c0001/i0002.yaml", MESSY)
    claim = good_corpus.root / "questions/c0001/claim.yaml"
    claim.write_text(
        claim.read_text(encoding="utf-8").replace("    language: en", '    language: "EN"'), encoding="utf-8"
    )
    claim_before = claim.read_text(encoding="utf-8")
    untouched = good_corpus.snapshot()["questions/c0001/i0001.yaml"]
    good_corpus.item("i0003", language="ua", prompt="Що сталося?")
    code, out, err = run("check", "--fix")
    assert err.splitlines() == [
        "fixed: questions/c0001/claim.yaml:15:15 [language] 'EN' -> 'en'",
        "fixed: questions/c0001/i0002.yaml:4:11 [language] 'ru_RU' -> 'ru-RU'",
    ]
    # The guess for an invalid tag is reported, never applied.
    assert code == 1
    assert out.splitlines()[0].startswith("questions/c0001/i0003.yaml:3:11 [language] 'ua' is not a valid")
    fixed = (good_corpus.root / "questions/c0001/i0002.yaml").read_text(encoding="utf-8")
    assert fixed == MESSY.replace("language: ru_RU  #", "language: ru-RU  #")
    assert claim.read_text(encoding="utf-8") == claim_before.replace('language: "EN"', 'language: "en"')
    assert good_corpus.snapshot()["questions/c0001/i0001.yaml"] == untouched
    # A second run has nothing left to fix.
    assert run("check", "--fix", "questions/c0001/i0002.yaml")[::2] == (0, "")


def test_one_rule_for_stats_and_groups(good_corpus) -> None:  # type: ignore[no-untyped-def]
    good_corpus.item("i0002", language="ru-RU", prompt="Что произошло в Пекине?", translation_of="i0001")
    good_corpus.item("i0003", language="ru", prompt="Что случилось в Пекине?", translation_of="i0001")
    code, out, _ = run("stats", "--format", "json")
    assert code == 0
    assert json.loads(out)["by_language"] == {"en": 1, "ru": 2}
    # ru-RU and ru are one language to groups as well: two items in one cell conflict.
    code, out, _ = run("groups", "--format", "json")
    assert code == 1
    assert [p["rule"] for p in json.loads(out)["problems"]] == ["groups-conflict"]
    code, out, _ = run("groups", "--matrix", "c0001", "--format", "json")
    assert json.loads(out)["matrices"][0]["languages"] == ["en", "ru-RU"]
