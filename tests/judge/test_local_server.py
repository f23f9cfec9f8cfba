# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""The local llama.cpp server fails at start-up, with a message that says why, never at the first request.

A real server on a broken model file, a real process that dies of SIGILL, a real loopback server
that answers /models but cannot compute, and the built llama.cpp library itself, disassembled.
"""

from __future__ import annotations

import json
import mmap
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.errors import ModelError
from propeval.judge import local
from propeval.judge.loopback import Reply
from serverkit import (
    free_port,
    loopback,  # noqa: F401  (fixture)
)


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("PROPEVAL_STATE_DIR", str(folder))
    return folder


def test_a_signal_is_named_with_what_to_do() -> None:
    assert local.describe_exit(1) == "exited with code 1"
    text = local.describe_exit(-signal.SIGILL)
    assert text.startswith("died with SIGILL (illegal instruction): this llama.cpp build uses CPU instructions")
    assert "make llama-portable" in text
    assert local.describe_exit(-signal.SIGTERM) == "died with SIGTERM (terminated)"


def test_a_process_dying_of_sigill_before_ready_is_reported_with_its_log(tmp_path: Path) -> None:
    """A real child that dies of SIGILL after printing, as the AMX build did on its first completion."""
    log = tmp_path / "server.log"
    code = "import os, signal, sys; print('loading model'); sys.stdout.flush(); os.kill(os.getpid(), signal.SIGILL)"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=subprocess.STDOUT)
    with pytest.raises(ModelError) as err:
        local.wait_ready(f"http://127.0.0.1:{free_port()}/v1", proc, timeout=30, log=log)
    message = str(err.value)
    assert message.startswith("the local server died with SIGILL (illegal instruction): this llama.cpp build")
    assert f"last lines of its log ({log}):\n  | loading model" in message
    assert message.endswith("(before it was ready)")


@pytest.mark.slow
def test_ready_means_a_completion_came_back(loopback: Any) -> None:
    """/models answering is not enough: a server whose completions fail is not ready."""
    srv = loopback(lambda seen: Reply(status=500))
    # 0.5 s: two probes (one every 0.25 s); the first is made whatever the timeout
    with pytest.raises(
        ModelError, match=r"did not become ready within 0.5s \(last: HTTP 500 from .*/chat/completions\)"
    ):
        local.wait_ready(srv.base_url, timeout=0.5)
    assert srv.seen and srv.seen[0].body["max_tokens"] == 1
    ok = loopback()
    local.wait_ready(ok.base_url, timeout=5)
    assert [s.path for s in ok.seen] == ["/v1/chat/completions"]


def _needs_llama_cpp() -> None:
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None:
        pytest.fail("xllamacpp is not installed: run `make setup` (the local extra)")


@pytest.mark.integration
@pytest.mark.slow
def test_serve_local_on_a_broken_model_fails_at_start_up_with_exit_3(
    tmp_path: Path, state_dir: Path, judge_corpus: Any
) -> None:
    """The real server on a GGUF file that is not one: exit 3, how it ended, its log, no traceback of ours.

    Then a later command that meets the dead port says what happened to the server, not "the network".
    """
    _needs_llama_cpp()
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00\x01" * 4096)  # the magic, then garbage
    port = free_port()
    log = tmp_path / "server.log"
    argv = ["serve-local", "--model", str(broken), "--port", str(port), "--log", str(log), "--quiet"]
    proc = subprocess.run(
        [sys.executable, "-m", "propeval", *argv, "--ready-timeout", "120"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3, proc.stderr
    err = proc.stderr
    assert re.search(r"propeval: error: the local server (exited with code \d+|died with SIG\w+)", err), err
    assert f"last lines of its log ({log}):" in err
    assert "(at start-up, before it was ready)" in err
    # The server's own traceback is quoted from its log; propeval's never reaches the terminal.
    outside_log = [line for line in err.splitlines() if not line.startswith("  | ")]
    assert not any(line.startswith("Traceback") for line in outside_log), err
    state = json.loads((state_dir / f"port-{port}.json").read_text(encoding="utf-8"))
    assert isinstance(state["returncode"], int) and state["returncode"] != 0, state

    configure(judge_corpus, f"http://127.0.0.1:{port}/v1", max_attempts=1)
    run = CliRunner().invoke(cli, ["answer", "--run-id", "r1"], catch_exceptions=False)
    assert run.exit_code == 3, run.output
    assert f"the local server that propeval started on port {port} (pid {state['pid']})" in run.output
    assert "start the server (e.g. propeval serve-local)" not in run.output


def _llama_libs() -> list[Path]:
    import importlib.util

    spec = importlib.util.find_spec("xllamacpp")
    assert spec is not None and spec.origin is not None
    return sorted(Path(spec.origin).parent.glob("*.so"))


# Mnemonics of Intel AMX (tile) and AVX-512 (any zmm register) in objdump's AT&T syntax.
AMX = re.compile(rb"\b(tilezero|tileloadd|tileloaddt1|tilestored|tilerelease|ldtilecfg|sttilecfg|tdp\w+)\b")
AVX512 = re.compile(rb"%zmm\d+")


@pytest.mark.integration
@pytest.mark.slow
def test_the_llama_cpp_build_uses_no_amx_and_no_avx512(tmp_path: Path) -> None:
    """The llama.cpp that `make setup` installs runs on any x86-64-v3 machine of this kind: no AMX, no AVX-512."""
    _needs_llama_cpp()
    if sysconfig.get_platform().split("-")[-1] != "x86_64":
        pytest.fail(f"this check disassembles x86-64 code; this is {sysconfig.get_platform()}")
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils) is needed to check the build"
    libs = _llama_libs()
    assert libs, "no shared library in the installed xllamacpp package"
    # The search below finds AMX where objdump would print it (a line of a made-up disassembly).
    sample = b"\tjmp    <tiled_run@plt>\n\ttileloadd (%rsi,%rdx,1),%tmm0\n"
    assert [m.group(0) for m in map(AMX.search, _lines_with(sample, (b"tile", b"tdp"))) if m] == [b"tileloadd"]
    for lib in libs:
        # Without addresses objdump prints a quarter less (about 130 MB) and spends about 1 CPU-s less.
        argv = [objdump, "-d", "--no-show-raw-insn", "--no-addresses", str(lib)]
        # Bytes, not text: decoding the disassembly would cost more than searching it. Into a file
        # mapped into memory, not through a pipe: reading 130 MB from a pipe costs about 0.5 CPU-s.
        with tempfile.TemporaryFile(dir=tmp_path) as out:
            subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, check=True)
            with mmap.mmap(out.fileno(), 0, access=mmap.ACCESS_READ) as text:
                assert text.find(b"vfmadd") != -1, f"{lib.name}: no FMA at all; is this the portable build?"
                amx = next(filter(None, map(AMX.search, _lines_with(text, (b"tile", b"tdp")))), None)
                assert amx is None, f"{lib.name} uses Intel AMX: {amx}"
                assert text.find(b"%zmm") == -1, f"{lib.name} uses AVX-512: {AVX512.search(text)}"


def _lines_with(text: bytes | mmap.mmap, words: tuple[bytes, ...]) -> Iterator[bytes]:
    """Each line of ``text`` that holds one of ``words``. Every AMX mnemonic holds "tile" or "tdp", so
    the AMX regex need only read these lines: over the whole disassembly it costs about 5 CPU-s."""
    for word in words:
        at = text.find(word)
        while at != -1:
            start, end = text.rfind(b"\n", 0, at) + 1, text.find(b"\n", at)
            end = len(text) if end == -1 else end
            yield text[start:end]
            at = text.find(word, end)


# --------------------------------------------------------------------------- chat template, stopping


def test_the_bundled_model_is_served_with_its_transcript_template_and_stop() -> None:
    """The pretrained GGUF has no chat template (llama.cpp would use ChatML): propeval's transcript
    template goes with it; a GGUF of the user's keeps its own unless one is named."""
    _needs_llama_cpp()
    r = CliRunner().invoke(cli, ["serve-local", "--print-command"], catch_exceptions=False)
    argv = r.output.split()
    at = argv.index("--chat-template-file")
    assert Path(argv[at + 1]) == local.BUNDLED_TEMPLATE and local.BUNDLED_TEMPLATE.is_file()
    assert r.output.rstrip().endswith("--stop \nUser:")  # the stop string, printed as it is
    assert argv[argv.index("--max-tokens") + 1] == "256"
    other = local.LocalServerOptions(model_path=Path("other.gguf"))
    assert "--chat-template-file" not in local.command(other) and "--stop" not in local.command(other)
    mine = local.LocalServerOptions(model_path=Path("other.gguf"), chat_template=Path("t.jinja"), stops=("END",))
    assert local.command(mine)[-4:] == ["--chat-template-file", "t.jinja", "--stop", "END"]


