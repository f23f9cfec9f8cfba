"""The whole job: find the shards, scan each once (here, in a process pool, or on Dask), merge.

Every shard's result is written to the state folder as soon as it arrives, atomically, under a key
made of the shard's path, size and modification time, the index's digest and the settings. A run
that crashed or was stopped is started again with the same command: shards whose result is there
are not read again (the summary counts them as reused).

Engines:

- ``local``: ``jobs`` processes of this machine (``jobs=1``: this process);
- ``dask``: the Dask scheduler at ``scheduler`` (``tcp://host:8786``). Its workers must see the
  shards (and the ``--filtered-out`` folder) at the same paths; the state folder, the drop list
  and the report stay on this machine.

Both give the same report: each shard is scanned by the same function, and the merge orders
everything by shard path and line.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.decontam import ngrams
from propeval.decontam.index import Index
from propeval.decontam.scan import (
    FORMATS,
    MAX_LINE_BYTES,
    SCAN_VERSION,
    Bad,
    Finding,
    Shard,
    ShardResult,
    scan_seam,
    scan_shard,
    write_filtered,
)
from propeval.errors import EndpointError, UsageError
from propeval.fsutil import atomic_write


@dataclass(frozen=True)
class Options:
    shards: tuple[str, ...]
    text_field: str = "text"
    id_field: str = "id"
    min_tokens: int = 8
    jobs: int = 1
    scheduler: str = ""
    state_dir: Path | None = None
    drop_list: Path | None = None
    filtered_out: Path | None = None
    embed_rate: float = 0.0
    embed_threshold: float = 0.9
    max_line_bytes: int = MAX_LINE_BYTES
    keep_bad_lines: bool = False  # copy lines that could not be read as records (and not drop them)


# Rules whose report is a warning: the line was read in full, only in another way.
WARNING_RULES = ("decontam-long-line",)


@dataclass
class Result:
    index: Index
    engine: str
    keep_bad_lines: bool = False
    shards: list[ShardResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    reused: int = 0
    wall_seconds: float = 0.0
    written: list[str] = field(default_factory=list)

    @property
    def bad(self) -> list[tuple[str, Bad]]:
        return [(r.shard, b) for r in self.shards for b in r.bad]

    @property
    def flagged(self) -> list[tuple[str, int, str]]:
        return [(r.shard, line, doc) for r in self.shards for line, doc in sorted(r.flagged.items())]

    @property
    def dropped(self) -> list[tuple[str, int, str, str]]:
        """(shard, line, doc id, why) of every document to drop: those that hold corpus text
        ("found"), and those that could not be read as records ("unread") unless bad lines are
        kept, ordered by shard and line."""
        out = []
        for r in self.shards:
            lines = dict.fromkeys(r.flagged, "found")
            if not self.keep_bad_lines:
                lines.update({line: "unread" for line in r.unread if line not in r.flagged})
            for line in sorted(lines):
                out.append((r.shard, line, r.flagged.get(line) or r.unread[line], lines[line]))
        return out

    @property
    def exit_code(self) -> int:
        # A paraphrase of the embedding pass is for review (a warning), not a finding to act on;
        # so is a long line, which is read in full.
        bad = any(b.rule not in WARNING_RULES for _, b in self.bad)
        return 1 if any(f.kind != "paraphrase" for f in self.findings) or bad else 0

    @property
    def sampled(self) -> int:
        """Documents in the embedding pass's sample."""
        return sum(len(r.sample) for r in self.shards)


# --------------------------------------------------------------------------- shards


