"""``propeval decontaminate``: search a training corpus for the evaluation corpus's texts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from propeval.cli._common import config_from, format_option, show
from propeval.decontam.limits import MAX_LINE_BYTES
from propeval.errors import UsageError
from propeval.reporters import Report
from propeval.result import Problem, Severity
from propeval.rules import RULES, with_rules

if TYPE_CHECKING:
    from propeval.config import Config
    from propeval.decontam.scan import Shard


def _announce(message: str) -> None:
    click.echo(f"propeval decontaminate: {message}", err=True)


@click.command("decontaminate")
@click.argument("shards", nargs=-1, required=True, metavar="SHARD...")
@click.option("--text-field", default="text", show_default=True, help="The field (column) that holds the text.")
@click.option(
    "--id-field",
    default="id",
    show_default=True,
    help="The field that holds a document's id (the drop list's entries); without one, SHARD:LINE.",
)
@click.option("--ngram", "n", type=click.IntRange(3, 64), default=13, show_default=True, help="n-gram length, tokens.")
@click.option(
    "--min-tokens",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    help="Texts shorter than n but at least this long are searched whole; shorter ones are not searched.",
)
@click.option(
    "--near",
    type=click.FloatRange(0, 1),
    default=0.9,
    show_default=True,
    help="Also report documents that hold no n-gram of a corpus text but whose tokens align with it at "
    "this similarity or more (decontam-near: a word or so changed; texts of 10+ tokens at 0.9); 0: off.",
)
@click.option(
    "--jobs",
    type=click.IntRange(0, 1024),
    default=0,
    show_default=True,
    help="Local processes (0: one per core). Ignored with --scheduler.",
)
@click.option(
    "--scheduler",
    envvar="DASK_SCHEDULER_ADDRESS",
    default="",
    metavar="ADDRESS",
    help="Run on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786); "
    "default: $DASK_SCHEDULER_ADDRESS, else this machine.",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where each shard's result is kept, for resuming (default: the user cache, propeval/decontaminate).",
)
@click.option(
    "--drop-list",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the ids of the documents to drop to FILE, one a line.",
)
@click.option(
    "--filtered-out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write a copy of every shard without the documents found into DIR (same names and formats).",
)
@click.option(
    "--keep-bad-lines",
    is_flag=True,
    help="Copy lines that cannot be read as a record (not JSON, bad bytes, a text field that is not a string) into "
    "--filtered-out, and leave them off the drop list, unless their text (scanned as raw text) holds corpus text. "
    "Default: they are dropped, since what they hold cannot be known for sure.",
)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=4096),
    default=MAX_LINE_BYTES,
    show_default=True,
    help="A JSONL line longer than this is never read whole: its text field is streamed and scanned in windows "
    "(decontam-long-line, a warning), so memory does not grow with a line's length.",
)
@click.option(
    "--embed",
    "embed_rate",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    metavar="RATE",
    help="Also embed the sentences of a share RATE of the documents (0.001: one in a thousand, the same "
    "ones every run) and report those close in meaning to a corpus prompt or fact (decontam-embed).",
)
@click.option(
    "--embed-threshold",
    type=click.FloatRange(0, 1),
    default=None,
    help="The cosine for --embed (default: [tool.propeval.dedup]'s same-language semantic threshold).",
)
@format_option
@click.pass_context
def command(
    ctx: click.Context,
    shards: tuple[str, ...],
    text_field: str,
    id_field: str,
    n: int,
    min_tokens: int,
    near: float,
    jobs: int,
    scheduler: str,
    state_dir: Path | None,
    drop_list: Path | None,
    filtered_out: Path | None,
    keep_bad_lines: bool,
    max_line_bytes: int,
    embed_rate: float | None,
    embed_threshold: float | None,
    fmt: str,
) -> None:
    """Search training-data shards for the corpus's prompts, facts and frame markers.

    SHARD is a JSONL or Parquet file, a folder of them, or a glob ('data/**/*.jsonl'). Texts and
    documents are normalised as dedup does (NFKC, format characters dropped, case folded); tokens
    are runs of letters and digits, and each Chinese or Japanese character is a token. A document
    is reported when it shares an n-gram with a corpus text (decontam-ngram), holds a whole text
    (decontam-exact), when an n-gram runs from its end into the next document's start
    (decontam-seam: documents packed together in training), or when it holds no n-gram of a text
    but its tokens align with the text's at --near similarity (decontam-near: a word or so
    changed). Each shard's result is kept in the state folder: run the same command again after a
    crash and finished shards are not read again.

    A line that cannot be read as a record (not JSON, an invalid UTF-8 byte, a 5,000-digit id, a
    text field that is a list) is reported, its text is still scanned (the text field found by
    its key, bad bytes replaced, or the whole line), and it is dropped: listed in --drop-list
    and left out of --filtered-out, unless --keep-bad-lines. A line over --max-line-bytes is
    streamed and scanned in windows, never read whole.

    Exits 1 when a document holds corpus text or a shard has bad lines; paraphrases of the
    --embed pass and long lines are warnings.

    \b
    Rules:
      {rules}

    \b
    Examples:
      propeval decontaminate 'train/*.jsonl'                        # every core of this machine
      propeval decontaminate train/ --drop-list drop.txt --format json
      propeval decontaminate 'train/*.parquet' --text-field content --filtered-out clean/
      propeval decontaminate 'train/*.jsonl' --near 0.95             # near matches: 1 word in 20
      propeval decontaminate 'train/*.jsonl' --scheduler tcp://scheduler:8786   # a Dask cluster
    """
    # Over 80 lines only because the docstring is the command's --help; the code is about 40.
    config = config_from(ctx)
    from propeval.extras import require_extra

    require_extra("decontaminate", "decontaminate")  # before numpy or pyarrow is imported
    from propeval.decontam.index import build, corpus_entries
    from propeval.decontam.shards import Options, connect, decontaminate, find_shards
    from propeval.workspace import Workspace

    skip = [p for p in (state_dir, filtered_out) if p is not None]
    found = find_shards(shards, text_field, id_field, embed_rate or 0.0, skip, max_line_bytes)
    _refuse_overwriting(found, drop_list, filtered_out)
    entries = corpus_entries(Workspace(config).corpus)
    index = build(entries, n=n, min_tokens=min_tokens, near=near)
    encoder: Any = None
    texts: list[tuple[str, str]] = []
    threshold = 0.0
    if embed_rate:
        encoder, texts, threshold = _embedding(config, entries, embed_threshold)
    options = Options(
        shards=shards,
        text_field=text_field,
        id_field=id_field,
        min_tokens=min_tokens,
        jobs=jobs or os.cpu_count() or 1,
        scheduler=scheduler,
        state_dir=state_dir,
        drop_list=drop_list,
        filtered_out=filtered_out,
        embed_rate=embed_rate or 0.0,
        embed_threshold=threshold,
        max_line_bytes=max_line_bytes,
        keep_bad_lines=keep_bad_lines,
    )
    client = connect(scheduler) if scheduler else None
    try:
        result = decontaminate(index, options, client=client, announce=_announce, encoder=encoder, texts=texts)
    finally:
        if client is not None:
            client.close()
    show(decontamination_report(result, options, getattr(encoder, "name", "")), fmt)
    ctx.exit(result.exit_code)


command.help = with_rules(command.help or "", "decontaminate")


def _refuse_overwriting(found: list[Shard], drop_list: Path | None, filtered_out: Path | None) -> None:
    """A usage error when an output file or folder is, or holds, a shard to be read."""
    outputs = [p.resolve() for p in (drop_list, filtered_out) if p is not None]
    for shard in found:
        path = Path(shard.path).resolve()
        if any(path == out or out in path.parents for out in outputs):
            raise UsageError(f"{shard.path}: an output would overwrite or hold this shard; write it elsewhere")


def _embedding(
    config: Config, entries: list[tuple[str, str, str, str]], embed_threshold: float | None
) -> tuple[Any, list[tuple[str, str]], float]:
    """The embedding pass's encoder (dedup's), the texts it compares and its cosine threshold."""
    from propeval.embed.registry import configured_encoder

    settings = config.settings.dedup
    # a bare cosine (dedup's score may be a margin, which needs a corpus around each text)
    threshold = embed_threshold if embed_threshold is not None else settings.cosine_limit(True)
    encoder = configured_encoder(settings, config.root, announce=_announce)
    texts = [(label, text) for label, kind, _, text in entries if kind in ("prompt", "fact")]
    return encoder, texts, threshold


def _problem(f: Any, n: int, threshold: float, near: float) -> Problem:
    pct = f"{100 * f.matched / f.total:.0f}%" if f.total else ""
    if f.kind == "paraphrase":
        what = f"{f.label}: a sentence of document {f.doc} is close in meaning (cosine {f.score:.3f} >= {threshold})"
        return Problem(f.shard, f.line, 1, "decontam-embed", f'{what}: "{f.span}"', severity=Severity.WARNING)
    if f.kind == "near":
        what = (
            f"{f.label}: {f.matched} of its {f.total} tokens aligned in order in document {f.doc} "
            f"(similarity {f.score:.3f} >= {near})"
        )
        return Problem(f.shard, f.line, 1, "decontam-near", f'{what}: "{f.span}"')
    if f.kind == "exact":
        rule, what = "decontam-exact", f"{f.label} whole in document {f.doc}"
    elif f.kind == "seam":
        rule = "decontam-seam"
        what = (
            f"{f.label}: {f.matched} of its {f.total} {n}-grams ({pct}) run from the end of document {f.doc} "
            f"into document {f.next_doc} ({f.next_shard}:{f.next_line})"
        )
    else:
        rule, what = "decontam-ngram", f"{f.label}: {f.matched} of its {f.total} {n}-grams ({pct}) in document {f.doc}"
    return Problem(f.shard, f.line, 1, rule, f'{what}: "{f.span}"')


def decontamination_report(result: Any, options: Any, model: str = "") -> Report:
    """Findings and bad lines as problems; the data document; per-text counts for people."""
    n = result.index.n
    problems = [_problem(f, n, options.embed_threshold, result.index.near) for f in result.findings]
    problems += [
        Problem(shard, b.line, 1 if b.line else 0, b.rule, b.message, severity=RULES[b.rule].severity)
        for shard, b in result.bad
    ]
    problems.sort(key=lambda p: (p.path, p.line, p.rule, p.message))
    by_text: dict[str, set[tuple[str, int]]] = {}
    for f in result.findings:
        if f.kind == "paraphrase":
            continue
        by_text.setdefault(f.label, set()).add((f.shard, f.line))
    scanned = [r for r in result.shards]
    docs = sum(r.docs for r in scanned)
    size = sum(r.bytes for r in scanned)
    cpu = sum(r.cpu_seconds for r in scanned)
    dropped = result.dropped
    index = result.index
    data = {
        "ngram": n,
        "min_tokens": index.min_tokens,
        "near": index.near,
        "index": {
            "digest": index.digest,
            "texts_searched": len(index.texts),
            "windows": index.size,
            "not_searched_too_short": sorted(index.too_short),
        },
        "shards": len(result.shards),
        "documents": docs,
        "bytes": size,
        "texts_found": {label: len(places) for label, places in sorted(by_text.items())},
        "items_found": sorted({t.item for t in index.texts if t.label in by_text}),
        "findings": [vars(f) for f in result.findings],
        "bad": [{"shard": shard, **vars(b)} for shard, b in result.bad],
        "drop": [{"shard": shard, "line": line, "id": doc, "why": why} for shard, line, doc, why in dropped],
        "keep_bad_lines": result.keep_bad_lines,
        "embed": {
            "rate": options.embed_rate,
            "threshold": options.embed_threshold,
            "model": model,
            "documents_sampled": result.sampled,
            "paraphrases": sum(f.kind == "paraphrase" for f in result.findings),
        }
        if options.embed_rate
        else None,
        "run": {
            "engine": result.engine,
            "shards_reused": result.reused,
            "wall_seconds": round(result.wall_seconds, 3),
            "cpu_seconds_scanning": round(cpu, 3),
            "written": result.written,
        },
    }

    def view(out: TextIO, styled: bool) -> None:
        if by_text:
            out.write(f"corpus texts found ({len(by_text)}):\n")
            for label, places in sorted(by_text.items()):
                out.write(f"  {label}: {len(places)} document(s)\n")

    summary = _summary(result, options, model, data)
    return Report(
        problems=problems,
        notes=[],
        files_checked=len(result.shards),
        data=data,
        view=view,
        summary=summary,
        footer=[f"wrote {w}" for w in result.written],
    )


def _summary(result: Any, options: Any, model: str, data: dict[str, Any]) -> str:
    """The closing line: what was read, what was searched for, what was found, and how fast."""
    from propeval.decontam.shards import WARNING_RULES

    index, docs, size = result.index, data["documents"], data["bytes"]
    cpu = sum(r.cpu_seconds for r in result.shards)
    flagged, by_text = result.flagged, data["texts_found"]
    bad = [b for _, b in result.bad if b.rule not in WARNING_RULES]
    long_lines = len(result.bad) - len(bad)
    unread = sum(len(r.unread) for r in result.shards)
    if not bad:
        bad_part = "0 bad line(s)"
    elif result.keep_bad_lines:
        bad_part = f"{len(bad)} bad line(s), scanned as raw text and kept where clean (--keep-bad-lines)"
    else:
        bad_part = f"{len(bad)} bad line(s), scanned as raw text; {unread} of them dropped"
    summary = (
        f"decontaminate: {len(result.shards)} shard(s) ({result.reused} reused from the state folder), "
        f"{docs} document(s), {size / 1e6:.1f} MB on {result.engine}; "
        f"index: {len(index.texts)} text(s) searched, {index.size} window(s), {len(index.too_short)} text(s) "
        f"under {index.min_tokens} tokens not searched; found {len(by_text)} text(s) of "
        f"{len(data['items_found'])} item(s)/claim(s) in {len(flagged)} document(s); {bad_part}"
    )
    if long_lines:
        summary += f"; {long_lines} line(s) over --max-line-bytes streamed in windows"
    if options.embed_rate:
        summary += (
            f"; embedding pass ({model}): {result.sampled} document(s) sampled, "
            f"{data['embed']['paraphrases']} close in meaning (cosine >= {options.embed_threshold})"
        )
    if cpu > 0:
        summary += f"; scanning {size / 1e6 / cpu:.1f} MB per CPU-second"
    return summary