def _port_free(port: int) -> bool:
    """Nothing listens on ``port`` (SO_REUSEADDR: connections of ours in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _alive(pid: int) -> bool:
    return local._alive(pid)


def _ask(url: str, question: str) -> dict[str, Any]:
    import urllib.request

    body = {"model": local.MODEL_ALIAS, "messages": [{"role": "user", "content": question}], "temperature": 0.0}
    request = urllib.request.Request(
        f"{url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=240) as resp:
        reply: dict[str, Any] = json.loads(resp.read())
    return reply


def _serve_local(tmp_path: Path, state_dir: Path, *extra: str) -> tuple[subprocess.Popen[str], int, int]:
    """A real `propeval serve-local` on a free port, once ready: the process, its port, the server's pid."""
    port = free_port()
    argv = [sys.executable, "-m", "propeval", "serve-local", "--port", str(port), "--quiet", *extra]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("ready:"):
            break
    else:
        proc.wait()
        pytest.fail(f"serve-local never got ready (exit {proc.returncode}):\n{''.join(lines)}")
    server = json.loads((state_dir / f"port-{port}.json").read_text(encoding="utf-8"))["pid"]
    assert _alive(server) and not _port_free(port)
    proc.lines = lines  # type: ignore[attr-defined]
    return proc, port, server


