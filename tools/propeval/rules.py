"""Every rule id any command can report, with its one-line description: the one list.

A :class:`~propeval.result.Problem` names its rule by id; this module says what each id means.
``propeval check --help`` lists the check rules from here, the SARIF reporter writes its
``tool.driver.rules`` from here, and the tests hold CONTRIBUTING's error tables, the ``ci`` step
names, the check and groups registries, and every problem the commands emit to this list.

Adding a rule: add one line to the table of its area below, and a row to CONTRIBUTING.md's
error table with how to fix it. The module imports nothing heavy: ``check --help`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from propeval.result import Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTICE


@dataclass(frozen=True)
class Rule:
    """One rule id: the area that reports it, what it checks (one line), and its usual severity."""

    id: str
    area: str
    description: str
    severity: Severity = Severity.ERROR


# area -> (id, severity, description). The order is the order of the docs and of SARIF's rules.
_TABLE: dict[str, tuple[tuple[str, Severity, str], ...]] = {
    # The strict loader, behind every command that reads a file people write.
    "file": (
        ("read", E, "the file cannot be read"),
        ("encoding", E, "the file is UTF-8 without a byte-order mark, and holds no lone surrogate escape"),
        ("yaml-syntax", E, "the YAML file parses"),
        ("json-syntax", E, "the JSON file (or JSON Lines line) parses"),
        ("duplicate-key", E, "no key appears twice in one mapping"),
        ("multi-document", E, "a YAML file holds one document"),
        ("not-a-mapping", E, "the file holds one mapping of fields"),
        ("yaml-tag", E, "no YAML tag such as !!python/object"),
        ("yaml-key", E, "mapping keys are plain strings"),
        ("yaml-alias", E, "no alias bomb: aliases expand to a bounded size"),
        ("nesting", E, "nesting is at most 32 levels deep"),
        ("file-size", E, "the file is at most 1 MiB"),
        ("number-size", E, "numbers are at most 100 characters and in a float's range"),
        ("file-name", E, "corpus files under questions/ end in .yaml"),
        ("file-symlink", E, "no symbolic link (to a file or folder) under questions/, rubrics/ or ledger/"),
        ("file-hardlink", E, "no regular file with more than one hard link (its bytes shared with another name)"),
        ("file-special", E, "no FIFO, socket or device under questions/, rubrics/ or ledger/"),
    ),
    # propeval check: one rule per module of propeval.checks (``files`` reports the file-* rules).
    "check": (
        ("schema", E, "claims and items validate against schema.json"),
        ("placeholder", E, "no TODO placeholder from `propeval new` is left"),
        ("hidden-text", E, "no invisible or reordering characters (tags, bidi, zero-width, controls)"),
        ("ids", E, "ids match file/folder names, are unique; claim_id names a claim"),
        ("translation", E, "translation_of names an item of the same claim in another language"),
        ("language", E, "language tags are canonical BCP 47 (ru-RU, not ru_RU; uk, not ua)"),
        ("sources", E, "source_url is http(s), not blocklisted, serves <= N claims"),
        ("stable-ids", E, "(with --changed-since) no id present at REF is deleted or renamed"),
        ("id-collision", E, "(with --changed-since) no id this branch adds is taken at REF's tip"),
        ("files", E, "no symlink, hard link, FIFO, socket or device (file-symlink, -hardlink, -special)"),
        ("difficulty", W, "active items have a current band in ledger/difficulty.json"),
        ("judge-text", E, "facts and frame markers hold no fence, line break, heading or rubric title"),
        ("workflow-command", E, "no line of a claim or item starts with '::' (a GitHub Actions workflow command)"),
    ),
    "schema": (
        ("schema-meta", E, "schema.json is itself a valid JSON Schema with its top-level keys"),
        ("schema-ref", E, "schema.json has no $ref outside the file"),
        ("schema-breaking", N, "a change to schema.json that old files may no longer satisfy (major bump)"),
        ("schema-additive", N, "a change to schema.json that adds what old files need not have (minor bump)"),
        ("schema-docs", N, "a change to schema.json's descriptions only (patch bump)"),
        ("schema-version", E, "schema_version is MAJOR.MINOR.PATCH and bumped as the changes require"),
        ("schema-changelog", E, "CHANGELOG.md has a heading for the new schema version"),
        ("schema-migration", E, "every claim and item validates under the new schema"),
    ),
    "migrate": (
        ("migrate", N, "a file was (or with --check, would be) migrated"),
        ("migrate-conflict", E, "a file holds both the old and the new field"),
        ("migrate-roundtrip", E, "the YAML writer can rewrite the file without touching other lines"),
        ("migrate-verify", E, "the rewritten file loads back to the migrated data"),
        ("migrate-error", E, "a migration step ran without raising an exception"),
    ),
    "dedup": (
        ("dedup-exact", E, "two claims' items (or facts) have the same normalised text"),
        ("dedup-lexical", E, "two claims' items (or facts) are near-verbatim (rapidfuzz token-sort ratio)"),
        ("dedup-semantic", E, "two claims' items (or facts) mean the same (embedding cosine)"),
        ("dedup-boilerplate", W, "no fact is required in near-identical words by many claims of one kind and source"),
        ("dedup-stale-review", W, "an allowlist entry still applies: both texts and ids are unchanged"),
        ("dedup-allowlist", E, "dedup-allowlist.yaml entries are well formed"),
        ("dedup-truncated", W, "a text fits the embedding model's max_seq_length"),
        ("dedup-cache", W, "the embedding cache can be read and written, and its entries authenticate (MAC)"),
        ("dedup-encoder", W, "the embedding model runs through onnxruntime, not the slower torch fallback"),
    ),
    "groups": (
        ("groups-completeness", E, "each required language has every cell the claim uses, and a neutral item"),
        ("groups-control", E, "every loaded item has a neutral control in its language and question type"),
        ("groups-neutral-marker", E, "a neutral prompt carries none of its claim's official frame markers"),
        ("groups-loaded-marker", E, "a loaded prompt carries one of its claim's official frame markers"),
        ("groups-closed-exit", W, "a closed-exit prompt states the evasion it rules out"),
        ("groups-translation-cycle", E, "translation_of chains have no cycle"),
        ("groups-translation-claim", E, "translation_of names an item of the same claim"),
        ("groups-translation-framing", E, "a translation keeps its source's framing and question type"),
        ("groups-conflict", E, "no two active items of a claim share language, framing and question type"),
        ("groups-drift", W, "(with drift_encoder) a translation stays close in meaning to its source"),
    ),
    "gate": (
        ("answerability", E, "every active item has a fresh, signed, passing answerability record"),
        ("judge-gate", E, "a rubric's judge agrees with its gold set: a fresh record, every figure at threshold"),
        ("ledger-format", E, "a ledger file parses, has the record format, and is for its item or rubric"),
        ("ledger-digest", E, "a ledger file's digest matches (it was not edited by hand)"),
        ("ledger-unsigned", E, "a ledger record is signed"),
        ("ledger-signature", E, "a ledger record's signature is well formed and covers the record as it is"),
        ("ledger-signer", E, "a ledger record is signed by a key on the base branch's [tool.propeval.signers]"),
        ("ledger-derived", E, "what a ledger record derives (scores, verdicts, hashes, labels) follows"),
        ("ledger-judge-copied", W, "the judge labels of a record are not all equal to the human labels"),
        ("ledger-deleted", E, "a pull request deletes or moves no ledger record"),
        ("ledger-orphan", E, "a pull request adds or changes no ledger record for a missing item or rubric"),
        ("ledger-sign", E, "`propeval ledger sign` can sign the record: not corrupt, stale or underived"),
        ("policy-change", E, "no [tool.propeval] key, policy file or allowlist entry changes without approval"),
        ("private-key", E, "no private key is in a pull request's files or in any commit of its branch"),
    ),
    # One per step of `propeval ci` and `propeval run`: the step could not run.
    "ci": (
        ("ci-policy", E, "ci's policy step ran (the base ref's [tool.propeval] could be read)"),
        ("ci-check", E, "ci's check step ran"),
        ("ci-ledger", E, "ci's ledger step ran"),
        ("ci-groups", E, "ci's groups step ran"),
        ("ci-dedup", E, "ci's dedup step ran"),
        ("ci-answerability", E, "ci's answerability step ran"),
        ("ci-judge", E, "ci's judge step ran"),
        ("ci-schema", E, "ci's schema step ran"),
        ("ci-difficulty", E, "run's difficulty step ran"),
        ("ci-stats", E, "run's stats step ran"),
        ("ci-report", E, "run's report step ran"),
    ),
    "difficulty": (
        ("difficulty-input", E, "a grade or score-matrix line is well formed and scores one item and model once"),
        ("saturated", N, "not every model scores at or above the pass mark"),
        ("unanswered-by-all", N, "not every model scores 0"),
        ("non-discriminating", N, "stronger models do better than weaker ones (discrimination > 0)"),
        ("unstable", N, "the band holds over bootstrap draws of models (IRT: item-only refits, abilities held)"),
        ("too-few-models", N, "enough models scored the item to give it a band"),
    ),
    "judge": (
        ("rubric", E, "a rubric folder holds a valid rubric.yaml, prompt and gold set"),
        ("no-item", W, "an answer or grade names an item of the corpus"),
        ("no-answer", W, "an item to grade has an answer in the run"),
        ("stale-answer", W, "an answer was given to the item's current prompt"),
        ("json-depth", E, "a run file's line nests shallowly enough for the standard JSON parser"),
        ("run-record", E, "a grade record is valid for its rubric's kind (ids, status, scores)"),
        ("run-record-size", W, "a run file's line is at most the record size limit"),
        ("mixed-comparison", E, "runs compared in one table share their judge, judge settings and rubric version"),
        (
            "run-pitfall",
            W,
            "compared runs share sampling settings; few answers hit the token cap; usage is well formed",
        ),
        ("response-cache", W, "a response cache entry read is a valid stored reply, and authenticates (MAC)"),
        ("partial-run", W, "a graded or scored run's answers are complete (`propeval answer` finished every item)"),
        ("self-judged", W, "the answer model is not one of its own judges"),
        ("reference-model", W, "the answer model is not the answerability reference model"),
    ),
    "decontaminate": (
        ("decontam-exact", E, "no training document holds a whole corpus text (prompt, fact, marker), normalised"),
        ("decontam-ngram", E, "no training document shares an n-gram (13 tokens by default) with a corpus text"),
        ("decontam-near", E, "no training document holds a corpus text with a word or so changed (--near similarity)"),
        ("decontam-seam", E, "no n-gram of a corpus text runs across two consecutive training documents"),
        ("decontam-embed", W, "no sampled training sentence (--embed) is close in meaning to a corpus text"),
        (
            "decontam-bad-line",
            E,
            "every line of a JSONL shard is JSON (a bad line is scanned as raw text and dropped unless kept)",
        ),
        ("decontam-bad-record", E, "every record is an object with the text field as a string"),
        ("decontam-bad-shard", E, "every shard can be read to its end (the rows that cannot are not scanned)"),
        ("decontam-long-line", W, "a JSONL line is at most --max-line-bytes (a longer one is streamed in windows)"),
    ),
    "release": (("release-input", W, "an optional input of export, stats or report parses and is current"),),
    "import": (
        ("import-input", E, "an import or overlap input is a readable .jsonl/.csv/.tsv file or release folder"),
        ("import-sums", E, "every file of an imported release matches its SHA256SUMS line"),
        ("import-row", E, "an input row has every field import needs, each of the right type and vocabulary"),
        ("import-id", E, "row ids are unique; a release's ids are propeval ids (c0001, i0001), never paths"),
        ("import-group", E, "rows of one claim agree on its facts, source, anchor, date and kind"),
        ("import-formula", E, "no imported text starts with =, +, -, @, a tab or CR (spreadsheet formulas)"),
        ("import-collision", E, "an imported id or rubric is not already in the corpus with other content"),
        ("import-changed", E, "a row imported before from the same input (same id) has the content it had then"),
        ("import-hash", W, "a release row's item_hash/claim_hash matches the file import writes"),
        ("import-tombstone", W, "a release's retired item belongs to a claim the release carries"),
    ),
    "overlap": (
        ("overlap-exact", E, "a corpus item has the same normalised text as an external item"),
        ("overlap-lexical", E, "a corpus item is near-verbatim an external item (rapidfuzz token-sort ratio)"),
        ("overlap-semantic", E, "a corpus item means the same as an external item (embedding cosine)"),
    ),
    "agree": (("labels", E, "label files have an id on every line, one label per unit, written one way"),),
}

RULES: dict[str, Rule] = {
    rule_id: Rule(rule_id, area, description, severity)
    for area, rows in _TABLE.items()
    for rule_id, severity, description in rows
}
AREAS: tuple[str, ...] = tuple(_TABLE)


def in_area(area: str) -> dict[str, Rule]:
    """The rules of one area, in the registry's order."""
    return {r.id: r for r in RULES.values() if r.area == area}


def describe(rule_id: str) -> str:
    """The one-line description of ``rule_id`` ("" for an id that is not registered)."""
    rule = RULES.get(rule_id)
    return rule.description if rule else ""


def help_block(area: str, width: int = 0) -> str:
    """An aligned ``id  description`` list of one area, for a command's ``--help`` (a ``\\b`` block)."""
    rows = in_area(area)
    width = width or max(len(r) for r in rows)
    lines = []
    for r in rows.values():
        tag = "" if r.severity is Severity.ERROR else f"({r.severity.value}) "
        lines.append(f"  {r.id.ljust(width)}  {tag}{r.description}")
    return "\n".join(lines)


def with_rules(doc: str, area: str) -> str:
    """``doc`` (a command's help) with its ``{rules}`` line replaced by :func:`help_block` of ``area``,
    indented alike: a command's rule list comes from this registry, never from a second copy."""
    lines: list[str] = []
    for line in doc.splitlines():
        if line.strip() == "{rules}":
            pad = line[: len(line) - len(line.lstrip())]
            lines.extend(pad + row.lstrip() for row in help_block(area).splitlines())
        else:
            lines.append(line)
    return "\n".join(lines)
