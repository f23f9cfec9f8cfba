"""The sizes that bound what one line of a shard costs (no heavy import: `--help` reads them)."""

MAX_LINE_BYTES = 8 << 20  # the default --max-line-bytes: a longer JSONL line is streamed, never read whole
WINDOW_CHARS = 1 << 20  # a text longer than this is scanned in windows of this many characters
READ_CHUNK = 1 << 20  # bytes of a long line read (or copied) at a time