def _stops(proc: subprocess.Popen[str], port: int, server: int, sig: signal.Signals) -> str:
    """Send ``sig`` to serve-local alone (not its process group) and wait: the port must be free,
    the llama.cpp server gone."""
    proc.send_signal(sig)
    try:
        rest = proc.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"serve-local still running 60 s after {sig.name}")
    deadline = time.monotonic() + 20  # SIGKILL: the kernel's parent-death signal, then the server's exit
    while (_alive(server) or not _port_free(port)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(server), f"the llama.cpp server (pid {server}) outlived serve-local's {sig.name}"
    assert _port_free(port), f"port {port} still taken after {sig.name}"
    return rest


@pytest.mark.integration
@pytest.mark.slow
def test_serve_local_answers_in_sentences_and_stops_on_sigterm(tmp_path: Path, state_dir: Path) -> None:
    """The bundled model, served as `propeval serve-local` serves it, answers "What is the capital of
    France?" with a sentence that holds Paris and no template token; SIGTERM then frees the port."""
    _needs_llama_cpp()
    proc, port, server = _serve_local(tmp_path, state_dir, "--threads", "1")
    try:
        shown = "".join(proc.lines)  # type: ignore[attr-defined]
        assert "chat template: propeval's transcript template for the pretrained Gemma 3 270M" in shown
        assert "User: What is the capital of France?\\nAssistant:'" in shown  # the server's own rendering
        reply = _ask(f"http://127.0.0.1:{port}/v1", "What is the capital of France?")
        text = reply["choices"][0]["message"]["content"]
        assert "Paris" in text, text
        assert not any(t in text for t in (*local.TEMPLATE_TOKENS, "User:", "Assistant:")), text
        assert len(text.split()) >= 4 and text.strip().endswith("."), f"not a sentence: {text!r}"
        assert reply["choices"][0]["finish_reason"] == "stop"
    finally:
        rest = _stops(proc, port, server, signal.SIGTERM)
    assert proc.returncode == 0, rest
    state = json.loads((state_dir / f"port-{port}.json").read_text(encoding="utf-8"))
    assert state["stopped"] == "SIGTERM" and state["returncode"] == 0


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_serve_local_leaves_no_server_behind(tmp_path: Path, state_dir: Path, sig: signal.Signals) -> None:
    """Ctrl-C (SIGINT to serve-local alone) stops the server; even SIGKILL, which serve-local cannot
    catch, leaves no server on the port: the server ends with its parent."""
    _needs_llama_cpp()
    proc, port, server = _serve_local(tmp_path, state_dir, "--threads", "1")
    _stops(proc, port, server, sig)
    assert proc.returncode == (0 if sig == signal.SIGINT else -signal.SIGKILL)


@pytest.mark.slow
def test_serve_local_stub_stops_on_sigterm(tmp_path: Path, judge_corpus: Any) -> None:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "propeval",
        "--root",
        str(judge_corpus.root),
        "serve-local",
        "--stub",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith(f"ready: the plumbing model (propeval-stub) on http://127.0.0.1:{port}/v1: 3 item(s)"), line
    assert not _port_free(port)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert _port_free(port)
