"""The scan's fast paths against the plain ones: orjson per line against ``json``, and the
canonical form of non-ASCII text against the normaliser and the regex tokenizer."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from propeval.decontam import ngrams
from propeval.decontam.index import build
from propeval.decontam.scan import Shard, scan_shard

PROMPT = "What did the army do in central Beijing on the night of 3-4 June 1989, and how many people died?"
ESCAPED = (
    '"what did the army do in central \\u0042eijing\\non the night of 3\\u20134 June 1989,'
    ' and how many people died?\\ud83d\\ude00 \\"quoted\\" back\\\\slash\\t\\u2019s"'
)


def mixed_lines() -> list[bytes]:
    """A shard with every kind of line the reader must tell apart, good and bad, in the middle."""
    huge = "filler words go here " * 150_000 + PROMPT  # a 3 MB line: more than one batch
    return [
        json.dumps({"id": "plain", "text": "Clean text about the weather."}).encode() + b"\n",
        b'{"id": "escapes", "text": ' + ESCAPED.encode() + b"}\n",
        json.dumps({"id": "utf8", "text": "据报道，军队在北京市中心做了什么？ café"}, ensure_ascii=False).encode()
        + b"\n",
        b"\n",
        b"   \t \n",
        b"this is not JSON\n",
        json.dumps({"id": "crlf", "text": PROMPT.upper()}).encode() + b"\r\n",
        json.dumps({"id": "number", "text": 3}).encode() + b"\n",
        json.dumps({"id": "null", "text": None}).encode() + b"\n",
        json.dumps({"id": "list", "text": ["a", PROMPT]}).encode() + b"\n",
        json.dumps([{"text": PROMPT}]).encode() + b"\n",
        json.dumps("a string").encode() + b"\n",
        b'{"id": "nan", "score": NaN, "text": "' + PROMPT.encode() + b'"}\n',  # orjson refuses NaN; json reads it
        b'{"id": "lone", "text": "\\ud800 ' + PROMPT.encode() + b'"}\n',  # a lone surrogate: json reads it
        b'{"id": "dup", "text": "first", "text": "' + PROMPT.encode() + b'"}\n',
        b'{"id": "bad-utf8", "text": "caf\xe9 ' + PROMPT.encode() + b'"}\n',
        b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",  # deeper than orjson (and json) go
        json.dumps({"id": 7, "text": "an integer id"}).encode() + b"\n",
        json.dumps({"id": True, "text": "a boolean id"}).encode() + b"\n",
        json.dumps({"id": "", "text": "an empty id"}).encode() + b"\n",
        json.dumps({"text": "no id"}).encode() + b"\n",
        json.dumps({"id": "huge", "text": huge}).encode() + b"\n",
        json.dumps({"id": "after", "text": PROMPT}).encode() + b"\n",
        b'{"id": "cut", "text": "The end of the',
    ]


def plain_reader(path: Path) -> tuple[list[tuple[int, str, str]], list[tuple[int, str]]]:
    """The slow path: ``json.loads`` on every line."""
    good: list[tuple[int, str, str]] = []
    bad: list[tuple[int, str]] = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                record: Any = json.loads(raw)
            except (ValueError, RecursionError):
                bad.append((number, "decontam-bad-line"))
                continue
            text = record.get("text") if isinstance(record, dict) else None
            if not isinstance(text, str):
                bad.append((number, "decontam-bad-record"))
                continue
            doc = record.get("id")
            if not (isinstance(doc, str) and doc):
                doc = str(doc) if isinstance(doc, int) and not isinstance(doc, bool) else f"{path.name}:{number}"
            good.append((number, doc, text))
    return good, bad


def test_the_orjson_reader_reads_what_json_reads_and_reports_the_same_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join(mixed_lines()))
    index = build([("i0001 prompt", "prompt", "i0001", PROMPT)])
    shard = Shard(path.name, str(path), "jsonl", "text", "id", sample_rate=1.0)  # the sample keeps every text read
    result = scan_shard(shard, index)
    good, bad = plain_reader(path)
    bad_lines = {line for line, _ in bad}
    assert [(line, doc, text[:20_000]) for line, doc, text in result.sample if line not in bad_lines] == [
        (line, doc, text[:20_000]) for line, doc, text in good
    ]
    assert [(b.line, b.rule) for b in result.bad] == bad
    assert result.docs == len(good) + len(result.unread) and result.bytes == path.stat().st_size
    # A bad line's text is still read: the text field found by its key (bad bytes replaced, the
    # strings of a list), else the whole line.
    unread = {line: (doc, text) for line, doc, text in result.sample if line in bad_lines}
    assert unread[16] == ("bad-utf8", "caf\ufffd " + PROMPT)
    assert unread[10] == ("list", "a\n" + PROMPT)
    assert unread[6] == ("mixed.jsonl:6", "this is not JSON\n")
    assert unread[11][1] == json.dumps([{"text": PROMPT}]) + "\n"  # no top-level text field: the whole line
    assert result.unread == {line: doc for line, (doc, _) in unread.items()} | {8: "number", 9: "null"}
    texts = {doc: text for _, doc, text in good}
    assert texts["escapes"].startswith("what did the army do in central Beijing\non the night of 3\u20134 June")
    assert "\U0001f600" in texts["escapes"] and texts["dup"] == PROMPT and texts["lone"].startswith("\ud800")
    # The bad lines say why, in json's words; a cut last line says the file looks truncated.
    messages = {b.line: b.message for b in result.bad}
    dropped = "dropped from the filtered copy unless --keep-bad-lines"
    assert (
        messages[6] == f"not a JSON line (Expecting value, column 1); scanned as raw text (the whole line); {dropped}"
    )
    assert messages[len(mixed_lines())].endswith(
        "; the line has no end: the file looks truncated; scanned as raw text (the 'text' field found by its key); "
        + dropped
    )
    assert messages[8] == f"no string field 'text'; scanned as raw text (the whole line); {dropped}"
    assert messages[10] == f"no string field 'text'; scanned as raw text (the strings under 'text'); {dropped}"
    assert messages[11] == f"not a JSON object; scanned as raw text (the whole line); {dropped}"
    # Every line holding the prompt is found, whatever its escapes, case, line end or length, and
    # whether or not it could be read as a record.
    found = {(f.doc, f.kind) for f in result.findings}
    assert {doc for doc, _ in found} == {
        *("escapes", "crlf", "nan", "lone", "dup", "huge", "after"),
        *("list", "mixed.jsonl:11", "bad-utf8"),
    }


CHARS = (
    "aZ9_ -.,!?'\t\n"
    "İıßẞﬁŉǅΣσς"  # case folding that changes length, final sigma
    "\u0301\u0308\u0323\u0345"  # combining marks (after Han characters too)
    "\u00ad\u200b\u200d\u2060\ufeff\U000e0001\U000e0041\U000110bd"  # format characters, BMP and not
    "ｆＵＬＬ１２　、。，：！"  # full width
    "北京市中心做了什么"  # Han
    "\u3400\u4dbf\u9fff\uf900\ufa0e\U00020000\U0002a6d6"  # range ends, compatibility ideographs
    "かが\u3099\u309a・ー゠ｶﾞ"  # kana, voicing marks that compose, half width
    "\u1100\u1161\u11a8한글"  # Hangul jamo that compose
    "①²½™℃ⅷ"  # compatibility characters NFKC rewrites
    "\u2019\u201c\u2014\u2026\u00a0\u2028"  # curly quotes, dashes, odd spaces
    "\ud800\udfff"  # lone surrogates, which json lets through
    "\U0001f600\U00010400"  # astral symbols and letters
)


def test_the_canonical_form_of_any_text_gives_the_normalisers_tokens() -> None:
    rng = random.Random(22)
    for k in range(1000):
        # Short texts, and long ones (a long run of non-ASCII text takes numpy, a short one a regex),
        # some mostly ASCII with a few non-ASCII runs.
        size = rng.randint(0, 30) if k % 4 else rng.randint(60, 400)
        ascii_share = 0.9 if k % 3 == 0 else 0.0
        text = "".join(
            rng.choice("ab cD9 _.") if rng.random() < ascii_share else rng.choice(CHARS) for _ in range(size)
        )
        tok = ngrams.tokenise(ngrams.canonical(text))
        assert [tok.text(i, i) for i in range(len(tok.starts))] == ngrams.tokens(text), ascii(text)


def test_windows_of_every_width_are_found_behind_the_probe_windows(tmp_path: Path) -> None:
    """The probe windows are min(5, --min-tokens, --ngram) tokens: n-grams, whole short texts and
    anchors of other widths are still found (here 3-grams, 2-token texts, 2-token anchors)."""
    entries = [
        ("long prompt", "prompt", "i1", "Alpha beta gamma delta epsilon"),
        ("short fact", "fact", "c1", "Zeta eta"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"id": "d1", "text": "x ALPHA beta, gamma y"})
        + "\n"
        + json.dumps({"id": "d2", "text": "zeta-eta theta"})
        + "\n"
        + json.dumps({"id": "d3", "text": "alpha beta kappa delta epsilon"})
        + "\n"
    )
    shard = Shard(path.name, str(path), "jsonl", "text", "id")
    exact = scan_shard(shard, build(entries, n=3, min_tokens=2, near=0))
    assert [(f.doc, f.label, f.kind, f.matched, f.total) for f in exact.findings] == [
        ("d1", "long prompt", "ngram", 1, 3),
        ("d2", "short fact", "exact", 1, 1),
    ]
    near = scan_shard(shard, build(entries, n=13, min_tokens=2, near=0.8))  # anchors of 2 tokens
    assert [(f.doc, f.label, f.kind, f.matched, f.total) for f in near.findings] == [
        ("d2", "short fact", "exact", 1, 1),
        ("d3", "long prompt", "near", 4, 5),
    ]


def test_the_field_stream_reads_any_chunking_as_json_reads_the_whole_line() -> None:
    """A long line is streamed in chunks: whatever byte an escape, a surrogate pair or a UTF-8
    character is cut at, the text is json's."""
    from propeval.decontam.rawtext import FieldStream

    rng = random.Random(7)
    lines = [
        b'{"id": "escapes", "text": ' + ESCAPED.encode() + b', "after": "x"}',
        json.dumps({"meta": {"text": "not this"}, "text": "据报道，军队 \U0001f600 " + PROMPT, "id": 12}).encode(),
        json.dumps({"text": "据报道，军队 \U0001f600 " + PROMPT, "id": "ascii-escaped"}, ensure_ascii=False).encode(),
        json.dumps({"id": "list", "text": ["one", {"k": "two"}, 3, None, "four"]}).encode(),
    ]
    for raw in lines:
        record = json.loads(raw)
        want = record["text"] if isinstance(record["text"], str) else "one\nk\ntwo\nfour\n"
        for _ in range(30):
            stream = FieldStream("text", "id")
            cuts = sorted(rng.sample(range(1, len(raw)), k=min(len(raw) - 1, rng.randint(1, 12))))
            parts = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
            got = "".join(stream.feed(part) for part in parts) + stream.close()
            assert got == want, (raw, cuts)
            assert stream.found and stream.doc_id == str(record["id"])