def find_shards(
    patterns: Sequence[str],
    text_field: str,
    id_field: str,
    sample_rate: float = 0.0,
    skip: Sequence[Path] = (),
    max_line_bytes: int = MAX_LINE_BYTES,
) -> list[Shard]:
    """Every shard named by ``patterns`` (paths, folders or globs), sorted by path, each once.

    A folder or glob leaves out what lies under ``skip`` (the state folder, the filtered copy), so
    a second run does not read the first one's output as training data.

    Raises:
        UsageError: a pattern names nothing, or a file that is neither JSONL nor Parquet.
    """
    found: dict[str, Shard] = {}
    for pattern in patterns:
        if glob.has_magic(pattern):
            paths = sorted(glob.glob(pattern, recursive=True))
        elif os.path.isdir(pattern):
            paths = sorted(str(p) for p in Path(pattern).rglob("*") if p.suffix.lower() in FORMATS and p.is_file())
        else:
            paths = [pattern] if os.path.exists(pattern) else []
        paths = [p for p in paths if os.path.isfile(p)]
        if len(paths) > 1 or glob.has_magic(pattern) or os.path.isdir(pattern):
            paths = [p for p in paths if not any(Path(p).resolve().is_relative_to(d.resolve()) for d in skip)]
        if not paths:
            raise UsageError(f"no shard matches {pattern!r}: give JSONL or Parquet files, folders or globs")
        for path in paths:
            fmt = FORMATS.get(Path(path).suffix.lower())
            if fmt is None:
                raise UsageError(
                    f"{path}: not a shard format propeval reads; use .jsonl (or .ndjson, .json) or .parquet"
                )
            shard = Shard(path, os.path.abspath(path), fmt, text_field, id_field, sample_rate, max_line_bytes)
            found.setdefault(path, shard)
    return [found[p] for p in sorted(found)]


def shard_key(shard: Shard, index: Index) -> str:
    """What a shard's stored result is valid for: the file as it is, the index, the settings."""
    st = os.stat(shard.file)
    parts = [shard.file, st.st_size, st.st_mtime_ns, index.digest, shard.fmt]
    parts += [shard.text_field, shard.id_field, shard.sample_rate, shard.max_line_bytes, ngrams.VERSION, SCAN_VERSION]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:32]


def default_state_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("propeval")) / "decontaminate"


def _load_state(path: Path) -> ShardResult | None:
    try:
        return ShardResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: scan the shard again


# --------------------------------------------------------------------------- engines


_WORKER_INDEX: Index | None = None


def _init_worker(index: Index) -> None:
    global _WORKER_INDEX
    _WORKER_INDEX = index


def _scan_in_worker(shard: Shard) -> ShardResult:
    assert _WORKER_INDEX is not None
    return scan_shard(shard, _WORKER_INDEX)


