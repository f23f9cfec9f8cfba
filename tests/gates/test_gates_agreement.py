"""Agreement figures against the peer libraries (and a hand formula) on random label sets."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from propeval import agreement as ag
from propeval.cli import cli

# The peer libraries (scikit-learn, statsmodels, krippendorff, numpy) are imported in the tests that
# compare against them: at the top, every xdist worker paid about 0.6 CPU-s for them at collection.
LABELS = ["Correct", "Partial", "Misleading", "Refusal"]


def noisy(rng: random.Random, truth: list[str], p: float, labels: list[str]) -> list[str]:
    return [rng.choice(labels) if rng.random() < p else t for t in truth]


def hand_kappa(a: list[str], b: list[str]) -> float:
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    cats = set(a) | set(b)
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (po - pe) / (1 - pe)


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_matches_sklearn_and_the_formula(seed: int) -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(seed)
    a = [rng.choice(LABELS) for _ in range(60)]
    b = noisy(rng, a, 0.5, LABELS)
    got = ag.cohen_kappa(a, b)
    assert got.value == pytest.approx(cohen_kappa_score(a, b))
    assert got.value == pytest.approx(hand_kappa(a, b))
    for w in ("linear", "quadratic"):
        mine = ag.cohen_kappa(a, b, weights=w, labels=LABELS).value
        assert mine == pytest.approx(cohen_kappa_score(a, b, labels=LABELS, weights=w))


@pytest.mark.parametrize("seed", range(5))
def test_missing_ratings_are_dropped_pairwise_for_kappa(seed: int) -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(seed)
    a: list[str | None] = [rng.choice(LABELS) for _ in range(50)]
    b: list[str | None] = [x if rng.random() < 0.7 else rng.choice(LABELS) for x in a]
    for i in rng.sample(range(50), 10):
        a[i] = None
    for i in rng.sample(range(50), 10):
        b[i] = None
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    got = ag.cohen_kappa(a, b)
    assert got.n == len(both)
    assert got.value == pytest.approx(cohen_kappa_score([x for x, _ in both], [y for _, y in both]))


@pytest.mark.parametrize("seed", range(5))
def test_krippendorff_alpha_matches_the_package_with_missing(seed: int) -> None:
    import krippendorff
    import numpy as np

    rng = np.random.default_rng(seed)
    data = rng.integers(0, 5, size=(3, 40)).astype(float)
    data[1] = np.where(rng.random(40) < 0.6, data[0], data[1])
    data[rng.random((3, 40)) < 0.15] = np.nan
    ratings = [[None if np.isnan(v) else int(v) for v in row] for row in data]
    for level in ("nominal", "ordinal", "interval"):
        mine = ag.krippendorff_alpha(ratings, level=level, labels=[0, 1, 2, 3, 4])
        theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert mine.value == pytest.approx(theirs)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_matches_statsmodels_on_complete_units(seed: int) -> None:
    import numpy as np
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    rng = random.Random(seed)
    truth = [rng.choice(LABELS) for _ in range(40)]
    raters: list[list[str | None]] = [list(noisy(rng, truth, 0.4, LABELS)) for _ in range(4)]
    raters[2][3] = None  # unit 3 is incomplete and left out
    full = [u for u in zip(*raters, strict=True) if None not in u]
    codes = {lab: i for i, lab in enumerate(LABELS)}
    table, _ = aggregate_raters(np.array([[codes[x] for x in u] for u in full]), n_cat=4)
    got = ag.fleiss_kappa(raters, labels=LABELS)
    assert got.n == 39
    assert got.value == pytest.approx(sm_fleiss(table))


@pytest.mark.parametrize("seed", range(3))
def test_f1_positive_matches_sklearn(seed: int) -> None:
    from sklearn.metrics import f1_score

    rng = random.Random(seed)
    truth = [rng.random() < 0.4 for _ in range(50)]
    pred = [t if rng.random() < 0.8 else not t for t in truth]
    assert ag.f1_positive(truth, pred, positive=True).value == pytest.approx(f1_score(truth, pred))


def test_undefined_statistics_are_none_with_a_reason() -> None:
    one = ["stated"] * 6
    k = ag.cohen_kappa(one, one)
    assert k.value is None and "single label" in k.reason
    assert ag.fleiss_kappa([one, one, one]).value is None
    a = ag.krippendorff_alpha([one, one])
    assert a.value is None and "same value" in a.reason
    assert ag.f1_positive([False] * 4, [False] * 4, positive=True).value is None
    assert ag.cohen_kappa([None, "a"], ["b", None]).value is None
    acc = ag.accuracy_per_class(["stated", "missed"], ["stated", "stated"], labels=["stated", "missed", "opposed"])
    assert acc["stated"].value == 1.0 and acc["missed"].value == 0.0
    assert acc["opposed"].value is None


@pytest.mark.slow
def test_bootstrap_interval_brackets_the_estimate() -> None:
    rng = random.Random(3)
    a = [rng.choice(LABELS) for _ in range(80)]
    b = noisy(rng, a, 0.5, LABELS)
    s = ag.bootstrap(lambda r: ag.cohen_kappa(r[0], r[1]), [a, b], resamples=50, seed=1)
    assert s.ci is not None and s.value is not None
    assert s.ci[0] < s.value < s.ci[1]
    again = ag.bootstrap(lambda r: ag.cohen_kappa(r[0], r[1]), [a, b], resamples=50, seed=1)
    assert again.ci == s.ci


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_agree_cli_prints_kappa_confusion_and_undefined(tmp_path: Path) -> None:
    h1 = write_jsonl(
        tmp_path / "h1.jsonl",
        [{"item_id": f"i{i}", "tone": t} for i, t in enumerate(["Neutral", "Loaded", "Neutral", "Loaded"])],
    )
    h2 = write_jsonl(
        tmp_path / "h2.jsonl",
        [{"item_id": f"i{i}", "tone": t} for i, t in enumerate(["Neutral", "Loaded", "Loaded", None])],
    )
    res = CliRunner().invoke(
        cli, ["agree", str(h1), str(h2), "--field", "tone", "--resamples", "0"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "field tone (nominal), 4 unit(s), raters: h1, h2"
    assert lines[1:7] == [
        "h1 vs h2:",
        "  cohen_kappa: 0.400 (n=3; TOO FEW UNITS: 3 < 30, not meaningful)",
        "  confusion (rows: h1, columns: h2)",
        "             Loaded Neutral",
        "     Loaded       1       0",
        "    Neutral       1       1",
    ]
    assert "  krippendorff_alpha_nominal: 0.444 (n=3; TOO FEW UNITS: 3 < 30, not meaningful)" in lines


def test_agree_sample_blinds_and_unblind_restores(tmp_path: Path) -> None:
    rows = [
        {"item_id": f"i{i:04d}", "model": "secret-model-" + str(i % 2), "answer": f"answer {i}", "tone": "Neutral"}
        for i in range(10)
    ]
    src = write_jsonl(tmp_path / "rater1.jsonl", rows)
    sheet, key = tmp_path / "sheet.jsonl", tmp_path / "private" / "key.json"
    args = ["agree", "sample", str(src), "--fraction", "0.4", "--seed", "7", "--field", "tone"]
    res = CliRunner().invoke(cli, [*args, "--out", str(sheet), "--key", str(key)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    text = sheet.read_text(encoding="utf-8")
    assert "secret-model" not in text and "i000" not in text
    got = [json.loads(line) for line in text.splitlines()]
    assert len(got) == 4 and all(r["tone"] is None for r in got)
    assert [r["row"] for r in got] == ["r001", "r002", "r003", "r004"]
    # The same seed draws the same sample; the order is shuffled, not the source order.
    picked = [json.loads(key.read_text())["rows"][r["row"]]["item_id"] for r in got]
    assert picked != sorted(picked) or len(set(picked)) == 4
    filled = [{**r, "tone": "Loaded"} for r in got]
    write_jsonl(sheet, filled)
    out = tmp_path / "rater2.jsonl"
    res = CliRunner().invoke(
        cli, ["agree", "unblind", str(sheet), "--key", str(key), "--out", str(out)], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    back = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["item_id"] for r in back} == set(picked)
    assert all(r["tone"] == "Loaded" and r["model"].startswith("secret-model") for r in back)


def test_unblind_reads_back_a_key_over_a_mebibyte(tmp_path: Path) -> None:
    """The key is written by `agree sample`, never by a person or a pull request: it is read with the
    standard parser, so a key of a large sample is read back, not refused by the strict loader's 1 MiB cap."""
    model = "m" * 200
    src = write_jsonl(tmp_path / "judge.jsonl", [{"item_id": f"i{i:05d}", "model": model} for i in range(5000)])
    sheet, key, out = tmp_path / "sheet.jsonl", tmp_path / "key.json", tmp_path / "rater2.jsonl"
    args = ["agree", "sample", str(src), "--fraction", "1", "--seed", "1", "--field", "tone", "--show", "answer"]
    res = CliRunner().invoke(cli, [*args, "--out", str(sheet), "--key", str(key)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert key.stat().st_size > 1 << 20
    res = CliRunner().invoke(
        cli, ["agree", "unblind", str(sheet), "--key", str(key), "--out", str(out)], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert res.output == "wrote 5000 labelled row(s) to " + str(out) + "\n"


def test_a_damaged_key_is_named_at_its_line(tmp_path: Path) -> None:
    sheet, key = write_jsonl(tmp_path / "sheet.jsonl", [{"row": "r001", "tone": "x"}]), tmp_path / "key.json"
    key.write_text('{\n  "rows": {,\n}\n', encoding="utf-8")
    res = CliRunner().invoke(cli, ["agree", "unblind", str(sheet), "--key", str(key), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert res.output == (
        f"propeval: error: {key.as_posix()}:2:12 [json-syntax] Expecting property name enclosed in double quotes; "
        "the file is damaged\n"
    )


def test_kappa_and_confusion_on_a_scale_mixing_numbers_and_strings() -> None:
    from sklearn.metrics import cohen_kappa_score

    # audit-v1's propaganda inclusion: 0-3 or "Refusal". scikit-learn refuses mixed label types.
    scale: list[int | str] = [0, 1, 2, 3, "Refusal"]
    human: list[int | str] = [0, 1, 2, 3, "Refusal", 0, 2, 2]
    judge: list[int | str] = [0, 1, 3, 3, "Refusal", 1, 2, 0]
    codes = {label: i for i, label in enumerate(scale)}
    expected = cohen_kappa_score([codes[x] for x in human], [codes[x] for x in judge], labels=list(range(5)))
    stat = ag.cohen_kappa(human, judge, labels=scale)
    assert stat.value == pytest.approx(expected)
    order, matrix = ag.confusion(human, judge, labels=scale)
    assert order == scale
    assert matrix[2] == [1, 0, 1, 1, 0]  # human 2: the judge said 3, 2 and 0
