"""The text of a JSON line that cannot be read whole: one too long to hold, or one that is not JSON.

:class:`FieldStream` reads a line in chunks of bytes and gives back, chunk by chunk, the text of
one top-level field of the object on it (``"text": "..."``), its JSON escapes decoded, without
ever holding the whole value: a 200 MB line costs what its chunk costs. Undecodable bytes become
U+FFFD (as ``bytes.decode(errors="replace")`` does), so one bad byte loses one character, not the
document. When the field's value is an array or an object, every string inside it is the text
(a ``text`` field that is a list of paragraphs is still scanned). The id field's value is kept
when it is a short string or number.

:func:`raw_text` is the last resort for a line with no such field (not JSON at all, or a record
whose text is under another key): the whole line, decoded the same way, escapes and all.

Why by hand: the JSON libraries on PyPI (json, orjson, ijson, json-stream) hand a string value over
whole, so a 200 MB string is 200 MB (or 800 MB as a Python str of wide characters) before its
first token is scanned; and none of them reads past an invalid byte or a 5,000-digit number,
which is exactly the line this module exists for. This is a scanner, not a validator: it tracks
strings and nesting only, which is all that finding one key needs.
"""

from __future__ import annotations

import codecs
import json
import re

_SPECIAL = re.compile(r'["\\{}\[\],:]')  # outside a string: what changes the scanner's state
_IN_STRING = re.compile(r'["\\]')  # inside a string: its end, or an escape
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = re.compile(r"[0-9a-fA-F]{4}")
# Inside a string: the longest run of plain characters and well-formed escapes (the unrolled loop).
_RUN = re.compile(r'[^"\\]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\]*)*')
_HIGH = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")
_DECODER = json.JSONDecoder(strict=False)  # a raw control character in a string is kept, not refused
ID_CHARS = 256  # an id longer than this is not kept (the drop list then says SHARD:LINE)


def _unescape(s: str, start: int) -> tuple[str, int]:
    """The character an escape at ``s[start]`` (a backslash) stands for, and where the escape ends;
    ``("", start)`` when the escape is cut off by the end of ``s`` (wait for more)."""
    if start + 1 >= len(s):
        return "", start
    c = s[start + 1]
    if c != "u":
        return _ESCAPES.get(c, c), start + 2
    if start + 6 > len(s):
        return "", start
    digits = s[start + 2 : start + 6]
    if not _HEX.fullmatch(digits):
        return "\ufffd", start + 2
    code = int(digits, 16)
    if 0xD800 <= code < 0xDC00:  # a high surrogate: a low one should follow
        if start + 12 > len(s):
            return "", start
        if s[start + 6 : start + 8] == "\\u" and _HEX.fullmatch(s[start + 8 : start + 12]):
            low = int(s[start + 8 : start + 12], 16)
            if 0xDC00 <= low < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), start + 12
        return "\ufffd", start + 6
    if 0xDC00 <= code < 0xE000:
        return "\ufffd", start + 6
    return chr(code), start + 6


def raw_text(data: bytes) -> str:
    """A whole line as text: bytes decoded with replacement, JSON escapes decoded wherever they stand."""
    s = data.decode("utf-8", errors="replace")
    if "\\" not in s:
        return s
    out: list[str] = []
    last = 0
    pos = s.find("\\")
    while pos >= 0:
        out.append(s[last:pos])
        char, end = _unescape(s, pos)
        if not char:  # cut off at the end of the line
            last = len(s)
            break
        out.append(char)
        last = end
        pos = s.find("\\", end)
    out.append(s[last:])
    return "".join(out)


def _hold_surrogate(s: str, pos: int, stop: int) -> int:
    """Where to end a run that reaches the end of a chunk: before a trailing high-surrogate escape
    (its low half may begin the next chunk), else at ``stop``."""
    m = _HIGH.search(s, max(pos, stop - 6), stop)
    if m is None:
        return stop
    backslashes = len(s[pos : m.start() + 1]) - len(s[pos : m.start() + 1].rstrip("\\"))
    return m.start() if backslashes % 2 == 1 else stop


