"""Rating through the review server (real app, real HTTP on loopback): the label files it writes,
the rubric's rules, resuming, two raters at once, and `agree` over files made in the app."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from reviewkit import csrf_of, read_jsonl, serving, signed_in, write_jsonl

from propeval.cli import cli
from propeval.config import load_config
from propeval.review.forms import keys_for
from propeval.review.workspace import Workspace


def workspace(root: Path, *sheets: Path, **kw: Any) -> Workspace:
    return Workspace(load_config(root), labels=root / "labels", sheets=list(sheets), **kw)


class Rater:
    """One browser session: a name, its CSRF token, and the saves the page's script sends."""

    def __init__(self, served: Any, name: str) -> None:
        self.client = signed_in(served)
        self.csrf = csrf_of(self.client)
        r = self.client.post("/rater", data={"csrf": self.csrf, "name": name}, headers={"Origin": served.base})
        assert r.status_code == 303, r.text
        self.origin = served.base

    def save(self, source: str, n: int, values: dict[str, Any], quote: str | None = None) -> dict[str, Any]:
        r = self.client.post(
            f"/rate/{source}/{n}/label",
            json={"values": values, "quote": quote},
            headers={"X-CSRF-Token": self.csrf, "Origin": self.origin},
        )
        assert r.status_code in (200, 422), r.text
        return dict(r.json())


def facts(*states: str) -> dict[str, Any]:
    return {f"fact:f{i}": s for i, s in enumerate(states, start=1)}


def test_keys_come_from_the_rubric_labels() -> None:
    assert keys_for(["stated", "missed", "opposed"]) == ["s", "m", "o"]
    assert keys_for([0, 1, 2, 3, "Refusal"]) == ["0", "1", "2", "3", "r"]
    assert keys_for(["Correct", "Partial", "Misleading", "Refusal"]) == ["c", "p", "m", "r"]
    assert keys_for(["Neutral", "False balance", "Loaded", "Refusal"]) == ["n", "f", "l", "r"]
    assert keys_for(["same", "sure", "sss"]) == ["s", "u", "1"]


def test_a_sheet_of_a_grades_file_carries_what_a_rater_reads_and_nothing_that_unblinds(sheet: Path) -> None:
    rows = read_jsonl(sheet)
    assert len(rows) == 6
    text = sheet.read_text(encoding="utf-8")
    assert "secret-model-x" not in text and "judge-model-y" not in text and "i000" not in text
    first = rows[0]
    assert set(first) == {
        "row", "prompt", "answer", "language", "facts", "frame_markers",
        "fact_states", "fact_score", "propaganda", "frame_adopted",
    }  # fmt: skip
    assert [f["id"] for f in first["facts"]] == ["f1", "f2", "f3", "f4"]
    assert first["frame_markers"] == [{"language": "en", "text": "counter-revolutionary riot"}]


