"""One shard: read it, search it for the index's n-grams, and (on request) write its filtered copy.

:func:`scan_shard` is a plain function of picklable values, so the same code runs in this process,
in a local process pool and on Dask workers. It never raises for a bad shard: a line that is not
JSON, a record without the text field, a Parquet file that cannot be read are each a :class:`Bad`
with the line (or row) and the reason, and the rest of the shard is still read.

Documents are scanned in batches of about :data:`BATCH_BYTES`, joined by a separator byte, so one
numpy pass hashes many documents. A window of tokens that crosses from one document into the
next is a *seam*: text that a model trained on packed sequences sees when the two documents are
concatenated. A seam finding is a window whose first tokens end one document and whose last
tokens begin the next (consecutive in the shard, or the last document of one shard and the first
of the next in path order): a plant spread across two documents is found there even when neither
document alone holds a whole n-gram. Each batch begins with the previous batch's last document,
so no seam between batches is lost.

Memory is bounded per line, not only per batch. A JSONL line over ``max_line_bytes`` is never read
whole: :class:`~propeval.decontam.rawtext.FieldStream` streams its text field chunk by chunk, and it
is reported (``decontam-long-line``, a warning). Any text longer than :data:`WINDOW_CHARS` (a long
line streamed, or a long Parquet cell) is scanned in windows of that many characters, each one
beginning with the last tokens of the window before (:func:`overlap_tokens`: more than any searched
text holds), so whatever a window boundary cuts is whole in the next window; what the windows of
one document find is merged into one finding per text.

A line that cannot be read as a record fails safe: it is a :class:`Bad` line, and its text is still
scanned (the text field found by its key with bad bytes replaced, or the whole line as text; see
:mod:`propeval.decontam.rawtext`), and :func:`write_filtered` leaves it out unless told to keep
bad lines.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, LCSseq

from propeval.decontam import ngrams
from propeval.decontam.index import Index
from propeval.decontam.limits import MAX_LINE_BYTES, READ_CHUNK, WINDOW_CHARS
from propeval.decontam.rawtext import FieldStream, raw_text
from propeval.fsutil import atomic_stream

# What a stored shard result means changes with this (it is part of the state key).
SCAN_VERSION = "bad-lines-scanned/1+windows/1"
BATCH_BYTES = 1 << 20
SPAN_CHARS = 300
SAMPLE_CHARS = 20_000  # of a sampled document, what the embedding pass reads
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True)
class Shard:
    """A shard to scan: the path as the report shows it, the absolute path workers open, and how
    to read it (a Dask worker's working folder is not this process's)."""

    path: str
    file: str
    fmt: str  # jsonl | parquet
    text_field: str
    id_field: str
    sample_rate: float = 0.0  # the embedding pass's share of documents (0: none)
    max_line_bytes: int = MAX_LINE_BYTES  # a longer JSONL line is streamed, never read whole


@dataclass
class Bad:
    line: int  # 1-based line (JSONL) or row (Parquet); 0: the whole shard
    rule: str
    message: str


@dataclass
class Finding:
    """One searched text found in one document (or across the seam of two)."""

    shard: str
    line: int
    doc: str
    label: str
    kind: str  # exact | ngram | seam | near | paraphrase
    matched: int  # windows of the text found (near: its tokens aligned in order)
    total: int  # windows the text has (near: its tokens)
    span: str  # the matching tokens, normalised, clipped
    next_shard: str = ""  # seam: the second document
    next_line: int = 0
    next_doc: str = ""
    score: float = 0.0  # near: the alignment's similarity; the embedding pass: the cosine

    def sort_key(self) -> tuple[Any, ...]:
        return (self.shard, self.line, self.next_shard, self.next_line, self.label, self.kind)


@dataclass
class Edge:
    """The first or last n-1 tokens of a shard: what a seam with the next shard is made of."""

    line: int
    doc: str
    text: str


@dataclass
class ShardResult:
    shard: str
    docs: int = 0
    bytes: int = 0
    cpu_seconds: float = 0.0
    bad: list[Bad] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    flagged: dict[int, str] = field(default_factory=dict)  # line -> doc id
    unread: dict[int, str] = field(default_factory=dict)  # bad line -> doc id (or SHARD:LINE)
    head: Edge | None = None
    tail: Edge | None = None
    sample: list[tuple[int, str, str]] = field(default_factory=list)  # (line, doc id, text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "shard": self.shard,
            "docs": self.docs,
            "bytes": self.bytes,
            "cpu_seconds": self.cpu_seconds,
            "bad": [vars(b) for b in self.bad],
            "findings": [vars(f) for f in self.findings],
            "flagged": [[line, doc] for line, doc in sorted(self.flagged.items())],
            "unread": [[line, doc] for line, doc in sorted(self.unread.items())],
            "head": vars(self.head) if self.head else None,
            "tail": vars(self.tail) if self.tail else None,
            "sample": [list(row) for row in self.sample],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShardResult:
        return cls(
            shard=d["shard"],
            docs=d["docs"],
            bytes=d["bytes"],
            cpu_seconds=d["cpu_seconds"],
            bad=[Bad(**b) for b in d["bad"]],
            findings=[Finding(**f) for f in d["findings"]],
            flagged={int(line): str(doc) for line, doc in d["flagged"]},
            unread={int(line): str(doc) for line, doc in d["unread"]},
            head=Edge(**d["head"]) if d["head"] else None,
            tail=Edge(**d["tail"]) if d["tail"] else None,
            sample=[(int(line), str(doc), str(text)) for line, doc, text in d["sample"]],
        )


# --------------------------------------------------------------------------- reading


@dataclass
class _Batch:
    lines: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    bufs: list[bytes] = field(default_factory=list)
    size: int = 0

    def add(self, line: int, doc: str, buf: bytes) -> None:
        self.lines.append(line)
        self.ids.append(doc)
        self.bufs.append(buf)
        self.size += len(buf)


def _doc_id(value: Any, shard: str, line: int) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{shard}:{line}"


def _records(shard: Shard, result: ShardResult, late: dict[int, str]) -> Iterator[tuple[int, str, str]]:
    """(line, doc id, text) of every record; bad ones go to ``result.bad`` (and ``result.unread``)
    with their text still given. Consecutive texts with the same line are windows of one long
    line, read as a stream; its id, when it comes after the text, is put in ``late``."""
    if shard.fmt == "parquet":
        yield from _parquet_records(shard, result)
    else:
        yield from _jsonl_records(shard, result, late)


_SCANNED_AS = "dropped from the filtered copy unless --keep-bad-lines"


def _jsonl_records(shard: Shard, result: ShardResult, late: dict[int, str]) -> Iterator[tuple[int, str, str]]:
    try:
        fh = open(shard.file, "rb")  # noqa: SIM115 - closed below; a failed open is a bad shard
    except OSError as e:
        result.bad.append(Bad(0, "decontam-bad-shard", f"cannot be read: {e.strerror or e}"))
        return
    # The loop runs once a line: what every good line takes is inlined (orjson, the dict lookups),
    # and what only a bad, blank or long line takes is not.
    loads, field, id_field, path = orjson.loads, shard.text_field, shard.id_field, shard.path
    cap = shard.max_line_bytes
    with fh:
        number = 0
        try:
            readline = fh.readline
            while raw := readline(cap + 1):
                number += 1
                result.bytes += len(raw)
                if len(raw) > cap and raw[-1] != 10:  # no newline within the cap: a long line
                    yield from _long_line(fh, raw, number, shard, result, late)
                    continue
                try:
                    record = loads(raw)
                except orjson.JSONDecodeError:
                    if not raw.strip():
                        continue
                    record = _slow_line(raw, number, result)
                    if record is _BAD:
                        yield from _unparsed(raw, number, shard, result)
                        continue
                text = record.get(field) if type(record) is dict else None
                if type(text) is not str:
                    yield from _bad_record(record, raw, number, shard, result)
                    continue
                doc = record.get(id_field)
                yield number, doc if type(doc) is str and doc else _doc_id(doc, path, number), text
        except OSError as e:
            result.bad.append(Bad(number + 1, "decontam-bad-shard", f"reading stopped: {e.strerror or e}"))


_BAD = object()


def _slow_line(raw: bytes, number: int, result: ShardResult) -> Any:
    """A line orjson refuses: ``json``'s result (NaN, a lone surrogate, deep nesting), or ``_BAD``
    with ``json``'s error reported."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        cut = "" if raw.endswith(b"\n") else "; the line has no end: the file looks truncated"
        reason = f"{e.msg}, column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
        result.bad.append(Bad(number, "decontam-bad-line", f"not a JSON line ({reason}){cut}"))
        return _BAD


