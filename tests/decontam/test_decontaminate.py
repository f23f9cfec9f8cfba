"""``propeval decontaminate``: the real CLI on tiny shards in tmp_path, locally and on a real Dask cluster."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import CorpusDir
from propeval.cli import cli

PROMPT = "What did the army do in central Beijing on the night of 3-4 June 1989, and how many people died?"
ZH = "1989年6月3日至4日夜间，军队在北京市中心做了什么？"


def line(doc_id: str, text: Any) -> str:
    return json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n"


@pytest.fixture
def shards(corpus: CorpusDir) -> CorpusDir:
    """A claim with a long English prompt and a Chinese one, and shards holding them in every way."""
    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    corpus.item("i0002", language="zh", prompt=ZH)
    corpus.write(
        "train/a.jsonl",
        line("a1", "Clean text about the weather in spring.")
        + line(
            "a2",
            "Quiz: what did the army do in central Beijing on the night of 3–4 June 1989, and how many people died?",
        )
        + line(
            "a3",
            "WHAT did the army do in central Beijing on the night of 3-4 June 1989 and how many people really died",
        )
        + "this is not JSON\n"
        + line("a4", "据报道，" + ZH + "这是一个问题。")
        + line("a5", 3)
        + line("a6", "A long story ends: what did the army do in central Beijing on the night of")
        + line("a7", "3-4 June 1989, and how many people died? The next story begins.")
        + '{"id": "a8", "text": "The end of the',
    )
    return corpus


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["decontaminate", *args], catch_exceptions=False)


EXPECTED = [
    'train/a.jsonl:2:1 [decontam-exact] i0001 prompt whole in document a2: "what did the army do in central beijing on the night of 3 4 june 1989 and how many people died"',
    'train/a.jsonl:3:1 [decontam-ngram] i0001 prompt: 8 of its 9 13-grams (89%) in document a3: "what did the army do in central beijing on the night of 3 4 june 1989 and how many people"',
    "train/a.jsonl:4:1 [decontam-bad-line] not a JSON line (Expecting value, column 1); scanned as raw text (the "
    "whole line); dropped from the filtered copy unless --keep-bad-lines",
    'train/a.jsonl:5:1 [decontam-exact] i0002 prompt whole in document a4: "1989 年 6 月 3 日 至 4 日 夜 间 军 队 在 北 京 市 中 心 做 了 什 么"',
    "train/a.jsonl:6:1 [decontam-bad-record] no string field 'text'; scanned as raw text (the whole line); dropped "
    "from the filtered copy unless --keep-bad-lines",
    'train/a.jsonl:7:1 [decontam-seam] i0001 prompt: 9 of its 9 13-grams (100%) run from the end of document a6 into document a7 (train/a.jsonl:8): "what did the army do in central beijing on the night of 3 4 june 1989 and how many people died"',
    "train/a.jsonl:9:1 [decontam-bad-line] not a JSON line (Unterminated string starting at, column 22); the line has "
    "no end: the file looks truncated; scanned as raw text (the 'text' field found by its key); dropped from the "
    "filtered copy unless --keep-bad-lines",
    "corpus texts found (2):",
    "  i0001 prompt: 3 document(s)",
    "  i0002 prompt: 1 document(s)",
]


def test_finds_whole_edited_chinese_and_seam_plants_and_reports_bad_lines(shards: CorpusDir) -> None:
    result = run("train/a.jsonl", "--state-dir", "state", "--drop-list", "drop.txt", "--filtered-out", "clean")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[: len(EXPECTED)] == EXPECTED
    assert re.fullmatch(
        r"decontaminate: 1 shard\(s\) \(0 reused from the state folder\), 9 document\(s\), 0\.0 MB on local \(1 process\); "
        r"index: 4 text\(s\) searched, 22 window\(s\), 1 text\(s\) under 8 tokens not searched; "
        r"found 2 text\(s\) of 2 item\(s\)/claim\(s\) in 5 document\(s\); 3 bad line\(s\), scanned as raw text; "
        r"3 of them dropped; "
        r"scanning [0-9.]+ MB per CPU-second",
        lines[len(EXPECTED)],
    )
    assert lines[len(EXPECTED) + 1 :] == [
        "wrote drop.txt (8 document id(s) to drop)",
        "wrote clean/ (1 filtered shard(s), 8 document(s) left out)",
    ]
    # Bad lines are dropped too: what they hold cannot be known for sure (an id where one can be
    # read, else SHARD:LINE).
    assert (shards.root / "drop.txt").read_text() == "a2\na3\na4\na5\na6\na7\na8\ntrain/a.jsonl:4\n"
    original = (shards.root / "train/a.jsonl").read_text().splitlines(keepends=True)
    assert (shards.root / "clean/a.jsonl").read_text() == original[0]
    # --keep-bad-lines copies them (they hold no corpus text) and leaves them off the drop list.
    kept = run(
        "train/a.jsonl",
        "--state-dir",
        "state",
        "--drop-list",
        "drop.txt",
        "--filtered-out",
        "clean",
        "--keep-bad-lines",
    )
    assert "3 bad line(s), scanned as raw text and kept where clean (--keep-bad-lines)" in kept.stdout
    assert (shards.root / "drop.txt").read_text() == "a2\na3\na4\na6\na7\n"
    assert (shards.root / "clean/a.jsonl").read_text() == "".join(original[i] for i in (0, 3, 5, 8))
    # The copy is written through fsutil's one atomic write: no temporary file is left beside it,
    # and it has the mode any new file gets (the umask's), not a temporary file's private 0600.
    assert sorted(p.name for p in (shards.root / "clean").iterdir()) == ["a.jsonl"]
    umask = os.umask(0)
    os.umask(umask)
    assert (shards.root / "clean/a.jsonl").stat().st_mode & 0o777 == 0o666 & ~umask


def test_json_report_and_a_second_run_reuses_the_stored_shard(shards: CorpusDir) -> None:
    first = run("train", "--state-dir", "train/state", "--format", "json")
    shards.write("train/b.jsonl", line("b1", "nothing to see"))
    # The state folder is inside the scanned folder: its files are not read as shards.
    second = run("train/**/*.json*", "--state-dir", "train/state", "--format", "json")
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert (one["run"]["shards_reused"], two["run"]["shards_reused"]) == (0, 1)
    assert two["shards"] == 2 and two["documents"] == one["documents"] + 1
    assert two["findings"] == one["findings"] and two["drop"] == one["drop"]
    assert one["items_found"] == ["i0001", "i0002"]
    assert one["texts_found"] == {"i0001 prompt": 3, "i0002 prompt": 1}
    assert one["index"]["not_searched_too_short"] == ["c0001 marker 1 (en)"]
    assert one["findings"][1] == {
        "shard": "train/a.jsonl",
        "line": 3,
        "doc": "a3",
        "label": "i0001 prompt",
        "kind": "ngram",
        "matched": 8,
        "total": 9,
        "span": "what did the army do in central beijing on the night of 3 4 june 1989 and how many people",
        "next_shard": "",
        "next_line": 0,
        "next_doc": "",
        "score": 0.0,
    }
    # A stored result of another file (the shard changed since) is not reused.
    shards.write("train/b.jsonl", line("b1", "nothing to see") + line("b2", PROMPT))
    third = json.loads(run("train", "--state-dir", "train/state", "--format", "json").stdout)
    assert third["run"]["shards_reused"] == 1
    assert [f["doc"] for f in third["findings"] if f["shard"] == "train/b.jsonl"] == ["b2"]


def test_a_plant_across_two_shards_is_a_seam_between_them(corpus: CorpusDir) -> None:
    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    corpus.write("s/1.jsonl", line("x1", "clean") + line("x2", "it ends: what did the army do in central Beijing"))
    corpus.write("s/2.jsonl", line("y1", "on the night of 3-4 June 1989, and how many people died?") + line("y2", "ok"))
    result = run("s/*.jsonl", "--state-dir", "state", "--drop-list", "drop.txt")
    assert result.exit_code == 1
    # The seam holds the last 12 tokens of one document and the first 12 of the next; y1 alone
    # holds the text's last 13-gram, so it is also a finding of its own.
    assert result.stdout.splitlines()[:2] == [
        "s/1.jsonl:2:1 [decontam-seam] i0001 prompt: 8 of its 9 13-grams (89%) run from the end of document x2 "
        'into document y1 (s/2.jsonl:1): "what did the army do in central beijing on the night of 3 4 june 1989 '
        'and how many people"',
        's/2.jsonl:1:1 [decontam-ngram] i0001 prompt: 1 of its 9 13-grams (11%) in document y1: "on the night of '
        '3 4 june 1989 and how many people died"',
    ]
    assert (corpus.root / "drop.txt").read_text() == "x2\ny1\n"


@pytest.mark.slow  # importing pyarrow is most of it
def test_parquet_shards_and_a_truncated_one(corpus: CorpusDir) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    (corpus.root / "pq").mkdir()
    table = pa.table({"content": ["clean", "a fact: The government has never published a full death toll!", PROMPT]})
    pq.write_table(table, corpus.root / "pq" / "good.parquet")
    whole = (corpus.root / "pq" / "good.parquet").read_bytes()
    corpus.write("pq/cut.parquet", whole[: len(whole) // 2])
    result = run("pq/*.parquet", "--text-field", "content", "--state-dir", "state", "--filtered-out", "out")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("pq/cut.parquet [decontam-bad-shard] not a readable Parquet file (")
    assert lines[0].endswith("it was not scanned, and is left out of the filtered copy unless --keep-bad-lines")
    assert lines[1:3] == [
        'pq/good.parquet:2:1 [decontam-exact] c0001/f2 fact whole in document pq/good.parquet:2: "the government has never published a full death toll"',
        'pq/good.parquet:3:1 [decontam-exact] i0001 prompt whole in document pq/good.parquet:3: "what did the army do in central beijing on the night of 3 4 june 1989 and how many people died"',
    ]
    assert pq.read_table(corpus.root / "out" / "good.parquet").column("content").to_pylist() == ["clean"]
    assert not (corpus.root / "out" / "cut.parquet").exists()  # never scanned: not passed off as clean
    run("pq/*.parquet", "--text-field", "content", "--state-dir", "state", "--filtered-out", "out", "--keep-bad-lines")
    assert (corpus.root / "out" / "cut.parquet").read_bytes() == whole[: len(whole) // 2]  # kept: copied as it was


def test_usage_errors_name_the_fix(shards: CorpusDir) -> None:
    result = run("nothing/*.jsonl")
    assert (result.exit_code, result.stderr) == (
        2,
        "propeval: error: no shard matches 'nothing/*.jsonl': give JSONL or Parquet files, folders or globs\n",
    )
    shards.write("train/notes.txt", "x")
    result = run("train/notes.txt")
    assert result.exit_code == 2
    assert "train/notes.txt: not a shard format propeval reads; use .jsonl" in result.stderr
    result = run("train/a.jsonl", "--filtered-out", "train")
    assert result.exit_code == 2
    assert "an output would overwrite or hold this shard; write it elsewhere" in result.stderr


def test_the_fast_path_gives_the_exact_tokens_and_hashes() -> None:
    from propeval.decontam import ngrams

    samples = [
        "Hello,   WORLD!! it's 3-4 June_1989 (x)\tand\nso on",
        "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ and zero\u200bwidth",
        "Ünïcode café — 北京市中心 and ΣΊΣΥΦΟΣ",
    ]
    for text in samples:
        tok = ngrams.tokenise(ngrams.canonical(text))
        assert [tok.text(i, i) for i in range(len(tok.starts))] == ngrams.tokens(text), text
    a = ngrams.windows(ngrams.tokenise(ngrams.canonical("The quick, brown fox")), 3)
    b = ngrams.windows(ngrams.tokenise(ngrams.canonical("ｔｈｅ QUICK brown--fox")), 3)
    assert a.tolist() == b.tolist() and len(a) == 2


@pytest.mark.slow
def test_the_dask_cluster_gives_the_local_report(shards: CorpusDir, dask_cluster: str) -> None:
    """Two worker processes of a real LocalCluster, and two local processes, give the one-process report."""
    shards.write(
        "train/b.jsonl", line("b1", "x") + line("b2", "on the night of 3-4 June 1989, and how many people died?")
    )
    shards.write("train/c.jsonl", line("c1", PROMPT.upper()) + line("c2", PROMPT.replace("night", "evening")))
    local = run("train", "--jobs", "1", "--state-dir", "s1", "--format", "json", "--filtered-out", "out1")
    pool = run("train", "--jobs", "2", "--state-dir", "s2", "--format", "json")
    dask = run("train", "--scheduler", dask_cluster, "--state-dir", "s3", "--format", "json", "--filtered-out", "out2")
    docs = [json.loads(r.stdout) for r in (local, pool, dask)]
    runs = [d.pop("run") for d in docs]
    assert docs[0] == docs[1] == docs[2]
    assert [r["engine"] for r in runs] == [
        "local (1 process)",
        "local (2 processes)",
        f"dask ({dask_cluster}, 2 workers)",
    ]
    assert (local.exit_code, pool.exit_code, dask.exit_code) == (1, 1, 1)
    assert {f["kind"] for f in docs[0]["findings"]} == {"exact", "ngram", "seam", "near"}
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        assert (shards.root / "out1" / name).read_bytes() == (shards.root / "out2" / name).read_bytes()


class WordHashEncoder:
    """A deterministic encoder for the embedding pass's logic: bag of words, hashed into 512 dims
    (a paraphrase that keeps most words scores high, an unrelated sentence near 0)."""

    name = "word-hash-512"
    fingerprint = "word-hash-512"
    max_seq_length = 512
    engine = "numpy"

    def encode(self, texts: list[str]) -> Any:
        import zlib

        import numpy as np

        out = np.zeros((len(texts), 512), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % 512] += 1
        return out

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]


def test_the_embedding_pass_reports_a_paraphrase_in_the_sample_without_dropping_it(corpus: CorpusDir) -> None:
    from propeval.cli.decontaminate import decontamination_report
    from propeval.config import load_config
    from propeval.corpus import load_corpus
    from propeval.decontam.index import build, corpus_entries
    from propeval.decontam.shards import Options, decontaminate
    from propeval.reporters import write

    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    reworded = "What did the soldiers do in central Beijing during the night of 3-4 June 1989; how many people died?"
    corpus.write("t/p.jsonl", line("p1", f"Intro. {reworded} Outro, with more words here.") + line("p2", "Unrelated."))
    entries = corpus_entries(load_corpus(load_config(corpus.root)))
    texts = [(label, text) for label, kind, _, text in entries if kind in ("prompt", "fact")]
    options = Options(shards=("t/p.jsonl",), state_dir=corpus.root / "state", embed_rate=1.0, embed_threshold=0.8)
    result = decontaminate(build(entries), options, encoder=WordHashEncoder(), texts=texts)
    assert [(f.kind, f.line, f.label, f.span) for f in result.findings] == [("paraphrase", 1, "i0001 prompt", reworded)]
    assert 0.8 <= result.findings[0].score < 1 and result.sampled == 2 and result.exit_code == 0
    assert result.flagged == []  # for review: not in the drop list
    import io

    out = io.StringIO()
    write(decontamination_report(result, options, "word-hash-512"), "text", out)
    first, *_, summary = out.getvalue().splitlines()
    assert first == (
        f"t/p.jsonl:1:1 [decontam-embed] (warning) i0001 prompt: a sentence of document p1 is close in meaning "
        f'(cosine {result.findings[0].score:.3f} >= 0.8): "{reworded}"'
    )
    assert "embedding pass (word-hash-512): 2 document(s) sampled, 1 close in meaning (cosine >= 0.8)" in summary


@pytest.mark.slow
def test_an_unreachable_scheduler_is_exit_3_naming_it(shards: CorpusDir) -> None:
    import dask

    # nothing listens on port 9: refused at once, and Dask retries until its connect timeout
    with dask.config.set({"distributed.comm.timeouts.connect": "200ms"}):
        result = run("train", "--scheduler", "tcp://127.0.0.1:9", "--state-dir", "state")
    assert result.exit_code == 3
    assert result.stderr.startswith("propeval: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert not (shards.root / "state").exists()


def test_a_word_changed_in_the_middle_is_a_near_finding(corpus: CorpusDir) -> None:
    """No 13-gram of the prompt survives one word replaced in its middle; the anchors and the
    token alignment find it. Half the prompt, or its words shuffled, is no near finding."""
    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    edited = PROMPT.replace("night", "evening")
    corpus.write(
        "t/n.jsonl",
        line("n1", f"Quoted: {edited} End.")
        + line("n2", "what did the army do in central Beijing, asked nobody")
        + line("n3", "died people many how and 1989 June 3-4 of night the on Beijing central in do army the did what"),
    )
    result = run("t/n.jsonl", "--state-dir", "state", "--drop-list", "drop.txt")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (
        "t/n.jsonl:1:1 [decontam-near] i0001 prompt: 20 of its 21 tokens aligned in order in document n1 "
        '(similarity 0.952 >= 0.9): "what did the army do in central beijing on the evening of 3 4 june 1989 and '
        'how many people died"'
    )
    assert result.stdout.splitlines()[1].startswith("corpus texts found (1):")
    assert (corpus.root / "drop.txt").read_text() == "n1\n"
    off = run("t/n.jsonl", "--state-dir", "state", "--near", "0")
    assert off.exit_code == 0 and "decontam-" not in off.stdout


def test_a_window_hashes_the_same_wherever_it_stands() -> None:
    from propeval.decontam import ngrams

    alone = ngrams.windows(ngrams.tokenise(b"in central beijing"), 3).tolist()
    for context in (
        b"x in central beijing y",
        b"a verylongtokenindeed in central beijing",
        b"zz\x00in central beijing",
    ):
        assert alone[0] in ngrams.windows(ngrams.tokenise(context), 3).tolist(), context
    # Tokens of 8 bytes or more that share their first 8 hash equal (the exact check drops such a
    # candidate); a token shorter than that is its own hash.
    words = (b"abcdefgh1ijklmnop", b"abcdefgh2", b"abc", b"abcd", b"abd", b"abcdefgh")
    a, b, c, d, e, f = (ngrams.windows(ngrams.tokenise(t), 1)[0] for t in words)
    assert a == b == f and len({a, c, d, e}) == 4


def test_a_prompt_in_any_kind_of_bad_line_is_found_and_never_reaches_the_clean_shards(corpus: CorpusDir) -> None:
    """Once, lines that cannot be read as records were copied verbatim into the "clean" shards."""
    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    bad_lines = [
        b'{"id": "bad-byte", "text": "caf\xe9: ' + PROMPT.encode() + b'"}\n',  # one invalid UTF-8 byte
        b'{"id": ' + b"7" * 5000 + b', "text": "' + PROMPT.encode() + b'"}\n',  # a 5,000-digit id
        json.dumps({"id": "a-list", "text": ["first paragraph", PROMPT]}).encode() + b"\n",  # text is a list
    ]
    clean = [line("ok1", "Clean text about the weather in spring."), line("ok2", "Nothing to see here.")]
    corpus.write("train/a.jsonl", clean[0])
    with open(corpus.root / "train/a.jsonl", "ab") as fh:
        fh.write(b"".join(bad_lines))
        fh.write(clean[1].encode())
        fh.write(b'{"id": "harmless-bad", "text": "caf\xe9 au lait"}\n')  # bad, but no corpus text

    def clean_text() -> str:
        return (corpus.root / "clean/a.jsonl").read_bytes().decode("utf-8", "replace").lower()

    for keep in ((), ("--keep-bad-lines",)):
        result = run(
            "train/a.jsonl", "--state-dir", "state", "--drop-list", "drop.txt", "--filtered-out", "clean", *keep
        )
        assert result.exit_code == 1
        found = [ln for ln in result.stdout.splitlines() if "[decontam-exact]" in ln]
        # Each bad line is scanned: the text field found by its key (the bad byte replaced), the
        # strings of the list; the line with a 5,000-digit id has no id to name (SHARD:LINE).
        assert [ln.split(" [")[0] for ln in found] == ["train/a.jsonl:2:1", "train/a.jsonl:3:1", "train/a.jsonl:4:1"]
        assert "in document bad-byte:" in found[0] and "in document train/a.jsonl:3:" in found[1]
        assert "in document a-list:" in found[2]
        assert PROMPT.lower()[:40] not in clean_text()
        drop = (corpus.root / "drop.txt").read_text().splitlines()
        assert {"bad-byte", "train/a.jsonl:3", "a-list"} <= set(drop)
        kept_lines = clean_text().splitlines()
        assert "clean text about the weather in spring." in kept_lines[0] and "nothing to see here." in kept_lines[1]
        # The bad line without corpus text is dropped by default, and copied with --keep-bad-lines.
        assert ("harmless-bad" in drop) is not bool(keep)
        assert (len(kept_lines) == 3) is bool(keep)


def test_a_line_over_max_line_bytes_is_streamed_in_windows_and_still_found(corpus: CorpusDir) -> None:
    """Once, one 200 MB line peaked at 3.19 GB; now a line over --max-line-bytes is never read whole.
    (The memory figure is benchmarks/decontaminate_long_line.py's; here: what it finds.)"""
    from propeval.decontam.limits import WINDOW_CHARS

    corpus.claim()
    corpus.item("i0001", prompt=f'"{PROMPT}"')
    corpus.item("i0002", language="zh", prompt=ZH)
    words = "filler words go here "
    # The prompt straddles the first window boundary, the Chinese prompt (written as \\uXXXX escapes,
    # as json.dumps writes it) lies in the third window, and the id comes after the text.
    before = words * ((WINDOW_CHARS - 40) // len(words))
    text = before + PROMPT + " " + words * 60_000 + ZH + " " + words * 1000
    long_line = json.dumps({"text": text, "id": "the-long-one"}) + "\n"
    assert len(long_line) > 2 * WINDOW_CHARS
    corpus.write("train/a.jsonl", line("a1", "clean") + long_line + line("a3", "clean too") + line("a4", PROMPT))
    result = run(
        "train/a.jsonl",
        "--state-dir",
        "state",
        "--max-line-bytes",
        "100000",
        "--drop-list",
        "drop.txt",
        "--filtered-out",
        "clean",
        "--format",
        "json",
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    found = [(f["line"], f["doc"], f["label"], f["kind"]) for f in report["findings"]]
    assert found == [
        (2, "the-long-one", "i0001 prompt", "exact"),
        (2, "the-long-one", "i0002 prompt", "exact"),
        (4, "a4", "i0001 prompt", "exact"),
    ]
    [long_warning] = report["bad"]
    assert long_warning["rule"] == "decontam-long-line" and long_warning["line"] == 2
    assert long_warning["message"].startswith(f"the line is {len(long_line):,} bytes, over --max-line-bytes 100,000")
    assert report["documents"] == 4
    assert (corpus.root / "drop.txt").read_text() == "a4\nthe-long-one\n"
    assert (corpus.root / "clean/a.jsonl").read_text() == line("a1", "clean") + line("a3", "clean too")
    # A long last line cut short (the file truncated): its text is still scanned, and it is dropped.
    corpus.write("cut/b.jsonl", line("b1", "clean") + '{"id": "b2", "text": "' + "filler " * 30_000 + PROMPT)
    cut = json.loads(
        run("cut/b.jsonl", "--state-dir", "state3", "--max-line-bytes", "100000", "--format", "json").stdout
    )
    assert [(f["line"], f["doc"], f["kind"]) for f in cut["findings"]] == [(2, "b2", "exact")]
    assert [b["rule"] for b in cut["bad"]] == ["decontam-bad-line", "decontam-long-line"]
    assert cut["bad"][0]["message"].startswith(
        "not a JSON line (it ends inside a string or bracket); the line has no end: the file looks truncated"
    )
    # Under the default cap the same line is read whole, scanned in windows, and found alike.
    whole = json.loads(run("train/a.jsonl", "--state-dir", "state2", "--format", "json").stdout)
    assert [(f["line"], f["label"], f["kind"]) for f in whole["findings"]] == [(ln, lb, k) for ln, _, lb, k in found]
    assert whole["bad"] == []
