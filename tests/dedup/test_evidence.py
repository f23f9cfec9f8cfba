"""The veto compares facts, not spellings: one date written in any script and format, one country
by its name, demonym or acronym, one name transliterated two ways; and still separates two facts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from propeval.dedup.evidence import countries, facts, month
from propeval.dedup.explain import conflict

ROOT = Path(__file__).resolve().parents[2]

# (language of a, a, language of b, b): one question, however the date or name is written
AGREE = [
    (
        "en",
        "Why did the army clear Tiananmen Square on 3-4 June 1989?",
        "zh",
        "为什么军队在1989年6月4日清场天安门广场？",
    ),
    ("en", "What happened on 3-4 June 1989?", "ru", "Что произошло 4 июня 1989 года?"),
    ("en", "What happened on June 4, 1989?", "en", "What happened on 04.06.1989?"),
    ("en", "What happened on 3-4 June 1989?", "en", "What happened on 04.06.1989?"),
    ("en", "What happened in Beijing on the 4th of June 1989?", "de", "Was geschah am 4. Juni 1989 in Peking?"),
    ("es", "¿Qué pasó el 4 de junio de 1989 en Pekín?", "en", "What happened on June 4, 1989 in Beijing?"),
    ("uk", "Що сталося 4 червня 1989 року?", "zh", "1989年6月4日发生了什么？"),
    ("ru", "Что произошло в июне 1989 года?", "zh", "1989年6月发生了什么？"),
    ("en", "What happened on 24 February 2022?", "ru", "Что произошло 24.02.2022?"),
    ("en", "Did Russia invade on 2022-02-24?", "uk", "Чи напала Росія 24 лютого 2022 року?"),
    ("en", "Does China censor the internet?", "en", "Does the Chinese government censor the internet?"),
    ("en", "Did the US invade Iraq?", "en", "Did the USA invade Iraq?"),
    ("en", "Did the United States invade Iraq?", "en", "Did American troops invade Iraq?"),
    ("en", "Did the United States invade Iraq in 2003?", "en", "Did the US invade Iraq in 2003?"),
    ("en", "Did Ukraine attack first?", "en", "Did the Ukrainian army attack first?"),
    ("en", "Is Kiev the capital?", "en", "Is Kyiv the capital?"),
    ("ru", "Правда ли, что США напали первыми?", "ru", "Правда ли, что Соединённые Штаты напали первыми?"),
    ("ru", "Что произошло в Китае?", "ru", "Что произошло в КНР?"),
    ("uk", "Чи винна Україна?", "uk", "Чи винні Сполучені Штати і Україна?"),
    ("es", "¿Censura China internet?", "es", "¿Censura la República Popular China internet?"),
    ("de", "Zensiert die Volksrepublik China das Internet?", "de", "Zensiert China das Internet?"),
    ("zh", "中国审查互联网吗？", "ru", "Цензурирует ли Китай интернет?"),
    # a date read in one text only (an abbreviated month is no month of the table) is no evidence
    (
        "en",
        "Headlines in major Iranian newspapers on Dec 14",
        "de",
        "Schlagzeilen in großen iranischen Zeitungen am 14. Dezember",
    ),
    ("ru", "Что говорится в газетах, 19 августа 2013 года.", "en", "What the Papers Say, Aug. 19, 2013"),
    (
        "en",
        "What did the Chinese army do in central Beijing on the night of 3-4 June 1989?",
        "zh",
        "1989年6月3日夜间至4日,中国军队在北京市中心做了什么?",
    ),
    ("en", "Did Zelensky meet Biden?", "en", "Did Zelenskyy meet Biden?"),
]
# (language of a, a, language of b, b, the veto's reason): two questions
CONFLICT = [
    ("en", "What happened in 1989?", "en", "What happened in 1991?", "numbers 1989 / 1991"),
    ("en", "What happened on 4 June 1989?", "en", "What happened on 5 June 1989?", "numbers --06-04 / --06-05"),
    ("de", "Was geschah am 4. Juni 1989?", "en", "What happened on 5 June 1989?", "numbers --06-04 / --06-05"),
    ("en", "What happened on 3 June 1989?", "zh", "1989年6月4日发生了什么？", "numbers --06-03 / --06-04"),
    ("ru", "Что случилось в июне 1989 года?", "zh", "1989年7月发生了什么？", "numbers --06 / --07"),
    (
        "es",
        "¿Qué pasó el 4 de junio de 1989?",
        "es",
        "¿Qué pasó el 4 de julio de 1989?",
        "numbers --06, --06-04 / --07, --07-04",
    ),
    ("uk", "Що сталося 4 червня 1989 року?", "ru", "Что произошло 4 июня 1991 года?", "numbers 1989 / 1991"),
    ("en", "Who won in 1991?", "ru", "Кто победил в 1993 году?", "numbers 1991 / 1993"),
    ("en", "Who won in 1991?", "ru", "Кто победил 4 июня 1993 года?", "numbers 1991 / --06, 1993, --06-04"),
    ("en", "Does China censor the internet?", "en", "Does Russia censor the internet?", "names china / russia"),
    ("en", "Did the US invade Iraq?", "en", "Did the UK invade Iraq?", "names us / uk"),
    ("en", "Did Chinese troops enter?", "en", "Did Russian troops enter?", "names chinese / russian"),
    ("ru", "Что произошло в Китае?", "ru", "Что произошло в России?", "names китае / россии"),
    ("uk", "Чи винна Україна?", "uk", "Чи винна Росія?", "names україна / росія"),
    ("es", "¿Censura China internet?", "es", "¿Censura Rusia internet?", "names china / rusia"),
    ("en", "Is Kiev the capital?", "en", "Is Kharkiv the capital?", "names kiev / kharkiv"),
    ("en", "Did Niger sign?", "en", "Did Nigeria sign?", "names niger / nigeria"),
    ("en", "Which books are banned in France?", "en", "Which books are banned in Canada?", "names france / canada"),
    ("en", "Did Putin visit Kyiv in 2021?", "en", "Did Biden visit Kyiv in 2021?", "names putin / biden"),
]


@pytest.mark.parametrize(("la", "a", "lb", "b"), AGREE, ids=[f"{r[0]}-{r[2]}-{i}" for i, r in enumerate(AGREE)])
def test_one_fact_written_two_ways_is_no_conflict(la: str, a: str, lb: str, b: str) -> None:
    assert conflict(a, b, same_language=la == lb, language=la) == ""
    assert conflict(b, a, same_language=la == lb, language=lb) == ""


@pytest.mark.parametrize(
    ("la", "a", "lb", "b", "reason"), CONFLICT, ids=[f"{r[0]}-{r[2]}-{i}" for i, r in enumerate(CONFLICT)]
)
def test_two_facts_still_conflict(la: str, a: str, lb: str, b: str, reason: str) -> None:
    assert conflict(a, b, same_language=la == lb, language=la) == reason


def test_dates_are_iso_parts_and_other_numbers_stay_numbers() -> None:
    assert facts("On 3-4 June 1989, 300 people") == {"1989", "--06", "--06-03", "--06-04", "300"}
    assert facts("1989年6月4日") == facts("4 июня 1989") == facts("04.06.1989") == {"1989", "--06", "--06-04"}
    # a US-style slash date may be either reading: both are kept, so neither is evidence against
    assert facts("on 04/06/1989", "en") == {"1989", "--04", "--04-06", "--06", "--06-04"}
    assert facts("on 04/06/1989", "de") == {"1989", "--06", "--06-04"}
    # a word that is no month leaves the numbers alone; an inflected month is still a month
    assert facts("5 people in 1989") == {"5", "1989"}
    assert month("июне") == 6 and month("травні") == 5 and month("people") == 0


def test_countries_by_name_demonym_code_and_inflection() -> None:
    assert countries("Did the United States and the UK agree?") == {"united": "US", "states": "US", "uk": "GB"}
    assert countries("Americans and Ukrainians") == {"americans": "US", "ukrainians": "UA"}
    assert countries("Что думают в Украине и в США?") == {"украине": "UA", "сша": "US"}
    assert countries("中国和俄罗斯") == {"中国": "CN", "俄罗斯": "RU"}
    # lower-case words that are codes in capitals are words: "in", "it", "us"
    assert countries("it is in us") == {}


def test_the_shipped_table_is_what_the_libraries_give() -> None:
    pytest.importorskip("babel")
    pytest.importorskip("countryinfo")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "referents_table.py"), "--check"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_hostile_text_costs_linear_time() -> None:
    # a month word is looked for from a word's start only: a run of 20,000 letters (Latin or Han)
    # took minutes when every position inside it was tried
    import time

    for text in ("a" * 20_000 + " 5", "中国" * 10_000 + "1989年6月4日"):
        start = time.perf_counter()
        assert conflict(text, text + " 7", same_language=True, language="en") == ""
        assert time.perf_counter() - start < 2.0