def _unparsed(raw: bytes, number: int, shard: Shard, result: ShardResult) -> Iterator[tuple[int, str, str]]:
    """The text of a line that is not JSON (reported already): its text field found by its key,
    bad bytes replaced, or the whole line as text when it has no such field."""
    stream = FieldStream(shard.text_field, shard.id_field)
    text = stream.feed(raw) + stream.close()
    how = f"the {shard.text_field!r} field found by its key"
    if not stream.texts:
        text, how = raw_text(raw), "the whole line"
    doc = stream.doc_id or f"{shard.path}:{number}"
    bad = result.bad[-1]
    bad.message += f"; scanned as raw text ({how}); {_SCANNED_AS}"
    result.unread[number] = doc
    if text.strip():
        yield number, doc, text


def _bad_record(
    record: Any, raw: bytes, number: int, shard: Shard, result: ShardResult
) -> Iterator[tuple[int, str, str]]:
    """A JSON line that is no record with a string text field: reported; the strings under its text
    field (a list of paragraphs, say), or the whole line, scanned as text."""
    field = shard.text_field
    is_dict = type(record) is dict
    what = "not a JSON object" if not is_dict else f"no string field {field!r}"
    strings = _strings(record.get(field)) if is_dict else []
    text, how = ("\n".join(strings), f"the strings under {field!r}") if strings else (raw_text(raw), "the whole line")
    doc = _doc_id(record.get(shard.id_field), shard.path, number) if is_dict else f"{shard.path}:{number}"
    result.bad.append(Bad(number, "decontam-bad-record", f"{what}; scanned as raw text ({how}); {_SCANNED_AS}"))
    result.unread[number] = doc
    if text.strip():
        yield number, doc, text


