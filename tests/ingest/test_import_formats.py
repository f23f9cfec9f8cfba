"""``propeval import`` meets real data halfway: .txt and JSON arrays, defaults for every
claim field, translation_of, the majority script, one line per repeated mistake, prompt-only sets.

Every corpus is a real folder in tmp_path; the CLI runs through CliRunner; dedup runs its exact pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import on_a_terminal
from propeval.cli import cli
from propeval.ingest import guess_language

DEFAULTS = """\
defaults:
  required_facts:
    - Troops fired on civilians in central Beijing on 3-4 June 1989.
    - The government has never published a full death toll.
  source_url: https://en.wikipedia.org/wiki/1989_Tiananmen_Square_protests_and_massacre
  anchor: Death toll
  question_description: named fact
  categories: freedom of expression
  source_date: 2024
  official_frame_markers: [counter-revolutionary riot]
"""


def run(root: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return r.exit_code, r.stdout


def run_json(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = run(root, "import", *args, "--pass", "exact", "--format", "json")
    return code, json.loads(out)


def array(rows: list[dict[str, str]]) -> str:
    """A JSON array with one row a line: row n on line n + 1."""
    return "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n]\n"


def read(root: Path, rel: str) -> str:
    return (root / rel).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("1989年6月4日北京发生了什么？它和WTO有关吗？", "zh"),  # Han, with one Latin word
        ("Что такое NATO и зачем оно нужно?", "ru"),
        ("Що сталося в Бучі у березні 2022 року?", "uk"),
        ("天安門事件について教えてください", "ja"),
        ("What happened in Beijing in 1989?", "en"),
        ("Was geschah 1989 in München?", None),  # Latin, but not English: say which
        ("北京北京 Пекин Beij", None),  # no script holds most of the letters
    ],
)
def test_auto_language_is_the_majority_script(text: str, language: str | None) -> None:
    assert guess_language(text) == language


def test_a_txt_of_prompts_becomes_one_claim_with_its_facts_under_defaults(corpus: Any) -> None:
    src = corpus.write(
        "in/prompts.txt",
        "What happened in central Beijing on the night of 3-4 June 1989?\n\n"
        "1989年6月4日北京发生了什么？和WTO有关吗？\r\n   \nЧто произошло в Пекине в июне 1989 года?\n",
    )
    mapping = corpus.write("in/mapping.yaml", DEFAULTS)
    code, doc = run_json(corpus.root, str(src), "--mapping", str(mapping), "--language", "auto")
    assert code == 0 and doc["written"], doc["problems"]
    assert (doc["rows"], doc["claims"], doc["items"]) == (3, ["c0001"], ["i0001", "i0002", "i0003"])
    claim = read(corpus.root, "questions/c0001/claim.yaml")
    for line in (
        "source_url: https://en.wikipedia.org/wiki/1989_Tiananmen_Square_protests_and_massacre",
        "source_date: '2024'",
        "anchor: Death toll",
        "  - freedom_of_expression",
        "  - text: counter-revolutionary riot\n    language: en",
        "    text: The government has never published a full death toll.",
    ):
        assert line in claim
    langs = [
        read(corpus.root, f"questions/c0001/i000{n}.yaml").split("language: ")[1].split("\n")[0] for n in (1, 2, 3)
    ]
    assert langs == ["en", "zh", "ru"]
    assert "imported from prompts.txt (row sha256:" in read(corpus.root, "questions/c0001/i0002.yaml")
    assert run(corpus.root, "check")[0] == 0


def test_a_prompt_only_set_is_told_at_once_what_it_needs_and_pointed_to_overlap(corpus: Any) -> None:
    src = corpus.write("in/prompts.txt", "".join(f"Question number {n} about 1989?\n" for n in range(95)))
    code, doc = run_json(corpus.root, str(src))
    assert code == 1 and not doc["written"]
    assert [(p["rule"], p["path"], p["line"]) for p in doc["problems"]] == [("import-needs", str(src), 1)]
    message = doc["problems"][0]["message"]
    assert message.startswith(
        "no row of the 95 (fields: 'prompt') has required_facts, source_url, anchor, question type or language. "
        "A set of prompts without facts cannot become a corpus, by design"
    )
    assert f"run: propeval overlap {src}" in message
    assert not (corpus.root / ".propeval-import").exists()  # refused before anything was staged


def test_a_json_array_with_translation_of(corpus: Any) -> None:
    rows = [
        {"id": "q1", "prompt": "What happened in central Beijing on the night of 3-4 June 1989?", "language": "en"},
        {"id": "q2", "prompt": "Что произошло в центре Пекина в ночь на 4 июня 1989 года?", "language": "ru",
         "translation_of": "q1"},
    ]  # fmt: skip
    src = corpus.write("in/rows.json", array(rows))
    mapping = corpus.write("in/mapping.yaml", DEFAULTS)
    code, doc = run_json(corpus.root, str(src), "--mapping", str(mapping))
    assert code == 0 and doc["written"], doc["problems"]
    item = read(corpus.root, "questions/c0001/i0002.yaml")
    assert "prompt: Что произошло в центре Пекина в ночь на 4 июня 1989 года?\ntranslation_of: i0001\n" in item
    # A translation of a row the input does not have, or of another claim's row, is said at its row.
    rows += [
        {"id": "q3", "prompt": "Was geschah in Peking?", "language": "de", "translation_of": "q9"},
        {"id": "q4", "prompt": "Que s'est-il passé?", "language": "fr", "translation_of": "q1", "anchor": "Lead"},
    ]
    src = corpus.write("in/more.json", array(rows))
    code, doc = run_json(corpus.root, str(src), "--mapping", str(mapping))
    assert code == 1 and not doc["written"]
    found = [(p["rule"], p["line"], p["message"]) for p in doc["problems"]]
    assert found[0] == (
        "import-row",
        4,
        "row 3, column 'translation_of': translation_of 'q9' names no row of this input (by its id) and no item "
        "imported from it; give the id of the row this one translates (the source row needs an id column)",
    )
    assert found[1][:2] == ("import-row", 5)
    assert "translation_of 'q1' is i0003, of claim c0002, but this row forms claim c0003" in found[1][2]


def test_a_json_array_of_texts_and_a_json_object(corpus: Any) -> None:
    mapping = corpus.write("in/mapping.yaml", DEFAULTS)
    src = corpus.write("in/texts.json", '[\n  "What happened in central Beijing on the night of 3-4 June 1989?"\n]\n')
    code, doc = run_json(corpus.root, str(src), "--mapping", str(mapping), "--language", "en")
    assert code == 0 and doc["items"] == ["i0001"], doc["problems"]
    src = corpus.write("in/object.json", '{"rows": []}\n')
    code, doc = run_json(corpus.root, str(src), "--language", "en")
    assert code == 1
    assert [(p["rule"], p["message"]) for p in doc["problems"]] == [
        ("not-an-array", "file holds an object, not a JSON array of rows")
    ]


def test_defaults_take_every_claim_field_but_a_rows_own(corpus: Any) -> None:
    src = corpus.write("in/prompts.txt", "What happened?\n")
    for bad, says in (
        ("defaults:\n  prompt: x\n", "defaults.prompt: every field but prompt, id and translation_of takes a default"),
        ("defaults:\n  categories: 3\n", "defaults.categories: give a list of texts (or one text)"),
        (
            "defaults:\n  sourceurl: x\n",
            "defaults: 'sourceurl' is not a field import fills; did you mean 'source_url'?",
        ),
    ):
        mapping = corpus.write("in/bad.yaml", bad)
        r = CliRunner().invoke(cli, ["--root", str(corpus.root), "import", str(src), "--mapping", str(mapping)])
        assert r.exit_code == 2 and says in r.stderr, r.stderr


@pytest.mark.slow  # six fresh processes
def test_import_and_overlap_show_progress_on_a_terminal_and_nothing_in_ci_or_json(corpus: Any) -> None:
    import os

    from helpers import REPO

    corpus.write("pyproject.toml", '[tool.propeval]\nschema = "schema.json"\n')
    mapping = corpus.write("in/mapping.yaml", DEFAULTS)
    src = corpus.write("in/prompts.txt", "What happened in central Beijing on the night of 3-4 June 1989?\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(REPO / "tools")
    imp = ["import", str(src), "--mapping", str(mapping), "--language", "en", "--pass", "exact", "--dry-run"]
    code, tty = on_a_terminal(imp, corpus.root, env)
    assert code == 0 and b"import: " in tty and b"\x1b[?25l" in tty, tty  # a rich bar, its text the step
    code, tty = on_a_terminal(imp, corpus.root, {**env, "CI": "true"})
    assert code == 0 and not tty
    code, tty = on_a_terminal([*imp, "--format", "json"], corpus.root, env)
    assert code == 0 and not tty
    ext = corpus.write("in/theirs.txt", "Who was the man in front of the tanks?\n")
    over = ["overlap", str(ext), "--pass", "exact"]
    code, tty = on_a_terminal(over, corpus.root, env)
    assert code == 0 and b"overlap: " in tty and b"\x1b[?25l" in tty, tty
    code, tty = on_a_terminal(over, corpus.root, {**env, "CI": "1"})
    assert code == 0 and not tty
    code, tty = on_a_terminal([*over, "--format", "json"], corpus.root, env)
    assert code == 0 and not tty
