"""Run llama.cpp's own OpenAI-compatible HTTP server (through xllamacpp) until a signal stops it.

``python -m propeval.judge.llama_server --model M.gguf --port 8080`` is the process that
:mod:`propeval.judge.local` starts. xllamacpp ships llama.cpp prebuilt for a portable x86-64
baseline (no AVX-512, no AMX), so nothing is compiled at install time. Its ``Server`` serves HTTP
from its own threads; this module only sets it up, binds it to the given loopback address, and
waits for SIGTERM, SIGINT or SIGHUP. It exits 0 when stopped, 1 when the model or the chat
template cannot be loaded (the reason on stderr), 2 on bad arguments.

It also ends when the process that started it ends, however that one ends (even ``kill -9``): on
Linux the kernel sends it SIGTERM then (``PR_SET_PDEATHSIG``), so no server is left holding its
port after propeval is gone.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
# The pid of the propeval process that started this one (set by propeval.judge.local).
PARENT_ENV = "PROPEVAL_LLAMA_PARENT"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m propeval.judge.llama_server", description=__doc__)
    ap.add_argument("--model", required=True, help="path of the GGUF file")
    ap.add_argument("--alias", default="", help="the model id clients send and /v1/models lists")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=0, help="0: llama.cpp's default")
    ap.add_argument(
        "--max-tokens", type=int, default=0, help="the cap of a request that sends no max_tokens (0: the context)"
    )
    ap.add_argument(
        "--chat-template-file",
        default="",
        help="a Jinja chat template file; default: the GGUF's own (llama.cpp falls back to ChatML without one)",
    )
    ap.add_argument(
        "--stop",
        action="append",
        default=[],
        help="a stop string applied to every request that sends none of its own (repeatable)",
    )
    return ap.parse_args(argv)


def die_with_parent() -> None:
    """Ask the kernel for SIGTERM when the parent ends (Linux); leave at once if it already has."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    expected = os.environ.get(PARENT_ENV, "")
    if expected.isdigit() and os.getppid() != int(expected):  # the parent ended before prctl
        os._exit(0)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    # Before anything slow: a signal during model loading must still stop this process.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    die_with_parent()
    template = ""
    if args.chat_template_file:
        try:
            with open(args.chat_template_file, encoding="utf-8") as fh:
                template = fh.read()
        except (OSError, UnicodeDecodeError) as e:
            print(f"llama_server: cannot read the chat template {args.chat_template_file}: {e}", file=sys.stderr)
            return 1
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.n_ctx
    params.n_parallel = 1
    params.hostnames = [args.host]
    params.port = args.port
    if args.alias:
        params.model_alias = {args.alias}  # a set of names in this binding, not one string
    # Jinja always: this llama.cpp takes chat_template as template *text* (a built-in name such as
    # "gemma" is rendered literally: the model would be asked "gemma").
    params.use_jinja = True
    if template:
        params.chat_template = template
    if args.stop:
        params.antiprompt = list(args.stop)  # the server's default "stop" for a request without one
    if args.max_tokens > 0:
        params.n_predict = args.max_tokens  # the default of a request without max_tokens (never lowers one)
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    # Wait for the signal in this thread; the server's threads (started below, with the signals
    # still blocked) do the serving.
    try:
        server = xlc.Server(params)
    except Exception as e:  # xllamacpp raises a bare RuntimeError for a model it cannot load
        print(f"llama_server: cannot start: {e}", file=sys.stderr, flush=True)
        return 1
    print(f"llama_server: listening on {server.listening_address}", flush=True)
    signal.sigwait(STOP_SIGNALS)
    # Leave at once: the server keeps nothing on disk, and its destructor can wait forever for a main
    # loop that a signal during model loading never let start.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