def _strings(value: Any, depth: int = 0) -> list[str]:
    """Every string inside a JSON value (an array of paragraphs, an object of parts), in order."""
    if isinstance(value, str):
        return [value]
    if depth > 64:
        return []
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, depth + 1)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v, depth + 1))]
    return []


def _long_line(
    fh: Any, first: bytes, number: int, shard: Shard, result: ShardResult, late: dict[int, str]
) -> Iterator[tuple[int, str, str]]:
    """A line longer than ``shard.max_line_bytes``, read as a stream: its text field in windows of
    :data:`WINDOW_CHARS` characters (the same line each), never the whole line in memory."""
    start = fh.tell() - len(first)
    stream = FieldStream(shard.text_field, shard.id_field)
    placeholder = f"{shard.path}:{number}"
    pieces: list[str] = []
    held = 0
    size = len(first)
    chunk = first
    while True:
        text = stream.feed(chunk)
        if text:
            pieces.append(text)
            held += len(text)
            if held >= WINDOW_CHARS:
                yield number, placeholder, "".join(pieces)
                pieces, held = [], 0
        if chunk.endswith(b"\n"):
            break
        chunk = fh.readline(READ_CHUNK)
        if not chunk:
            break
        size += len(chunk)
        result.bytes += len(chunk)
    tail = stream.close()
    if tail:
        pieces.append(tail)
    if pieces:
        yield number, placeholder, "".join(pieces)
    end = fh.tell()
    cap = shard.max_line_bytes
    how = "its text field streamed in windows"
    if not stream.texts:  # no text under the key: the whole line as text, streamed again
        how = "no string under its text field: the whole line streamed as raw text, in windows"
        yield from ((number, placeholder, piece) for piece in _raw_pieces(fh, start, end))
        fh.seek(end)
        what = "not a JSON object" if not stream.found else f"no string field {shard.text_field!r}"
        result.bad.append(
            Bad(number, "decontam-bad-record", f"{what}; scanned as raw text (the whole line); {_SCANNED_AS}")
        )
        result.unread[number] = stream.doc_id or placeholder
    elif not stream.complete:  # its text was read, but the line is not one whole JSON value
        cut = "" if chunk.endswith(b"\n") else "; the line has no end: the file looks truncated"
        result.bad.append(
            Bad(
                number,
                "decontam-bad-line",
                f"not a JSON line (it ends inside a string or bracket){cut}; scanned as raw text (the "
                f"{shard.text_field!r} field found by its key); {_SCANNED_AS}",
            )
        )
        result.unread[number] = stream.doc_id or placeholder
    if stream.doc_id:
        late[number] = stream.doc_id
    result.bad.append(
        Bad(
            number,
            "decontam-long-line",
            f"the line is {size:,} bytes, over --max-line-bytes {cap:,}: never read whole; {how} of "
            f"{WINDOW_CHARS:,} characters, each overlapping the one before",
        )
    )


