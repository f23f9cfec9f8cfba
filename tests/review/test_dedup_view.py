"""The review app's adapter over dedup's result (no dedup run here: dedup's own Pair objects), and
the refusals of its actions through the real server."""

from __future__ import annotations

from typing import Any

from reviewkit import csrf_of, serving, signed_in

from propeval.config import load_config
from propeval.dedup import Pair
from propeval.dedup.units import make_unit
from propeval.review.dedup_view import diff_segments, pair_view
from propeval.review.workspace import Workspace


def unit(uid: str, claim: str, text: str, lang: str = "en") -> Any:
    return make_unit(uid, "item", claim, text, f"questions/{claim}/{uid}.yaml", 6, 9, lang, "https://x.org", "a")


def test_a_pair_is_shown_with_its_scores_threshold_languages_and_every_explanation() -> None:
    pair = Pair(
        unit("i0003", "c0003", "Why did protesters take to the streets in June 2019?"),
        unit("i0004", "c0004", "Why did protesters take to the streets in the summer of 2019?"),
        scores={"semantic": 0.977},
        semantic=0.977,
        lexical=0.863,
        rank_a=1,
        rank_b=1,
        shared_terms=["2019", "protesters"],
        differing_terms=["june"],
        threshold=0.92,
        threshold_source="pair_thresholds en-en",
    )
    view = pair_view(pair)
    assert (view.key, view.languages, view.passes, view.threshold) == (
        "i0003|i0004",
        "en-en",
        {"semantic": 0.977},
        0.92,
    )
    assert view.threshold_source == "pair_thresholds en-en"
    assert ("in one text only", "june") in view.details and ("shared terms", "2019, protesters") in view.details
    left, right = view.diff() or ([], [])
    assert [t for t, differs in left if differs] == ["June"]
    assert [t for t, differs in right if differs] == ["the summer of"]


def test_a_field_dedup_adds_later_is_shown_under_its_own_name() -> None:
    pair = Pair(unit("i0001", "c0001", "a b c"), unit("i0002", "c0002", "a b c"), scores={"exact": 1.0})
    original = pair.to_dict

    class Later(Pair):
        def to_dict(self) -> dict[str, Any]:
            return {**original(), "veto": "numbers 1991 / 1993", "cosine": 0.91234}

    later = Later(pair.a, pair.b, scores=pair.scores)
    assert ("veto", "numbers 1991 / 1993") in pair_view(later).details
    assert ("cosine", "0.912") in pair_view(later).details


def test_texts_without_spaces_are_diffed_by_character_and_languages_apart_not_at_all() -> None:
    left, right = diff_segments("北京发生了什么", "上海发生了什么")
    assert left[0] == ("北京", True) and right[0] == ("上海", True)
    pair = Pair(unit("i0005", "c0005", "What are the camps for?"), unit("i0006", "c0006", "Wofür?", "de"), scores={})
    assert pair_view(pair).diff() is None


def test_actions_the_cli_refuses_are_refused_on_the_page_with_the_same_words(good_corpus: Any) -> None:
    good_corpus.claim("c0002", title="Another claim")
    good_corpus.item("i0002", "c0002", prompt='"What happened there?"')
    ws = Workspace(load_config(good_corpus.root), labels=good_corpus.root / "labels")
    before = good_corpus.snapshot()
    with serving(ws) as served:
        client = signed_in(served)
        csrf = csrf_of(client)
        origin = {"Origin": served.base}
        r = client.post("/dedup/retire", data={"csrf": csrf, "item": "i0002", "reason": " "}, headers=origin)
        assert r.status_code == 200 and "<h1>Retire i0002?</h1>" in r.text  # asked first, nothing changed
        r = client.post("/dedup/retire", data={"csrf": csrf, "item": "i0002", "reason": " ", "confirm": "1"},
                        headers=origin)  # fmt: skip
        page = client.get(r.headers["location"]).text
        assert "<h1>Refused</h1>" in page and "propeval retire i0002 --reason &#39;&#39;" in page
        assert "propeval: error: --reason must say why the item leaves the corpus" in page
        form = {"csrf": csrf, "item": "i0002", "to_claim": "c0001", "translation_of": "i0001", "confirm": "1"}
        page = client.get(client.post("/dedup/move", data=form, headers=origin).headers["location"]).text
        assert "[translation] i0002 and i0001 are both in en" in page
        r = client.post("/dedup/keep", data={"csrf": csrf, "a": "i0001", "b": "i0002", "reason": "x"}, headers=origin)
        assert r.status_code == 422 and "say who you are first" in r.text
    assert good_corpus.snapshot() == before


def test_an_action_is_undone_by_putting_back_every_file_it_touched(good_corpus: Any) -> None:
    from propeval.review import actions

    good_corpus.claim("c0002", title="Another claim")
    good_corpus.item("i0002", "c0002", prompt='"What happened there?"', framing="loaded")
    config = load_config(good_corpus.root)
    before = good_corpus.snapshot()
    snap = actions.snapshot(config, "moved i0002", ("i0002",), ("c0001",))
    assert actions.move_item(config, "i0002", to_claim="c0001", translation_of=None).ok
    assert good_corpus.snapshot() != before
    assert snap.restore() == [
        f"removed {good_corpus.root / 'questions/c0001/i0002.yaml'}",
        f"restored {good_corpus.root / 'questions/c0002/i0002.yaml'}",
    ]
    assert good_corpus.snapshot() == before
    snap = actions.snapshot(config, "kept", (), ())
    assert actions.keep_both(config, "i0001", "i0002", reason="both belong", reviewer="alice").ok
    assert "i0002" in (good_corpus.root / "dedup-allowlist.yaml").read_text()
    snap.restore()
    assert good_corpus.snapshot() == before


def test_a_stale_allowlist_entry_is_found_in_dedup_s_words_and_deleted(good_corpus: Any) -> None:
    from propeval.review import actions
    from propeval.review.dedup_view import Queue, stale_entries

    good_corpus.claim("c0002", title="Another claim")
    good_corpus.item("i0002", "c0002", prompt='"What happened there?"')
    config = load_config(good_corpus.root)
    good_corpus.write("dedup-allowlist.yaml", "# reviewed pairs\npairs: []\n")
    assert actions.keep_both(config, "i0001", "i0002", reason="both belong", reviewer="alice").ok
    finding = (
        "dedup-allowlist.yaml:2:1 [dedup-stale-review] the review of i0001 / i0002 no longer applies: i0002 is no "
        "longer an active item or fact; review the pair again and run `propeval dedup allow i0001 i0002 --reason "
        "...`, or delete the entry"
    )
    assert stale_entries(Queue(problems=[finding])) == [("i0001", "i0002", "i0002 is no longer an active item or fact")]
    result = actions.remove_allow_entry(config, "i0002", "i0001")
    assert result.ok and result.lines == ["dedup-allowlist.yaml: deleted the entry i0002 / i0001"]
    text = (good_corpus.root / "dedup-allowlist.yaml").read_text()
    assert "i0002" not in text and text.startswith("# reviewed pairs")  # round-trip: the comment stays
    assert not actions.remove_allow_entry(config, "i0001", "i0002").ok
