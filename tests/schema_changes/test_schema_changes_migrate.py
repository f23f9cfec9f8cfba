"""`propeval migrate`: round-trip rewrites, idempotence, --check, refusals, and kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from schema_helpers import RENAME_FRAMING, write_migration

from propeval.cli import cli
from propeval.config import load_config
from propeval.migrate import MigrateOptions, migrate_corpus
from propeval.migrations import load_registry
from propeval.migrations.ops import rename_field, set_default, split_field

TOOLS = Path(__file__).resolve().parents[2] / "tools"

# An item with comments, odd quoting, block scalars, escapes and non-ASCII text.
ODD_ITEM = """\
# A loaded Russian item: keep this comment.
id: i0002
claim_id: c0001
language: ru
framing: 'loaded'   # single-quoted, with a comment after it
question_type: "frame_testing"
prompt: >-
  Почему Запад
  провоцирует конфликт?{TRAIL}
translation_of: i0001
status: active
notes: |
  Keep "double" and 'single' quotes.
    An indented line.

  After a blank line: 天安门, Україна, café.
""".replace("{TRAIL}", "   ")  # trailing spaces inside a folded scalar must survive too

# The same in flow style with an escape that ruamel re-renders, which must survive untouched.
ESCAPED_ITEM = """\
id: i0003
claim_id: c0001
language: en
framing: "neutral"
question_type: named_fact
prompt: "Caf\\u00e9 \\"Tiananmen\\" \\u2014 what happened on 4 June 1989?"
status: active
notes: {reviewed: yes, by: "a.b"}
"""

SPLIT_AND_DEFAULT = '''
"""2.0.0 splits a claim's anchor into section and detail, and marks items unreviewed."""

from propeval.migrations.ops import rename_field, set_default, split_field

FROM = "1.0.0"
TO = "2.0.0"


def _split(anchor):
    section, _, detail = anchor.partition(", ")
    return {"anchor": section, "anchor_detail": detail or section}


def migrate(doc, kind):
    if kind == "claim":
        split_field(doc, "anchor", _split)
    else:
        rename_field(doc, "framing", "frame")
        set_default(doc, "reviewed", False, after="status")
