"""`propeval new`: the next free id, every required field, placeholders that check rejects."""

from __future__ import annotations

from click.testing import CliRunner

from propeval.cli import cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_new_claim_and_item_with_every_flag(corpus) -> None:  # type: ignore[no-untyped-def]
    code, out = run(
        "new",
        "claim",
        "--kind",
        "narrative",
        "--title",
        "NATO promise",
        "--fact",
        "No treaty says so.",
        "--fact",
        "Russia signed the Founding Act in 1997.",
        "--source-url",
        "https://en.wikipedia.org/wiki/X",
        "--source-date",
        "2024-05",
        "--anchor",
        "Intro",
        "--category",
        "democracy_governance",
        "--marker",
        "en:broke its promise",
        "--marker",
        "ru:нарушило обещание",
        "--narrative",
        "NATO broke a promise not to expand.",
        "--actor",
        "West",
    )
    assert (code, out) == (0, "questions/c0001/claim.yaml\n")
    code, out = run("new", "item", "--claim", "c0001", "--prompt", "Did NATO promise not to expand eastward?")
    assert (code, out) == (0, "questions/c0001/i0001.yaml\n")
    code, out = run(
        "new",
        "item",
        "--claim",
        "c0001",
        "--framing",
        "loaded",
        "--question-type",
        "frame_testing",
        "--prompt",
        "Why did NATO break its promise not to expand?",
    )
    assert (code, out) == (0, "questions/c0001/i0002.yaml\n")
    # A translation takes its source's framing and question type unless told otherwise.
    code, out = run(
        "new",
        "item",
        "--claim",
        "c0001",
        "--language",
        "ru",
        "--translation-of",
        "i0002",
        "--prompt",
        "Почему НАТО нарушило обещание не расширяться?",
    )
    assert (code, out) == (0, "questions/c0001/i0003.yaml\n")
    text = (corpus.root / "questions/c0001/i0003.yaml").read_text(encoding="utf-8")
    assert text == (
        "id: i0003\nclaim_id: c0001\nlanguage: ru\nframing: loaded\nquestion_type: frame_testing\n"
        "prompt: Почему НАТО нарушило обещание не расширяться?\ntranslation_of: i0002\nstatus: active\n"
    )
    assert run("check") == (0, "ok: 4 file(s) checked, no problems\n")
    code, out = run("new", "item", "--claim", "c0001", "--language", "de", "--translation-of", "i0099")
    assert (code, out) == (
        2,
        "propeval: error: --translation-of i0099: no such item in claim 'c0001'; "
        "a translation stays inside its claim\n",
    )


def test_placeholders_are_rejected_until_filled(corpus) -> None:  # type: ignore[no-untyped-def]
    assert run("new", "claim")[0] == 0
    assert run("new", "item", "--claim", "c0001")[0] == 0
    code, out = run("check")
    assert code == 1
    lines = out.splitlines()
    assert lines == [
        "questions/c0001/claim.yaml:3:8 [placeholder] fill in this field: replace the placeholder 'TODO: a short title'",
        "questions/c0001/claim.yaml:6:11 [placeholder] fill in this field: replace the placeholder 'TODO: the first required fact, in our own words'",
        "questions/c0001/claim.yaml:8:11 [placeholder] fill in this field: replace the placeholder 'TODO: the second required fact'",
        "questions/c0001/claim.yaml:9:13 [placeholder] fill in this field: replace the placeholder 'TODO: https://... a source that supports every fact'",
        "questions/c0001/claim.yaml:10:9 [placeholder] fill in this field: replace the placeholder 'TODO: where in the source the facts stand (section, article, paragraph)'",
        "questions/c0001/claim.yaml:12:5 [placeholder] fill in this field: replace the placeholder 'TODO: one of the seven categories'",
        "questions/c0001/i0001.yaml:6:9 [placeholder] fill in this field: replace the placeholder 'TODO: the question, as a user would ask it'",
        "7 error(s), 0 warning(s) in 2 file(s) checked",
    ]