@pytest.mark.slow
def test_labels_set_in_the_app_are_the_sheet_filled_in(sheet: Path) -> None:
    root = sheet.parent
    rows = read_jsonl(sheet)
    answered = [n for n, r in enumerate(rows, start=1) if r["answer"]]
    with serving(workspace(root, sheet)) as served:
        alice = Rater(served, "alice")
        first, second = answered[:2]
        got = alice.save("sheet", first, {**facts("stated", "stated", "missed", "stated"), "propaganda": 0})
        assert got["labelled"] and got["progress"] == [1, 6]
        quote = rows[second - 1]["answer"].split()[:4]
        got = alice.save("sheet", second, {**facts("missed", "missed", "missed", "opposed"), "propaganda": 2},
                         " ".join(quote))  # fmt: skip
        assert got["labelled"], got
    expected = [dict(r) for r in rows]
    expected[first - 1].update(
        fact_states={"f1": "stated", "f2": "stated", "f3": "missed", "f4": "stated"},
        fact_score=4,
        propaganda=0,
        frame_adopted=None,
    )
    expected[second - 1].update(
        fact_states={"f1": "missed", "f2": "missed", "f3": "missed", "f4": "opposed"},
        fact_score=0,
        propaganda=2,
        frame_adopted=" ".join(quote),
    )
    out = root / "labels/sheet/alice.jsonl"
    # Byte for byte what a person typing the labels into the sheet would save (propeval writes
    # sheets as canonical JSON lines, and so does the app).
    assert out.read_text(encoding="utf-8") == "".join(
        json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n" for r in expected
    )
    # and agree unblind maps it back to the item ids with the key, as for a sheet filled by hand
    res = CliRunner().invoke(
        cli, ["agree", "unblind", str(out), "--key", "private/key.json", "--out", "alice-items.jsonl"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    back = read_jsonl(root / "alice-items.jsonl")
    assert [r["fact_score"] for r in back if r["fact_score"] is not None] == [4, 0]


def test_the_rubric_rules_are_the_kind_validator_s(sheet: Path) -> None:
    root = sheet.parent
    rows = read_jsonl(sheet)
    n = next(i for i, r in enumerate(rows, start=1) if r["answer"])
    answer = rows[n - 1]["answer"]
    with serving(workspace(root, sheet)) as served:
        alice = Rater(served, "alice")
        states = facts("stated", "stated", "stated", "stated")
        got = alice.save("sheet", n, {**states, "propaganda": 1})
        assert not got["labelled"] and got["needs_quote"]
        assert got["errors"] == ["propaganda 1 needs a quote: select the words in the answer that adopt the frame"]
        got = alice.save("sheet", n, {**states, "propaganda": 1}, "words that are not in the answer at all")
        assert got["errors"] == ["the quote does not count: frame_adopted is not a verbatim part of the answer"]
        got = alice.save("sheet", n, {**states, "propaganda": 1}, answer.split()[0])
        assert "is shorter than 3 words" in got["errors"][0]
        got = alice.save("sheet", n, {**states, "propaganda": "1"})
        assert got == {"error": "'1' is not one of [0, 1, 2] for propaganda"}
        got = alice.save("sheet", n, {**states, "fact:f9": "stated"})
        assert got == {"error": "'fact:f9' is not a choice on this answer"}
    assert not (root / "labels/sheet/alice.jsonl").exists()  # nothing was ever valid


def test_closing_the_tab_loses_nothing_and_reopening_resumes(sheet: Path) -> None:
    root = sheet.parent
    with serving(workspace(root, sheet)) as served:
        alice = Rater(served, "alice")
        alice.save("sheet", 1, {**facts("stated", "stated", "missed", "stated"), "propaganda": 0})
        alice.save("sheet", 2, facts("stated", "missed"))  # half done, then the tab closes
    with serving(workspace(root, sheet)) as served:  # a new server, a new session
        again = Rater(served, "alice")
        r = again.client.get("/rate/sheet")
        assert r.headers["location"] == "/rate/sheet/2"
        page = again.client.get("/rate/sheet/2").text
        data = json.loads(page.split('id="unit-data">', 1)[1].split("</script>", 1)[0])
        assert data["values"] == facts("stated", "missed")
        assert "1 of 6 labelled" in page


@pytest.mark.slow
def test_two_raters_at_once_write_their_own_files(sheet: Path) -> None:
    root = sheet.parent
    with serving(workspace(root, sheet)) as served:
        raters = {name: Rater(served, name) for name in ("alice", "bob")}
        errors: list[BaseException] = []

        def label(name: str, state: str) -> None:
            try:
                for n in range(1, 7):
                    raters[name].save("sheet", n, {**facts(state, state, state, state), "propaganda": 0})
            except BaseException as e:  # reported by the test's own thread
                errors.append(e)

        threads = [threading.Thread(target=label, args=a) for a in (("alice", "stated"), ("bob", "missed"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
    alice, bob = (read_jsonl(root / f"labels/sheet/{n}.jsonl") for n in ("alice", "bob"))
    assert {r["fact_score"] for r in alice} == {5} and {r["fact_score"] for r in bob} == {0}


def test_one_rater_in_two_tabs_loses_no_label(sheet: Path) -> None:
    """Two sessions with one name save different answers at once: the lock keeps both."""
    root = sheet.parent
    with serving(workspace(root, sheet)) as served:
        tabs = [Rater(served, "alice"), Rater(served, "alice")]

        def label(tab: Rater, ns: range) -> None:
            for n in ns:
                tab.save("sheet", n, {**facts("stated", "stated", "stated", "missed"), "propaganda": 0})

        threads = [threading.Thread(target=label, args=(tabs[0], range(1, 4))),
                   threading.Thread(target=label, args=(tabs[1], range(4, 7)))]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert [r["fact_score"] for r in read_jsonl(root / "labels/sheet/alice.jsonl")] == [4] * 6


@pytest.mark.slow
def test_agree_computes_kappa_from_two_raters_files_made_in_the_app(sheet: Path) -> None:
    root = sheet.parent
    alice_levels = [0, 1, 2, 0, 1, 2]
    bob_levels = [0, 1, 2, 0, 2, 2]
    rows = read_jsonl(sheet)
    with serving(workspace(root, sheet)) as served:
        for name, levels in (("alice", alice_levels), ("bob", bob_levels)):
            rater = Rater(served, name)
            for n, level in enumerate(levels, start=1):
                quote = " ".join(rows[n - 1]["answer"].split()[:4]) if level else None
                if level and not rows[n - 1]["answer"]:
                    level, quote = 0, None
                got = rater.save("sheet", n, {**facts("stated", "stated", "stated", "stated"), "propaganda": level},
                                 quote)  # fmt: skip
                assert got["labelled"], got
    files = [str(root / f"labels/sheet/{n}.jsonl") for n in ("alice", "bob")]
    res = CliRunner().invoke(
        cli,
        ["agree", *files, "--field", "propaganda", "--id-field", "row", "--resamples", "0", "--format", "json"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    kappa = next(s for s in report["pairwise"][0]["stats"] if s["name"] == "cohen_kappa")
    from sklearn.metrics import cohen_kappa_score

    a = [r["propaganda"] for r in read_jsonl(Path(files[0]))]
    b = [r["propaganda"] for r in read_jsonl(Path(files[1]))]
    assert report["units"] == 6 and kappa["n"] == 6
    assert kappa["value"] == pytest.approx(cohen_kappa_score(a, b))
    assert report["raters"] == ["alice", "bob"]


def test_gold_cases_of_an_audit_rubric_refusal_sets_all_three(rcorpus: Any) -> None:
    root = rcorpus.root
    with serving(workspace(root)) as served:
        alice = Rater(served, "alice")
        page = alice.client.get("/rate/audit-v1-gold/2").text
        assert "<kbd>c</kbd> Correct" in page and "<kbd>f</kbd> False balance" in page
        # a gold case's note and label stay hidden (the guidelines, from the prompt, say the rule)
        assert "refusal sets all three" not in page.split('id="guide"')[0]
        assert "Examples from the rubric's gold set" not in page  # not while labelling the gold set
        got = alice.save("audit-v1-gold", 2, {"accuracy": "Refusal", "propaganda_inclusion": 0, "tone": "Neutral"})
        assert not got["labelled"] and "a refusal sets all three" in got["errors"][0]
        got = alice.save("audit-v1-gold", 2, dict.fromkeys(("accuracy", "propaganda_inclusion", "tone"), "Refusal"))
        assert got["labelled"]
    line = read_jsonl(root / "labels/audit-v1-gold/alice.jsonl")[1]
    assert line == {"id": "a002", "accuracy": "Refusal", "propaganda_inclusion": "Refusal", "tone": "Refusal"}


def test_a_label_file_edited_into_nonsense_is_named_and_never_overwritten(sheet: Path) -> None:
    root = sheet.parent
    bad = write_jsonl(root / "labels/sheet/alice.jsonl", [{"row": "r999", "propaganda": 0}])
    before = bad.read_bytes()
    with serving(workspace(root, sheet)) as served:
        alice = Rater(served, "alice")
        got = alice.save("sheet", 1, {**facts("stated", "stated", "stated", "stated"), "propaganda": 0})
        assert got["error"].startswith(f"{bad.as_posix()}:1:1 [labels] row 'r999' is not in sheet.jsonl")
        page = alice.client.get("/rate/sheet/1")
        assert page.status_code == 422 and "this label file belongs to another source" in page.text
    assert bad.read_bytes() == before


def test_a_sheet_without_answers_or_facts_is_refused_at_start(rcorpus: Any) -> None:
    root = rcorpus.root
    write_jsonl(root / "s.jsonl", [{"row": "r001", "prompt": "q", "answer": None, "propaganda": None}])
    res = CliRunner().invoke(cli, ["review", "--sheet", "s.jsonl", "--no-browser"], catch_exceptions=False)
    assert res.exit_code == 1
    assert res.output == (
        "propeval: error: s.jsonl:1:1 [labels] row 'r001' has no answer text to rate; make the sheet from a file with "
        "answers (propeval agree sample of a grades file keeps each item's answer)\n"
    )
    write_jsonl(root / "s.jsonl", [{"row": "r001", "prompt": "q", "answer": "a", "fact_score": None}])
    res = CliRunner().invoke(cli, ["review", "--sheet", "s.jsonl", "--no-browser"], catch_exceptions=False)
    assert (
        res.exit_code == 1
        and "has no facts, and rating fact_score needs them; make the sheet with --show facts" in res.output
    )
    write_jsonl(root / "s.jsonl", [{"row": "r001", "prompt": "q", "answer": "a", "colour": None}])
    res = CliRunner().invoke(cli, ["review", "--sheet", "s.jsonl", "--no-browser"], catch_exceptions=False)
    assert res.exit_code == 2 and "its blank fields (colour) are none that a rubric labels" in res.output


def test_a_rubric_s_gold_candidates_are_offered_with_its_gold_set(rcorpus: Any) -> None:
    root = rcorpus.root
    gold = read_jsonl(root / "rubrics/facts-v1/gold.jsonl")[:2]
    write_jsonl(root / "rubrics/facts-v1/gold-candidates.jsonl", [{k: v for k, v in c.items() if k != "label"}
                                                                   for c in gold])  # fmt: skip
    with serving(workspace(root)) as served:
        alice = Rater(served, "alice")
        home = alice.client.get("/").text
        assert "facts-v1: gold candidates (gold-candidates.jsonl)" in home and "0 of 2" in home
        got = alice.save("facts-v1-gold-candidates", 1, {**facts("stated", "stated"), "propaganda": 0})
        assert got["labelled"] and got["progress"] == [1, 2]
    assert read_jsonl(root / "labels/facts-v1-gold-candidates/alice.jsonl")[0] == {
        "id": gold[0]["id"], "fact_states": {"f1": "stated", "f2": "stated"}, "fact_score": 5,
        "propaganda": 0, "frame_adopted": None,
    }  # fmt: skip


def test_an_edit_into_an_invalid_state_unlabels_the_answer_in_file_progress_and_agree(sheet: Path) -> None:
    """Raising propaganda to 2 on a labelled answer without a quote: the answer is not labelled any
    more, in the label file, in the progress count and for `agree`, as the page says."""
    root = sheet.parent
    rows = read_jsonl(sheet)
    answered = [n for n, r in enumerate(rows, start=1) if r["answer"]][:2]
    ws = workspace(root, sheet)
    with serving(ws) as served:
        for name in ("alice", "bob"):
            rater = Rater(served, name)
            for n in answered:
                assert rater.save("sheet", n, {**facts("stated", "stated", "stated", "stated"), "propaganda": 0})[
                    "labelled"
                ]
        got = rater.save("sheet", answered[0], {**facts("stated", "stated", "stated", "stated"), "propaganda": 2})
        assert not got["labelled"] and got["needs_quote"] and got["progress"] == [1, 6]
        page = rater.client.get(f"/rate/sheet/{answered[0]}").text
        assert "1 of 6 labelled" in page and 'class="status ok"' not in page
        assert "propaganda 2 needs a quote" in page
        files = rater.client.get("/rate/sheet/files").text  # the files page writes every pending save
        assert "labels/sheet/bob.jsonl" in files
        bob = read_jsonl(root / "labels/sheet/bob.jsonl")
        first = bob[answered[0] - 1]
        assert [first[f] for f in ("fact_states", "fact_score", "propaganda", "frame_adopted")] == [None] * 4
        assert bob[answered[1] - 1]["fact_score"] == 5
        assert rater.client.get("/").text.count("1 of 6") == 1
    res = CliRunner().invoke(
        cli,
        ["agree", str(root / "labels/sheet/alice.jsonl"), str(root / "labels/sheet/bob.jsonl"), "--field",
         "fact_score", "--id-field", "row", "--resamples", "0", "--format", "json"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    kappa = next(s for s in report["pairwise"][0]["stats"] if s["name"] == "cohen_kappa")
    assert kappa["n"] == 1  # bob labels one answer now, alice two: one unit both rated


def test_saves_go_to_a_journal_and_the_label_file_is_compacted(sheet: Path) -> None:
    """A save appends one line to the rater's journal; the label file is written from it after,
    and a label saved just before the server stops is in the file."""
    root = sheet.parent
    with serving(workspace(root, sheet)) as served:
        alice = Rater(served, "alice")
        alice.save("sheet", 1, {**facts("stated", "stated", "missed", "stated"), "propaganda": 0})
        journal = root / "labels/sheet/.alice.journal.jsonl"
        assert journal.exists() or (root / "labels/sheet/alice.jsonl").exists()
        alice.save("sheet", 2, {**facts("stated", "stated", "stated", "stated"), "propaganda": 0})
    assert not journal.exists()
    got = read_jsonl(root / "labels/sheet/alice.jsonl")
    assert [r["fact_score"] for r in got[:2]] == [4, 5] and all(r["fact_score"] is None for r in got[2:])


def test_agree_compares_fact_states_fact_by_fact_as_the_files_page_offers(sheet: Path) -> None:
    """Each fact is a unit of its own (nominal): two raters who differ on one fact of one answer
    agree on the other facts, and the files page gives the command."""
    root = sheet.parent
    plans = {"alice": ["ssss", "smsm", "mmmm"], "bob": ["ssss", "smss", "mmmm"]}
    with serving(workspace(root, sheet)) as served:
        for name, plan in plans.items():
            rater = Rater(served, name)
            for n, states in enumerate(plan, start=1):
                chosen = facts(*({"s": "stated", "m": "missed"}[k] for k in states))
                assert rater.save("sheet", n, {**chosen, "propaganda": 0})["labelled"]
        page = rater.client.get("/rate/sheet/files").text
    command = next(line for line in page.splitlines() if "--field fact_states" in line)
    assert command.startswith("propeval agree labels/sheet/alice.jsonl labels/sheet/bob.jsonl --field fact_states")
    files = [str(root / f"labels/sheet/{n}.jsonl") for n in plans]
    res = CliRunner().invoke(
        cli, ["agree", *files, "--field", "fact_states", "--id-field", "row", "--resamples", "0", "--format", "json"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["units"] == 12 and report["level"] == "nominal"  # 3 answers x 4 facts; unlabelled rows none
    kappa = next(s for s in report["pairwise"][0]["stats"] if s["name"] == "cohen_kappa")
    from sklearn.metrics import cohen_kappa_score

    a = [x for p in plans["alice"] for x in p]
    b = [x for p in plans["bob"] for x in p]
    assert kappa["n"] == 12 and kappa["value"] == pytest.approx(cohen_kappa_score(a, b))


def _agree(root: Path, field: str = "propaganda") -> Any:
    files = [str(root / f"labels/sheet/{n}.jsonl") for n in ("alice", "bob")]
    args = ["agree", *files, "--field", field, "--id-field", "row", "--resamples", "0", "--format", "json"]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_agree_and_unblind_see_the_saves_a_killed_server_left_in_the_journal(sheet: Path) -> None:
    """Saves made by the store (as the server makes them) and never compacted, as after a kill -9:
    the label files hold none of them, yet `agree` and `agree unblind` read every one."""
    root = sheet.parent
    ws = workspace(root, sheet)
    levels = {"alice": [0, 0, 0, 1], "bob": [0, 0, 1, 1]}
    rows = read_jsonl(sheet)
    answered = [n for n, r in enumerate(rows) if r["answer"]][:4]
    for name, marks in levels.items():
        store = ws.store("sheet", name)
        for n, level in zip(answered, marks, strict=True):
            quote = " ".join(rows[n]["answer"].split()[:4]) if level else None
            assert store.save(rows[n]["row"], {**facts("stated", "stated", "stated", "stated"), "propaganda": level},
                              quote).outcome.fields  # fmt: skip
        assert (root / f"labels/sheet/.{name}.journal.jsonl").stat().st_size > 0
        assert (root / f"labels/sheet/{name}.jsonl").read_text() == ""  # nothing compacted
    res = _agree(root)
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["units"] == 4
    kappa = next(s for s in report["pairwise"][0]["stats"] if s["name"] == "cohen_kappa")
    from sklearn.metrics import cohen_kappa_score

    assert kappa["n"] == 4 and kappa["value"] == pytest.approx(cohen_kappa_score([0, 0, 0, 1], [0, 0, 1, 1]))
    # a save that blanks a label (propaganda 1 without its quote) is replayed as blank, not as the old label
    ws.store("sheet", "bob").save(rows[answered[3]]["row"], {**facts(*["stated"] * 4), "propaganda": 1}, None)
    report = json.loads(_agree(root).output)  # alice still rates it; bob's is missing now
    assert next(s for s in report["pairwise"][0]["stats"] if s["name"] == "cohen_kappa")["n"] == 3
    out = root / "unblinded.jsonl"
    res = CliRunner().invoke(
        cli, ["agree", "unblind", str(root / "labels/sheet/alice.jsonl"), "--key", "private/key.json", "--out",
              str(out)], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert sorted(r["propaganda"] for r in read_jsonl(out) if r["propaganda"] is not None) == [0, 0, 0, 1]


def test_a_journal_line_cut_short_by_a_crash_is_ignored_and_the_next_save_follows_it(sheet: Path) -> None:
    root = sheet.parent
    rows = read_jsonl(sheet)
    for name in ("alice", "bob"):
        workspace(root, sheet).store("sheet", name).save(rows[0]["row"], {**facts(*["stated"] * 4), "propaganda": 0},
                                                         None)  # fmt: skip
    journal = root / "labels/sheet/.bob.journal.jsonl"
    whole = journal.read_bytes()
    with journal.open("ab") as fh:
        fh.write(whole[: len(whole) // 2])  # a kill -9 in the middle of a write
    res = _agree(root)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["units"] == 1
    store = workspace(root, sheet).store("sheet", "bob")  # a new server: reads the journal, then saves
    assert store.save(rows[1]["row"], {**facts(*["stated"] * 4), "propaganda": 0}, None).done == 2
    assert journal.read_bytes().count(b"\n") == 2 and journal.read_bytes().endswith(b"\n")
    assert json.loads(_agree(root).output)["units"] == 2
    store.compact()
    assert not journal.exists() and [r["propaganda"] for r in read_jsonl(root / "labels/sheet/bob.jsonl")][:2] == [0, 0]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"not json", "the line is not JSON"),
        (b"[1, 2]", "the line is not a JSON object"),
        (b'{"key": "r001", "values": {}, "quote": null, "id_field": "item_id", "label": {}}', "the line is not a save"),
        (b'{"key": "r001", "values": {}, "quote": null, "id_field": "row", "label": {"id": "x"}}', "is not a save"),
        (b'{"key": "r001", "values": {}, "quote": 3, "id_field": "row", "label": {}}', "the line is not a save"),
        (b'{"key": "r999", "values": {}, "quote": null, "id_field": "row", "label": {}}', "'r999' is not in"),
        (
            b'{"key": "r001", "values": {"propaganda": 7}, "quote": null, "id_field": "row", "label": {}}',
            "7 is not one",
        ),
    ],
)
def test_a_journal_changed_by_another_program_is_an_error_naming_file_line_and_fix(
    sheet: Path, line: bytes, why: str
) -> None:
    from propeval.loader import LoadError

    root = sheet.parent
    rows = read_jsonl(sheet)
    ws = workspace(root, sheet)
    for name in ("alice", "bob"):
        ws.store("sheet", name).save(rows[0]["row"], {**facts(*["stated"] * 4), "propaganda": 0}, None)
    journal = root / "labels/sheet/.bob.journal.jsonl"
    journal.write_bytes(line + b"\n" + journal.read_bytes())
    fix = "delete this line (its save is lost), or move the journal away and relabel"
    checked_by_rubric = why.startswith(("'r999'", "7 is"))  # only the server knows the sheet and the rubric
    if not checked_by_rubric:
        res = _agree(root)
        assert res.exit_code == 1 and "Traceback" not in res.output
        [problem] = json.loads(res.output)["problems"]
        assert problem["path"] == journal.as_posix() and problem["line"] == 1 and problem["rule"] == "labels"
        assert why in problem["message"] and fix in problem["message"]
    with pytest.raises(LoadError) as err:
        workspace(root, sheet).store("sheet", "bob").snapshot()
    assert err.value.problem.line == 1 and why in err.value.problem.message and fix in err.value.problem.message


def test_a_sheet_unchanged_since_it_loaded_is_read_once_the_socket_listens_and_a_changed_one_is_checked(
    sheet: Path,
) -> None:
    """A start checks a sheet in full the first time; an unchanged sheet (same stamp, rubric and
    code) is read after the socket listens, by the plain parse, into the same units; a sheet
    changed since is checked in full again, and a bad one still stops the start."""
    import time

    from propeval.loader import LoadError

    root = sheet.parent
    time.sleep(max(0.0, 2.1 - (time.time() - sheet.stat().st_ctime)))  # older than memo.RACY_SECONDS
    first = workspace(root, sheet)
    first.check_sheets()
    assert "source:sheet" in first._cache  # read before serving
    again = workspace(root, sheet)
    again.check_sheets()
    assert "source:sheet" not in again._cache  # left for load_sheets
    with serving(again) as served:
        again.load_sheets()
        page = Rater(served, "alice").client.get("/rate/sheet/2").text
    strict, plain = first.source("sheet").units, again.source("sheet").units
    assert plain == strict and strict[1].answer and strict[1].answer.split()[0] in page
    rows = read_jsonl(sheet)
    for bad, why in (
        ({"answer": None}, "has no answer text to rate"),
        ({"facts": [{"id": 1, "text": "x"}]}, "facts must be a list of objects with string 'id' and 'text'"),
        ({"frame_markers": {"language": "en"}}, "frame_markers must be a list of objects"),
    ):
        write_jsonl(sheet, [rows[0], {**rows[1], **bad}])
        with pytest.raises(LoadError) as err:
            workspace(root, sheet).check_sheets()
        assert err.value.problem.line == 2 and why in err.value.problem.message