class FieldStream:
    """Feed a JSON line chunk by chunk; each :meth:`feed` returns the text of ``field`` found in it.

    Attributes after :meth:`close`:
        found: the top-level object had the key ``field``.
        texts: strings of the field's value were read (its text, or strings inside it).
        doc_id: the ``id_field`` value as text, when it is a string or number of at most
            :data:`ID_CHARS` characters; else None.
        complete: the line ended where its top-level value ended (no open string or bracket).
    """

    def __init__(self, field: str, id_field: str) -> None:
        self.field, self.id_field = field, id_field
        self.found = False
        self.texts = False
        self.doc_id: str | None = None
        self.complete = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # an escape cut off by the end of a chunk
        self._depth = 0
        self._in_string = False
        self._role = ""  # of the string being read: key | text | id | skip
        self._key: list[str] = []  # the current key, up to len(field) + 1 characters
        self._key_len = 0
        self._expect_key = False  # at depth 1: the next string is a key (else a value)
        self._value_of = ""  # at depth 1, after a colon: the key whose value comes next
        self._collect_depth = 0  # > 0: inside the field's array or object, every string is text
        self._literal: list[str] = []  # the id's number, read between structural characters
        self._id: list[str] = []
        self._id_len = 0
        self._started = False  # the top-level value has begun

    def feed(self, chunk: bytes, final: bool = False) -> str:
        s = self._pending + self._decoder.decode(chunk, final)
        self._pending = ""
        out: list[str] = []
        pos, end = 0, len(s)
        while pos < end:
            if self._in_string:
                pos = self._string(s, pos, out, final)
                if pos < 0:  # an escape cut off: keep it for the next chunk
                    break
                continue
            m = _SPECIAL.search(s, pos)
            stop = m.start() if m else end
            if stop > pos:
                self._between(s[pos:stop])
            if m is None:
                break
            self._structural(m.group())
            pos = stop + 1
        return "".join(out)

    def close(self) -> str:
        tail = self.feed(b"", final=True)
        if self._pending:  # an escape cut off by the end of the line
            self._pending = ""
        self._end_literal()
        self.complete = self._started and self._depth == 0 and not self._in_string
        return tail

    # ------------------------------------------------------------------ inside a string

    def _string(self, s: str, pos: int, out: list[str], final: bool) -> int:
        """Read string content from ``pos``; returns where to go on, or -1 (wait for more).

        A run of content with well-formed escapes is decoded by the json module in one call (C
        speed: a Chinese text written as ``\\uXXXX`` escapes is one call, not one per character);
        what stops a run is the closing quote, a malformed escape, or the end of the chunk."""
        quote, backslash = s.find('"', pos), s.find("\\", pos)
        if backslash < 0 or 0 <= quote < backslash:  # no escape before the end: a plain slice (memchr speed)
            stop = quote if quote >= 0 else len(s)
            if stop > pos and self._role != "skip":
                self._content(s[pos:stop], out)
        else:
            stop = _RUN.match(s, pos).end()  # type: ignore[union-attr]  # the pattern matches the empty string
            if not final and (stop == len(s) or (s[stop] == "\\" and not _unescape(s, stop)[0])):
                stop = _hold_surrogate(s, pos, stop)
            if stop > pos and self._role != "skip":
                self._content(_DECODER.decode('"' + s[pos:stop] + '"'), out)
        if stop == len(s):
            return stop
        if s[stop] == '"':
            if self._role == "text" and self._collect_depth:
                out.append("\n")  # strings inside the field's array or object are separate texts
            self._close_string()
            return stop + 1
        char, after = _unescape(s, stop)
        if not char:
            if final:
                return len(s)
            self._pending = s[stop:]
            return -1
        self._content(char, out)
        return after

    def _content(self, text: str, out: list[str]) -> None:
        role = self._role
        if role == "text":
            out.append(text)
            self.texts = True
        elif role == "key":
            if self._key_len <= len(self.field) + len(self.id_field):
                self._key.append(text)
            self._key_len += len(text)
        elif role == "id":
            if self._id_len <= ID_CHARS:
                self._id.append(text)
            self._id_len += len(text)

    def _close_string(self) -> None:
        self._in_string = False
        if self._role == "key":
            key = "".join(self._key) if self._key_len <= len(self.field) + len(self.id_field) else None
            self._value_of = key or ""
            self._expect_key = False
        elif self._role == "id" and self._id_len <= ID_CHARS:
            self.doc_id = "".join(self._id)
        self._role = ""

    # ------------------------------------------------------------------ outside strings

    def _between(self, text: str) -> None:
        """Characters between structural ones: whitespace, or a number or literal."""
        stripped = text.strip()
        if not stripped:
            return
        self._started = True
        at_id = self._depth == 1 and self._value_of == self.id_field and not self._collect_depth
        if at_id and sum(map(len, self._literal)) <= ID_CHARS:
            self._literal.append(stripped)

    def _end_literal(self) -> None:
        if self._literal:
            value = "".join(self._literal)
            self._literal = []
            if len(value) <= ID_CHARS and self.doc_id is None:
                self.doc_id = value

    def _structural(self, c: str) -> None:
        self._started = True
        if c == '"':
            self._in_string = True
            self._key, self._key_len, self._id, self._id_len = [], 0, [], 0
            if self._collect_depth:
                self._role = "text"
            elif self._depth == 1 and self._expect_key:
                self._role = "key"
            elif self._depth == 1 and self._value_of == self.field:
                self._role = "text"
                self.found = True
            elif self._depth == 1 and self._value_of == self.id_field:
                self._role = "id"
            else:
                self._role = "skip"
            return
        if c in "{[":
            if self._collect_depth:
                self._collect_depth += 1
            elif self._depth == 1 and self._value_of == self.field:
                self.found = True
                self._collect_depth = 1
            self._depth += 1
            if self._depth == 1:
                self._expect_key = c == "{"
            return
        if c in "}]":
            self._end_literal()
            if self._collect_depth:
                self._collect_depth -= 1
            self._depth = max(0, self._depth - 1)
            return
        if c == ",":
            self._end_literal()
            if self._depth == 1 and not self._collect_depth:
                self._expect_key = True
                self._value_of = ""
            return
        # ":" needs nothing: the key just read says whose value comes next