def _raw_pieces(fh: Any, start: int, end: int) -> Iterator[str]:
    """The bytes from ``start`` to ``end`` as text, :data:`WINDOW_CHARS` at a time: decoded with
    replacement, JSON escapes decoded (one cut by a chunk's end is kept for the next chunk)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fh.seek(start)
    left = end - start
    pending = ""
    while left > 0:
        chunk = fh.read(min(READ_CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
        s = pending + decoder.decode(chunk, left <= 0)
        cut = s.rfind("\\", max(0, len(s) - 12))
        pending, s = (s[cut:], s[:cut]) if cut >= 0 and left > 0 else ("", s)
        yield raw_text(s.encode("utf-8", "surrogatepass"))
    if pending:
        yield raw_text(pending.encode("utf-8", "surrogatepass"))


def _parquet_records(shard: Shard, result: ShardResult) -> Iterator[tuple[int, str, str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(shard.file)
        names = pf.schema_arrow.names
    except (OSError, pa.ArrowException) as e:
        result.bad.append(
            Bad(
                0,
                "decontam-bad-shard",
                f"not a readable Parquet file ({e}); it was not scanned, and is left out of the filtered copy "
                "unless --keep-bad-lines",
            )
        )
        return
    if shard.text_field not in names:
        result.bad.append(
            Bad(0, "decontam-bad-shard", f"has no column {shard.text_field!r} (columns: {', '.join(names)})")
        )
        return
    columns = [shard.text_field] + ([shard.id_field] if shard.id_field in names else [])
    result.bytes += os.path.getsize(shard.file)
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=4096, columns=columns):
            texts = batch.column(0).to_pylist()
            ids = batch.column(1).to_pylist() if len(columns) > 1 else [None] * len(texts)
            for text, doc in zip(texts, ids, strict=True):
                row += 1
                if not isinstance(text, str):
                    strings = _strings(text)
                    how = f"the strings under {shard.text_field!r}" if strings else "nothing: it holds no string"
                    result.bad.append(
                        Bad(
                            row,
                            "decontam-bad-record",
                            f"field {shard.text_field!r} is not a string; scanned as raw text ({how}); {_SCANNED_AS}",
                        )
                    )
                    result.unread[row] = _doc_id(doc, shard.path, row)
                    if strings:
                        yield row, result.unread[row], "\n".join(strings)
                    continue
                yield row, _doc_id(doc, shard.path, row), text
    except (OSError, pa.ArrowException) as e:
        result.bad.append(
            Bad(
                row + 1,
                "decontam-bad-shard",
                f"rows from {row + 1} on could not be read ({e}); they were not scanned, and the filtered copy "
                "ends before them",
            )
        )


# --------------------------------------------------------------------------- scanning


def sampled(shard: str, line: int, rate: float) -> bool:
    """Whether the document on ``line`` of ``shard`` is in the embedding sample of ``rate``: a hash
    of the two, so every engine and every rerun picks the same documents."""
    return rate > 0 and zlib.crc32(f"{shard}\0{line}".encode()) < rate * 2**32


def overlap_tokens(index: Index) -> int:
    """How many tokens of a window begin the next window of the same document: twice the longest
    searched text and an n-gram more, so a text cut by a window boundary (with the near pass's
    slack around it) is whole in the next window."""
    return 2 * max((t.tokens for t in index.texts), default=0) + index.n


def _pieces(text: str) -> Iterator[str]:
    """``text`` in windows of at most :data:`WINDOW_CHARS` characters, each cut at a space where
    one is near the end (a cut inside a word is made whole again by the next window's overlap)."""
    if len(text) <= WINDOW_CHARS:
        yield text
        return
    pos = 0
    while pos < len(text):
        end = pos + WINDOW_CHARS
        if end < len(text):
            space = text.rfind(" ", pos + WINDOW_CHARS // 2, end)
            end = space if space > pos else end
        yield text[pos:end]
        pos = end


def _tail(buf: bytes, keep: int) -> bytes:
    """The last ``keep`` tokens of a window's buffer (from the start of the first of them)."""
    tail = buf[-(64 << 10) :]
    tok = ngrams.tokenise(tail)
    if len(tok.starts) <= keep:
        return tail
    return tail[int(tok.starts[-keep]) - 1 :]  # tokenise puts a byte in front


def scan_shard(shard: Shard, index: Index) -> ShardResult:
    """Search one shard for the index's windows. Never raises for a bad shard (see :class:`Bad`)."""
    started = time.process_time()
    if index.format_chars:
        ngrams.use_format_chars(index.format_chars)
    result = ShardResult(shard=shard.path)
    batch = _Batch()
    carried = False  # the batch begins with the last document of the batch before
    first: tuple[int, str, bytes] | None = None
    canonical, rate = ngrams.canonical, shard.sample_rate
    late: dict[int, str] = {}  # a streamed line's id, read after its text
    windowed: set[int] = set()  # lines scanned in more than one window
    keep = overlap_tokens(index)
    previous, last_buf = 0, b""
    for line, doc, text in _records(shard, result, late):
        continued = line == previous
        if not continued:
            result.docs += 1
            if rate and sampled(shard.path, line, rate):
                result.sample.append((line, doc, text[:SAMPLE_CHARS]))
        previous = line
        for piece in _pieces(text):
            buf = piece.encode("ascii") if piece.isascii() else canonical(piece)
            if continued:
                buf = _tail(last_buf, keep) + buf
                windowed.add(line)
            continued, last_buf = True, buf
            if first is None:
                first = (line, doc, buf)
            batch.lines.append(line)
            batch.ids.append(doc)
            batch.bufs.append(buf)
            batch.size += len(buf)
            if batch.size >= BATCH_BYTES:
                _scan_batch(index, batch, result, carried=carried)
                carry = _Batch()
                carry.add(batch.lines[-1], batch.ids[-1], batch.bufs[-1])
                batch, carried = carry, True
    if batch.lines and not (carried and len(batch.lines) == 1):
        _scan_batch(index, batch, result, carried=carried)
    if first is not None:
        result.head = _edge(first[0], late.get(first[0], first[1]), first[2], index.n, head=True)
        result.tail = _edge(
            batch.lines[-1], late.get(batch.lines[-1], batch.ids[-1]), batch.bufs[-1], index.n, head=False
        )
    if windowed:
        result.findings = _merge_windows(result.findings, windowed)
    if late:
        _late_ids(result, late)
    result.findings.sort(key=Finding.sort_key)
    result.cpu_seconds = time.process_time() - started
    return result


_STRENGTH = {"exact": 3, "ngram": 2, "near": 1}


def _merge_windows(findings: list[Finding], windowed: set[int]) -> list[Finding]:
    """One finding per text in a document scanned in windows: the strongest (whole over n-grams
    over near; the most n-grams in one window; the best similarity). A text's n-grams are counted
    in the window that holds most of them, so the count is a lower bound on a windowed line."""
    out: list[Finding] = []
    best: dict[tuple[int, str], Finding] = {}
    for f in findings:
        if f.line not in windowed or f.kind not in _STRENGTH:
            out.append(f)
            continue
        key = (f.line, f.label)
        old = best.get(key)
        if old is None or (_STRENGTH[f.kind], f.matched, f.score) > (_STRENGTH[old.kind], old.matched, old.score):
            best[key] = f
    return out + list(best.values())


def _late_ids(result: ShardResult, late: dict[int, str]) -> None:
    """Put the ids of streamed lines (read after their text) where their placeholder stood."""
    for f in result.findings:
        f.doc = late.get(f.line, f.doc)
        if f.next_line and f.next_shard == result.shard:
            f.next_doc = late.get(f.next_line, f.next_doc)
    for line in result.flagged:
        result.flagged[line] = late.get(line, result.flagged[line])


def _edge(line: int, doc: str, buf: bytes, n: int, *, head: bool) -> Edge:
    tok = ngrams.tokenise(buf)
    count = len(tok.starts)
    if not count:
        return Edge(line, doc, "")
    take = min(count, n - 1)
    first, last = (0, take - 1) if head else (count - take, count - 1)
    return Edge(line, doc, tok.text(first, last))


def _scan_batch(index: Index, batch: _Batch, result: ShardResult, *, carried: bool, seams_only: bool = False) -> None:
    """Scan the documents of ``batch`` (joined by a separator byte) and add what is found.

    ``carried``: the first document was scanned with the batch before; only its seam with the
    next document is new. ``seams_only``: only windows that cross from one document into the next.
    """
    joined = b"\x00".join(batch.bufs)
    sizes = np.fromiter((len(b) + 1 for b in batch.bufs), dtype=np.int64, count=len(batch.bufs))
    doc_starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    tok = ngrams.tokenise(joined)

    def doc_of(i: int) -> int:  # the document of token i (tokenise adds a byte in front)
        return int(np.searchsorted(doc_starts, tok.starts[i] - 1, side="right")) - 1

    # (first doc, second doc or -1, text number) -> (positions of the text matched, token indexes)
    found: dict[tuple[int, int, int], tuple[set[int], list[int]]] = {}
    last_token = len(tok.starts) - 1
    # Only where a probe window of the index begins can a window of any width be in the index
    # (it begins with one): one pass over every token, the other widths at those tokens only.
    probes = ngrams.windows(tok, index.probe)
    probed = index.probe_table.find(probes) if index.probe_table is not None else np.zeros(0, dtype=np.int64)
    for width, table in index.hashes.items():
        at, hashes = ngrams.windows_at(tok, probed, width)
        for i in at[table.find(hashes)].tolist():
            entries = index.grams[width].get(tok.text(i, i + width - 1))
            if not entries:  # a hash collision: not a finding
                continue
            for number, pos in entries:
                text = index.texts[number]
                length = text.tokens if text.whole else width
                if i + length - 1 > last_token:
                    continue
                a, b = doc_of(i), doc_of(i + length - 1)
                if a == b:
                    if seams_only or (carried and a == 0):
                        continue
                    pair = -1
                elif b == a + 1 and not text.whole and batch.lines[a] != batch.lines[b]:
                    pair = b  # (between windows of one line, the overlap holds the whole window)
                else:
                    continue
                if text.whole and tok.text(i, i + length - 1) != text.whole:
                    continue
                positions, starts = found.setdefault((a, pair, number), (set(), []))
                positions.add(pos)
                starts.append(i)
    for (a, pair, number), (positions, starts) in found.items():
        text = index.texts[number]
        width = text.tokens if text.whole else index.n
        first, last = min(starts), max(starts) + width - 1
        whole = bool(text.whole) or (len(positions) == text.ngrams and max(starts) - min(starts) == text.ngrams - 1)
        span = tok.text(first, last)
        finding = Finding(
            shard=result.shard,
            line=batch.lines[a],
            doc=batch.ids[a],
            label=text.label,
            kind="seam" if pair >= 0 else ("exact" if whole else "ngram"),
            matched=len(positions),
            total=text.ngrams,
            span=span if len(span) <= SPAN_CHARS else span[: SPAN_CHARS - 1] + "…",
        )
        result.flagged[batch.lines[a]] = batch.ids[a]
        if pair >= 0:
            finding.next_shard = result.shard
            finding.next_line = batch.lines[pair]
            finding.next_doc = batch.ids[pair]
            result.flagged[batch.lines[pair]] = batch.ids[pair]
        result.findings.append(finding)
    if index.anchor_table is not None and not seams_only:
        if index.anchor == index.probe:  # every anchor is a probe window
            anchored = probed[index.anchor_table.find(probes[probed])]
            hashes = probes
        else:
            hashes = ngrams.windows(tok, index.anchor)
            anchored = index.anchor_table.find(hashes)
        done = {(a, n) for a, _, n in found}
        _near(index, batch, result, tok, doc_starts, done, anchored, hashes, carried=carried)


def _near(
    index: Index,
    batch: _Batch,
    result: ShardResult,
    tok: ngrams.Tokenised,
    doc_starts: np.ndarray,
    done: set[tuple[int, int]],
    anchored: np.ndarray,
    hashes: np.ndarray,
    *,
    carried: bool,
) -> None:
    """Near findings: a document's tokens around an anchor of a text, aligned with the text's.

    A text already found in a document (exact, n-gram or seam) is not aligned again there. The
    alignment is rapidfuzz's ``partial_ratio`` over token lists (the best window of the document
    region for the text), and the similarity is the text's against that window:
    ``2 * aligned / (text tokens + window tokens)``, aligned tokens in order. A replaced token
    costs one of L (one word in ten at 0.9); unrelated text that shares an anchor or two, and a
    document that holds only part of the text, score far below it."""
    width = index.anchor
    # (document, text) -> where the text would start in the batch's tokens, by each anchor found
    offsets: dict[tuple[int, int], set[int]] = {}
    # The documents of every anchor's first and last token, in one numpy call each (tokenise adds
    # a byte in front): an anchor across two documents is no anchor.
    first = np.searchsorted(doc_starts, tok.starts[anchored] - 1, side="right") - 1
    last = np.searchsorted(doc_starts, tok.starts[anchored + width - 1] - 1, side="right") - 1
    inside = (first == last) & (first > 0 if carried else True)
    anchors = index.anchors
    for i, a, h in zip(
        anchored[inside].tolist(), first[inside].tolist(), hashes[anchored[inside]].tolist(), strict=True
    ):
        for number, pos in anchors.get(h, ()):
            if (a, number) not in done:
                offsets.setdefault((a, number), set()).add(i - pos)
    ends = np.append(doc_starts[1:], len(tok.mapped))
    for (a, number), starts in sorted(offsets.items()):
        text = index.texts[number]
        size = len(text.words)
        slack = size - math.ceil(size * index.near - 1e-9) + 1
        # The document's tokens: those whose bytes lie inside it (a token of the batch never spans two)
        first_tok = int(np.searchsorted(tok.starts, doc_starts[a] + 1))
        last_tok = int(np.searchsorted(tok.starts, ends[a] + 1)) - 1
        best: tuple[float, int, int, int] | None = None
        for cluster in _clusters(sorted(starts), size):
            lo = max(first_tok, cluster[0] - slack)
            hi = min(last_tok, cluster[-1] + size - 1 + slack)
            if hi < lo:
                continue
            raw = tok.mapped[tok.starts[lo] : tok.ends[hi]].tobytes()
            region = [part for part in raw.split(b"\x00") if part]
            got = fuzz.partial_ratio_alignment(text.words, region, score_cutoff=100 * index.near - 1e-6)
            if got is None or got.score <= 0:
                continue
            # The whole text against the window found: a document that holds only part of the text
            # (shorter than it) scores by what it lacks too.
            window = region[got.dest_start : got.dest_end]
            score = Indel.normalized_similarity(text.words, window)
            if score < index.near - 1e-9:
                continue
            if best is None or score > best[0]:
                best = (score, lo + got.dest_start, lo + got.dest_end - 1, LCSseq.similarity(text.words, window))
        if best is None:
            continue
        score, first, last, aligned = best
        span = tok.text(first, last)
        result.findings.append(
            Finding(
                shard=result.shard,
                line=batch.lines[a],
                doc=batch.ids[a],
                label=text.label,
                kind="near",
                matched=aligned,
                total=size,
                span=span if len(span) <= SPAN_CHARS else span[: SPAN_CHARS - 1] + "…",
                score=round(score, 4),
            )
        )
        result.flagged[batch.lines[a]] = batch.ids[a]


def _clusters(starts: list[int], size: int) -> Iterator[list[int]]:
    """Runs of anchor offsets at most ``size`` tokens apart: one alignment each."""
    run = [starts[0]]
    for s in starts[1:]:
        if s - run[-1] > size:
            yield run
            run = []
        run.append(s)
    yield run


def scan_seam(index: Index, before: ShardResult, after: ShardResult) -> list[Finding]:
    """Findings across the seam of two shards: ``before``'s last document, ``after``'s first."""
    if before.tail is None or after.head is None:
        return []
    batch = _Batch()
    batch.add(before.tail.line, before.tail.doc, before.tail.text.encode("utf-8"))
    batch.add(after.head.line, after.head.doc, after.head.text.encode("utf-8"))
    scratch = ShardResult(shard=before.shard)
    _scan_batch(index, batch, scratch, carried=False, seams_only=True)
    for f in scratch.findings:
        f.next_shard = after.shard
    return scratch.findings


# --------------------------------------------------------------------------- the filtered copy


def write_filtered(shard: Shard, drop: set[int], out: str, keep_unreadable: bool = False) -> int:
    """Write ``shard`` to ``out`` without the documents on the lines (rows) in ``drop``; returns
    how many were left out. The caller puts bad lines in ``drop`` unless they are kept. A shard
    that cannot be read as Parquet is copied whole only with ``keep_unreadable`` (it was never
    scanned); else no copy is written. Written through :func:`propeval.fsutil.atomic_stream` (a
    temporary file in the same folder, renamed), so ``out`` is the old file or the whole new one.
    Lines are copied in chunks, so a long line is never held whole."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_stream(target) as fh:
            if shard.fmt == "parquet":
                dropped = _copy_parquet(shard, drop, fh, keep_unreadable)
            else:
                dropped = _copy_jsonl(shard, drop, fh)
            if dropped < 0:
                raise _NotKept
    except _NotKept:  # an unreadable shard, not kept: no copy at all, not an old one
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        return 0
    return dropped


class _NotKept(Exception):
    """The shard cannot be read and is not kept: the copy begun is thrown away."""


def _copy_jsonl(shard: Shard, drop: set[int], fh: Any) -> int:
    """Lines are numbered as the reader numbers them: one per newline, whatever its length."""
    dropped = 0
    number = 0
    with open(shard.file, "rb") as src:
        while raw := src.readline(READ_CHUNK):
            number += 1
            skip = number in drop
            dropped += skip
            if not skip:
                fh.write(raw)
            while raw[-1] != 10 and (raw := src.readline(READ_CHUNK)):
                if not skip:
                    fh.write(raw)
    return dropped


def _copy_parquet(shard: Shard, drop: set[int], fh: Any, keep_unreadable: bool) -> int:
    """-1: the file cannot be read as Parquet and is not kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(shard.file)
        schema = pf.schema_arrow
    except (OSError, pa.ArrowException):
        if not keep_unreadable:
            return -1
        with open(shard.file, "rb") as src:
            while chunk := src.read(1 << 20):
                fh.write(chunk)
        return 0
    dropped = 0
    row = 0
    with pq.ParquetWriter(fh, schema) as writer:
        try:
            for batch in pf.iter_batches(batch_size=4096):
                keep = np.array([row + k + 1 not in drop for k in range(batch.num_rows)], dtype=bool)
                row += batch.num_rows
                dropped += int((~keep).sum())
                writer.write_batch(batch.filter(pa.array(keep)))
        except (OSError, pa.ArrowException):
            pass  # rows that cannot be read were never scanned: the copy ends before them (reported)
    return dropped