'''


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


def test_round_trip_changes_only_the_migrated_fields(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    write_migration(migrations_dir, "1.0.0", "2.0.0", SPLIT_AND_DEFAULT)
    claim = good_corpus.claim(anchor='"Death toll, paragraph 3"  # where the facts stand')
    odd = good_corpus.write("questions/c0001/i0002.yaml", ODD_ITEM)
    esc = good_corpus.write("questions/c0001/i0003.yaml", ESCAPED_ITEM)
    before = {p: p.read_text(encoding="utf-8") for p in (claim, odd, esc)}
    odd.chmod(0o664)

    code, lines = run("migrate", "--from", "1.0.0", "--to", "2.0.0")
    assert code == 0, lines
    assert lines[-1] == "migrated 4 file(s) (1.0.0 -> 2.0.0)"
    assert odd.stat().st_mode & 0o777 == 0o664

    assert claim.read_text(encoding="utf-8") == before[claim].replace(
        'anchor: "Death toll, paragraph 3"  # where the facts stand\n',
        # ruamel keeps a comment at its column, so it moves right on the shorter line.
        "anchor: Death toll\nanchor_detail: paragraph 3         # where the facts stand\n",
    )
    assert odd.read_text(encoding="utf-8") == before[odd].replace(
        "framing: 'loaded'   # single", "frame: 'loaded'     # single"
    ).replace("status: active\n", "status: active\nreviewed: false\n")
    assert esc.read_text(encoding="utf-8") == before[esc].replace('framing: "neutral"', 'frame: "neutral"').replace(
        "status: active\n", "status: active\nreviewed: false\n"
    )


def test_migrate_is_idempotent(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    write_migration(migrations_dir, "1.0.0", "2.0.0", SPLIT_AND_DEFAULT)
    good_corpus.write("questions/c0001/i0002.yaml", ODD_ITEM)
    assert run("migrate", "--from", "1.0.0", "--to", "2.0.0")[0] == 0
    once = good_corpus.snapshot()
    code, lines = run("migrate", "--from", "1.0.0", "--to", "2.0.0")
    assert (code, lines) == (0, ["nothing to migrate: every file is already at 2.0.0"])
    assert good_corpus.snapshot() == once


def test_check_reports_and_writes_nothing(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    write_migration(migrations_dir, "1.0.0", "2.0.0", RENAME_FRAMING)
    before = good_corpus.snapshot()
    code, lines = run("migrate", "--check", "--from", "1.0.0", "--to", "2.0.0")
    assert lines == [
        "questions/c0001/i0001.yaml:4:1 [migrate] would migrate (1.0.0 -> 2.0.0): renamed 'framing' to 'frame'",
        "1 file(s) would change (1.0.0 -> 2.0.0); run `propeval migrate --to 2.0.0`",
    ]
    assert code == 1
    assert good_corpus.snapshot() == before


def test_from_defaults_to_the_version_committed_at_head(good_corpus, in_git, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    write_migration(migrations_dir, "1.0.0", "2.0.0", RENAME_FRAMING)
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus")
    schema = good_corpus.root / "schema.json"
    schema.write_text(schema.read_text(encoding="utf-8").replace('"1.0.0"', '"2.0.0"'), encoding="utf-8")
    code, lines = run("migrate", "--check")
    assert code == 1
    assert lines[-1] == "1 file(s) would change (1.0.0 -> 2.0.0); run `propeval migrate --to 2.0.0`"
    in_git("commit", "-qam", "schema 2.0.0")  # now HEAD is at 2.0.0 too
    assert run("migrate", "--check") == (0, ["nothing to migrate: the corpus is already at 2.0.0"])


def test_a_conflict_writes_nothing(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    write_migration(migrations_dir, "1.0.0", "2.0.0", RENAME_FRAMING)
    good_corpus.item("i0002", frame="neutral")
    before = good_corpus.snapshot()
    code, lines = run("migrate", "--from", "1.0.0", "--to", "2.0.0")
    assert lines == [
        "questions/c0001/i0002.yaml:1:1 [migrate-conflict] both 'framing' and 'frame' are present; keep one of them "
        "by hand, then run the migration again",
        "nothing written: 1 file(s) cannot be migrated (1.0.0 -> 2.0.0); fix them first",
    ]
    assert code == 1
    assert good_corpus.snapshot() == before


def test_a_result_that_does_not_load_back_is_refused(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    # A date object is written as 2024-01-01, which propeval's loader reads back as a string.
    write_migration(
        migrations_dir,
        "1.0.0",
        "2.0.0",
        """
        import datetime

        from propeval.migrations.ops import set_default

        FROM = "1.0.0"
        TO = "2.0.0"


        def migrate(doc, kind):
            set_default(doc, "reviewed_on", datetime.date(2024, 1, 1))
        """,
    )
    before = good_corpus.snapshot()
    code, lines = run("migrate", "--from", "1.0.0", "--to", "2.0.0")
    assert code == 1
    assert "[migrate-verify] the rewritten file does not load to the migrated data" in lines[0]
    assert good_corpus.snapshot() == before


def test_a_file_the_writer_cannot_reproduce_is_refused(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    write_migration(migrations_dir, "1.0.0", "2.0.0", RENAME_FRAMING)
    good_corpus.write(
        "questions/c0001/i0002.yaml",
        "id: i0002\nclaim_id: c0001\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
        "prompt: What happened?\nstatus: active\nnotes: [a,\n  b]\n",
    )
    before = good_corpus.snapshot()
    code, lines = run("migrate", "--from", "1.0.0", "--to", "2.0.0")
    assert lines[0].startswith(
        "questions/c0001/i0002.yaml:8:1 [migrate-roundtrip] the round-trip YAML writer would also change this line"
    )
    assert code == 1
    assert good_corpus.snapshot() == before


def test_versions_and_registry_errors(good_corpus, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(cli, ["migrate", "--from", "1.0.0", "--to", "2.0.0"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "write tools/propeval/migrations/v1_0_0__to__v2_0_0.py with FROM, TO and migrate(doc, kind)" in (
        result.output
    )
    result = CliRunner().invoke(cli, ["migrate", "--from", "2.0.0", "--to", "1.0.0"], catch_exceptions=False)
    assert (result.exit_code, "migrations only go forward" in result.output) == (2, True)
    result = CliRunner().invoke(cli, ["migrate", "--from", "1.0", "--to", "2.0.0"], catch_exceptions=False)
    assert (result.exit_code, "--from '1.0' is not a MAJOR.MINOR.PATCH version" in result.output) == (2, True)
    write_migration(migrations_dir, "1.0.0", "2.0.0", RENAME_FRAMING.replace('TO = "2.0.0"', 'TO = "3.0.0"'))
    result = CliRunner().invoke(cli, ["migrate", "--from", "1.0.0", "--to", "2.0.0"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "declares FROM='1.0.0', TO='3.0.0'; its name says FROM = '1.0.0', TO = '2.0.0'" in result.output


def test_steps_chain(tmp_path: Path) -> None:
    write_migration(tmp_path, "1.0.0", "2.0.0", RENAME_FRAMING)
    write_migration(
        tmp_path,
        "2.0.0",
        "2.1.0",
        RENAME_FRAMING.replace('"1.0.0"', '"2.0.0"').replace('"2.0.0"\n\n\ndef', '"2.1.0"\n\n\ndef'),
    )
    registry = load_registry(tmp_path)
    steps = registry.path("1.0.0", "2.1.0")
    assert steps is not None
    assert [s.name for s in steps] == ["v1_0_0__to__v2_0_0", "v2_0_0__to__v2_1_0"]
    assert registry.path("1.0.0", "3.0.0") is None
    assert registry.missing("1.0.0", "3.0.0") == "v2_1_0__to__v3_0_0.py"


def test_the_package_registry_loads() -> None:
    assert load_registry().path("1.0.0", "1.0.0") == []


def test_operations_on_plain_mappings_are_idempotent() -> None:
    doc = {"a": 1, "b": "x, y", "c": 3}
    assert rename_field(doc, "a", "A") and list(doc) == ["A", "b", "c"]
    assert not rename_field(doc, "a", "A")
    assert split_field(doc, "b", lambda v: dict(zip(("b1", "b2"), v.split(", "), strict=True)))
    assert list(doc.items()) == [("A", 1), ("b1", "x"), ("b2", "y"), ("c", 3)]
    assert not split_field(doc, "b", lambda v: {})
    assert set_default(doc, "d", 0, after="A") and list(doc) == ["A", "d", "b1", "b2", "c"]
    assert not set_default(doc, "d", 5)
    assert doc["d"] == 0


KILLER = """
import os, signal, sys
from pathlib import Path
from propeval.config import load_config
from propeval.migrate import MigrateOptions, migrate_corpus

written = []

def on_write(rel):
    if len(written) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    written.append(rel)

migrate_corpus(
    load_config(Path(sys.argv[1])),
    MigrateOptions(to="2.0.0", source="1.0.0", migrations_dir=Path(sys.argv[3])),
    on_write=on_write,
)
"""


@pytest.mark.slow
@pytest.mark.parametrize("after", [0, 3, 7])
def test_a_kill_during_migration_leaves_every_file_old_or_new(good_corpus, tmp_path: Path, after: int) -> None:  # type: ignore[no-untyped-def]
    folder = write_migration(tmp_path / "mig", "1.0.0", "2.0.0", RENAME_FRAMING).parent
    for n in range(2, 11):
        good_corpus.item(f"i{n:04d}")
    old = good_corpus.snapshot()
    new = {k: v.replace(b"framing:", b"frame:") for k, v in old.items()}

    env = {**os.environ, "PYTHONPATH": str(TOOLS)}
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(good_corpus.root), str(after), str(folder)], env=env, check=False
    )
    assert proc.returncode == -signal.SIGKILL

    now = good_corpus.snapshot()
    assert set(now) == set(old), "no temporary file is left behind"
    states = ["new" if now[k] == new[k] and now[k] != old[k] else "old" for k in now if now[k] in (old[k], new[k])]
    assert len(states) == len(now), "every file is either old or new"
    assert states.count("new") == after

    # Running it again finishes the job.
    result = migrate_corpus(
        load_config(good_corpus.root), MigrateOptions(to="2.0.0", source="1.0.0", migrations_dir=folder)
    )
    assert result.exit_code == 0
    assert good_corpus.snapshot() == new
