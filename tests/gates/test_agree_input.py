"""`propeval agree` on label files that are empty, mistyped or mix label types; what the bootstrap drops."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def agree(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["agree", *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_empty_file_and_a_mistyped_field_are_clean_errors(tmp_path: Path, fmt: str) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    good = write_jsonl(tmp_path / "h1.jsonl", [{"item_id": "i1", "model": "m", "tone": "Neutral"}])
    code, out = agree(str(empty), good, "--field", "tone", "--format", fmt)
    assert code == 1
    assert "Traceback" not in out
    expected_empty = (
        'the file holds no labelled unit; a label file is JSON Lines, one unit per line: {"item_id": ..., "tone": ...}'
    )
    code2, out2 = agree(good, good, "--field", "tonee", "--format", fmt)
    assert code2 == 1
    expected_field = "no line has the field 'tonee'; the fields in this file are: item_id, model, tone; pass one of them with --field"
    if fmt == "json":
        problems = json.loads(out)["problems"]
        assert [(p["path"], p["line"], p["rule"], p["message"]) for p in problems] == [
            (empty.as_posix(), 1, "labels", expected_empty)
        ]
        problems = json.loads(out2)["problems"]
        assert [p["message"] for p in problems] == [expected_field, expected_field]
    else:
        assert out.splitlines() == [
            f"{empty.as_posix()}:1:1 [labels] {expected_empty}",
            "1 error(s), 0 warning(s) in 2 file(s) checked",
        ]
        assert out2.splitlines()[0] == f"{Path(good).as_posix()}:1:1 [labels] {expected_field}"


def test_one_label_written_two_ways_is_refused_naming_both(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [{"item_id": f"i{n}", "score": n % 2} for n in range(6)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"item_id": f"i{n}", "score": str(n % 2)} for n in range(6)])
    code, out = agree(a, b, "--field", "score")
    assert code == 1
    assert out.splitlines()[:2] == [
        f'{Path(b).as_posix()}:1:1 [labels] score: "0" (a string) and 0 (a number) at {Path(a).as_posix()}:1 '
        "are one label written two ways, and would count as two; write it one way in every file",
        f'{Path(b).as_posix()}:2:1 [labels] score: "1" (a string) and 1 (a number) at {Path(a).as_posix()}:2 '
        "are one label written two ways, and would count as two; write it one way in every file",
    ]
    c = write_jsonl(tmp_path / "c.jsonl", [{"item_id": f"i{n}", "score": n % 2 == 1} for n in range(6)])
    code, out = agree(a, c, "--field", "score")
    assert code == 1 and "true (a boolean) and 1 (a number) at" in out
    # written one way, identical ratings agree perfectly
    code, out = agree(a, a, "--field", "score", "--resamples", "0")
    assert code == 0 and "  cohen_kappa: 1.000 (n=6; TOO FEW UNITS: 6 < 30, not meaningful)" in out.splitlines()


def test_positive_true_matches_a_json_boolean(tmp_path: Path) -> None:
    from sklearn.metrics import f1_score  # here: at the top, every worker's collection paid about 0.5 CPU-s

    human = [True, True, False, False, True, False, True, False]
    judge = [True, False, False, False, True, True, True, False]
    h = write_jsonl(tmp_path / "human.jsonl", [{"item_id": f"i{n}", "supports": v} for n, v in enumerate(human)])
    j = write_jsonl(tmp_path / "judge.jsonl", [{"item_id": f"i{n}", "supports": v} for n, v in enumerate(judge)])
    code, out = agree(h, j, "--field", "supports", "--positive", "true", "--resamples", "0", "--format", "json")
    assert code == 0
    stats = {s["name"]: s for s in json.loads(out)["pairwise"][0]["stats"]}
    assert stats["f1_positive"]["value"] == pytest.approx(f1_score(human, judge))
    # the string "true" in the files is matched as the string
    hs = write_jsonl(tmp_path / "hs.jsonl", [{"item_id": f"i{n}", "s": str(v).lower()} for n, v in enumerate(human)])
    js = write_jsonl(tmp_path / "js.jsonl", [{"item_id": f"i{n}", "s": str(v).lower()} for n, v in enumerate(judge)])
    code, out = agree(hs, js, "--field", "s", "--positive", "true", "--resamples", "0", "--format", "json")
    stats = {s["name"]: s for s in json.loads(out)["pairwise"][0]["stats"]}
    assert stats["f1_positive"]["value"] == pytest.approx(f1_score(human, judge))


@pytest.mark.slow
def test_bootstrap_resamples_only_units_both_raters_labelled(tmp_path: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    labels = ["a", "b", "c"]
    truth = [labels[k] for k in rng.integers(0, 3, 30)]
    other = [t if rng.random() < 0.7 else labels[k] for t, k in zip(truth, rng.integers(0, 3, 30), strict=True)]
    both = [{"item_id": f"i{n:03d}", "l": t} for n, t in enumerate(truth)]
    # rater 1 also labelled 70 units nobody else did; they must not change the interval
    extra = [{"item_id": f"x{n:03d}", "l": labels[n % 3]} for n in range(70)]
    r1 = write_jsonl(tmp_path / "r1.jsonl", both + extra)
    r2 = write_jsonl(tmp_path / "r2.jsonl", [{"item_id": f"i{n:03d}", "l": t} for n, t in enumerate(other)])
    only = write_jsonl(tmp_path / "only.jsonl", both)
    _, out_all = agree(r1, r2, "--field", "l", "--resamples", "50", "--format", "json")
    _, out_both = agree(only, r2, "--field", "l", "--resamples", "50", "--format", "json")
    kappa_all = json.loads(out_all)["pairwise"][0]["stats"][0]
    kappa_both = json.loads(out_both)["pairwise"][0]["stats"][0]
    assert kappa_all["n"] == 30
    assert kappa_all["ci"] == kappa_both["ci"] and kappa_all["value"] == kappa_both["value"]


def test_undefined_resamples_are_counted(tmp_path: Path) -> None:
    import numpy as np

    # Two units, each labelled alike by both raters: kappa is defined (1.0) only on a resample
    # that draws both units; a resample of one unit twice has a single label.
    a = write_jsonl(tmp_path / "a.jsonl", [{"item_id": "i1", "l": "x"}, {"item_id": "i2", "l": "y"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"item_id": "i1", "l": "x"}, {"item_id": "i2", "l": "y"}])
    rng = np.random.default_rng(3)
    expected = sum(int(len(set(rng.integers(0, 2, size=2).tolist())) == 1) for _ in range(50))
    assert 0 < expected < 50
    code, out = agree(a, b, "--field", "l", "--resamples", "50", "--seed", "3", "--format", "json")
    assert code == 0
    kappa = json.loads(out)["pairwise"][0]["stats"][0]
    assert (kappa["resamples"], kappa["undefined_resamples"]) == (50, expected)
    _, out = agree(a, b, "--field", "l", "--resamples", "50", "--seed", "3")
    assert f"  cohen_kappa: 1.000 [95% CI 1.000, 1.000] (n=2; {expected} of 50 resamples had it undefined " in out


def test_fleiss_kappa_says_how_many_units_it_kept(tmp_path: Path) -> None:
    labels = ["a", "b", "a", "b", "a", "b", "a", "a", "b", "b"]
    r1 = write_jsonl(tmp_path / "r1.jsonl", [{"item_id": f"i{n}", "l": v} for n, v in enumerate(labels)])
    r2 = write_jsonl(tmp_path / "r2.jsonl", [{"item_id": f"i{n}", "l": v} for n, v in enumerate(labels[::-1])])
    r3 = write_jsonl(tmp_path / "r3.jsonl", [{"item_id": f"i{n}", "l": v} for n, v in enumerate(labels[:6])])
    code, out = agree(r1, r2, r3, "--field", "l", "--resamples", "0")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("  fleiss_kappa"))
    assert line.endswith(
        "(n=6: the 6 of 10 rated unit(s) that every rater rated; TOO FEW UNITS: 6 < 30, not meaningful)"
    )
    code, out = agree(r1, r2, r3, "--field", "l", "--resamples", "0", "--format", "json")
    fleiss = json.loads(out)["overall"][0]
    assert (fleiss["name"], fleiss["n"], fleiss["units"]) == ("fleiss_kappa", 6, 10)