def test_next_id_skips_past_the_highest_and_never_overwrites(good_corpus) -> None:  # type: ignore[no-untyped-def]
    good_corpus.item("i0007", language="ru", prompt="Что произошло?", translation_of="i0001")
    assert run("new", "item", "--claim", "c0001", "--language", "de")[1] == "questions/c0001/i0008.yaml\n"
    assert run("new", "claim")[1] == "questions/c0002/claim.yaml\n"
    before = good_corpus.snapshot()
    code, out = run("new", "item", "--claim", "c0001", "--id", "i0001")
    assert code == 2
    assert out == "propeval: error: questions/c0001/i0001.yaml already exists; pick another id\n"
    code, out = run("new", "item", "--claim", "c0042")
    assert code == 2
    assert out.startswith("propeval: error: claim 'c0042' does not exist")
    assert good_corpus.snapshot() == before


def test_bad_marker_flag_is_a_usage_error(corpus) -> None:  # type: ignore[no-untyped-def]
    code, out = run("new", "claim", "--marker", "no colon here")
    assert code == 2
    assert "write a marker as LANG:TEXT" in out
    assert not (corpus.root / "questions/c0001").exists()


def test_claim_kinds_come_from_the_corpus_schema_for_new_and_import(corpus) -> None:  # type: ignore[no-untyped-def]
    """A kind the corpus's schema.json adds is accepted by `new claim` and `import`; one it lacks is
    refused before anything is written, naming the schema's kinds."""
    import json

    from propeval.builtin import SCHEMA

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    schema["$defs"]["claim"]["properties"]["kind"]["enum"].append("history")
    corpus.write("schema.json", json.dumps(schema, indent=2))
    corpus.write("in/prompts.txt", "What happened in Kyiv in 1240?\n")
    corpus.write(
        "in/defaults.yaml",
        "defaults:\n"
        "  required_facts: [The Mongols took Kyiv in December 1240., The city was largely destroyed.]\n"
        "  source_url: https://en.wikipedia.org/wiki/Siege_of_Kiev_(1240)\n"
        "  anchor: Lead section\n"
        "  question_description: named fact\n"
        "  categories: [state_ideology]\n",
    )
    before = corpus.snapshot()
    for command in (["new", "claim"], ["import", "in/prompts.txt"]):
        code, out = run(*command, "--kind", "folklore")
        assert code == 2, out
        assert out == (
            "propeval: error: --kind 'folklore' is not a claim kind of the schema; "
            "use one of: censorship, narrative, audit, history\n"
        )
        assert corpus.snapshot() == before
    assert run("new", "claim", "--kind", "history") == (0, "questions/c0001/claim.yaml\n")
    assert "\nkind: history\n" in (corpus.root / "questions/c0001/claim.yaml").read_text(encoding="utf-8")
    code, out = run(
        "import",
        "in/prompts.txt",
        "--mapping",
        "in/defaults.yaml",
        "--language",
        "en",
        "--kind",
        "history",
        "--no-dedup",
    )
    assert code == 0, out
    assert "\nkind: history\n" in (corpus.root / "questions/c0002/claim.yaml").read_text(encoding="utf-8")


def test_a_claim_with_too_few_or_too_many_facts_is_refused_at_new_as_check_would(corpus) -> None:  # type: ignore[no-untyped-def]
    """`new claim` takes the count of --fact from the corpus schema's minItems and maxItems and says
    what `check` would say of the file; nothing is written."""
    import json

    from propeval.builtin import SCHEMA

    rest = ["--title", "T", "--source-url", "https://example.org/a", "--anchor", "s", "--category", "state_ideology"]
    before = corpus.snapshot()
    code, out = run("new", "claim", "--fact", "Only one.", *rest)
    assert (code, out) == (
        2,
        "propeval: error: --fact [schema] facts has 1 entry; at least 2 are required; "
        "give each required fact with its own --fact\n",
    )
    code, out = run("new", "claim", *[a for n in range(5) for a in ("--fact", f"Fact {n}.")], *rest)
    assert code == 2 and "--fact [schema] facts has 5 entries; at most 4 are allowed" in out, out
    assert corpus.snapshot() == before
    # the bound is the schema's: a corpus that allows one fact takes one, and check agrees
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    schema["$defs"]["claim"]["properties"]["facts"]["minItems"] = 1
    corpus.write("schema.json", json.dumps(schema, indent=2))
    assert run("new", "claim", "--fact", "Only one.", *rest) == (0, "questions/c0001/claim.yaml\n")
    code, out = run("check")
    assert "facts has" not in out, out