def _local(shards: list[Shard], index: Index, jobs: int) -> Iterator[tuple[Shard, ShardResult]]:
    if jobs <= 1 or len(shards) <= 1:
        for shard in shards:
            yield shard, scan_shard(shard, index)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn, not fork: a forked copy of a process that runs threads (a Dask client) can hang.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        min(jobs, len(shards)), mp_context=ctx, initializer=_init_worker, initargs=(index,)
    ) as pool:
        futures = {pool.submit(_scan_in_worker, shard): shard for shard in shards}
        for future in as_completed(futures):
            yield futures[future], future.result()


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address``.

    Raises:
        DependencyError: the ``decontaminate`` extra is not installed.
        EndpointError: the scheduler cannot be reached (exit 3).
    """
    from propeval.errors import require

    require("distributed", "decontaminate")
    from distributed import Client

    try:
        # Dask's own connect timeout (distributed.comm.timeouts.connect, 30 s unless set, e.g. by
        # DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=10s).
        return Client(address, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise EndpointError(f"cannot reach the Dask scheduler at {address}: {e}") from e


def _dask(shards: list[Shard], index: Index, client: Any) -> Iterator[tuple[Shard, ShardResult]]:
    from distributed import as_completed

    if not shards:
        return
    shipped = client.scatter(index, broadcast=True)
    futures = {client.submit(scan_shard, shard, shipped, pure=False): shard for shard in shards}
    with client.as_current():  # as_completed looks for the current client
        for future in as_completed(list(futures)):
            yield futures[future], future.result()


# --------------------------------------------------------------------------- the job


def decontaminate(
    index: Index,
    options: Options,
    *,
    client: Any = None,
    announce: Callable[[str], None] | None = None,
    encoder: Any = None,
    texts: Sequence[tuple[str, str]] = (),
) -> Result:
    """Scan every shard of ``options`` for ``index``, resuming from the state folder.

    Args:
        client: a Dask client (:func:`connect`); None runs locally with ``options.jobs`` processes.
        announce: called with a line per scanned shard (progress on stderr).
        encoder, texts: the embedding pass (``options.embed_rate`` > 0): the encoder, and the
            (label, text) of the corpus texts to compare the sample with.
    """
    import time

    started = time.perf_counter()
    state = options.state_dir or default_state_dir()
    skip = [state, *([options.filtered_out] if options.filtered_out else [])]
    shards = find_shards(
        options.shards, options.text_field, options.id_field, options.embed_rate, skip, options.max_line_bytes
    )
    keys = {s.path: shard_key(s, index) for s in shards}
    done: dict[str, ShardResult] = {}
    for s in shards:
        stored = _load_state(state / f"{keys[s.path]}.json")
        if stored is not None and stored.shard == s.path:
            done[s.path] = stored
    reused = len(done)
    todo = [s for s in shards if s.path not in done]
    if client is not None:
        engine = f"dask ({client.scheduler.address}, {len(client.scheduler_info().get('workers', {}))} workers)"
        stream = _dask(todo, index, client)
    else:
        jobs = max(1, options.jobs)
        used = min(jobs, max(len(todo), 1))
        engine = f"local ({used} process{'es' if used > 1 else ''})"
        stream = _local(todo, index, jobs)
    for shard, shard_result in stream:
        atomic_write(state / f"{keys[shard.path]}.json", json.dumps(shard_result.to_dict(), ensure_ascii=False))
        done[shard.path] = shard_result
        if announce:
            announce(f"{shard.path}: {shard_result.docs} document(s), {len(shard_result.findings)} finding(s)")
    ordered = [done[s.path] for s in shards]
    findings = [f for r in ordered for f in r.findings]
    for before, after in itertools.pairwise(ordered):
        seams = scan_seam(index, before, after)
        findings.extend(seams)
        for f in seams:
            before.flagged[f.line] = f.doc
            after.flagged[f.next_line] = f.next_doc
    if options.embed_rate > 0 and encoder is not None:
        from propeval.decontam.paraphrase import paraphrases

        sample = [(r.shard, line, doc, text) for r in ordered for line, doc, text in r.sample]
        findings.extend(paraphrases(texts, sample, encoder, options.embed_threshold))
    findings.sort(key=Finding.sort_key)
    result = Result(
        index=index,
        engine=engine,
        keep_bad_lines=options.keep_bad_lines,
        shards=ordered,
        findings=findings,
        reused=reused,
    )
    if options.drop_list is not None:
        ids = sorted({doc for _, _, doc, _ in result.dropped})
        atomic_write(options.drop_list, "".join(f"{doc}\n" for doc in ids))
        result.written.append(f"{options.drop_list} ({len(ids)} document id(s) to drop)")
    if options.filtered_out is not None:
        result.written.append(_filter(shards, result, options.filtered_out, client))
    result.wall_seconds = time.perf_counter() - started
    return result


def _filter(shards: list[Shard], result: Result, out: Path, client: Any) -> str:
    """Write the filtered copy of every shard under ``out``, at its path below the shards' common folder."""
    base = os.path.commonpath([os.path.dirname(s.file) for s in shards])
    drop: dict[str, set[int]] = {s.path: set() for s in shards}
    for shard, line, _, _ in result.dropped:
        drop[shard].add(line)
    keep = result.keep_bad_lines
    jobs = [(s, drop[s.path], os.path.join(os.path.abspath(out), os.path.relpath(s.file, base)), keep) for s in shards]
    if client is not None:
        futures = [client.submit(write_filtered, *job, pure=False) for job in jobs]
        dropped = sum(client.gather(futures))
    else:
        dropped = sum(write_filtered(*job) for job in jobs)
    return f"{out}/ ({len(shards)} filtered shard(s), {dropped} document(s) left out)"
