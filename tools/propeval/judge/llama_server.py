"""Run llama.cpp's own OpenAI-compatible HTTP server (through xllamacpp) until SIGTERM or Ctrl-C.

``python -m propeval.judge.llama_server --model M.gguf --port 8080`` is the process that
:mod:`propeval.judge.local` starts. xllamacpp ships llama.cpp prebuilt for a portable x86-64
baseline (no AVX-512, no AMX), so nothing is compiled at install time. Its ``Server`` serves HTTP
from its own threads; this module only sets it up, binds it to the given loopback address, and
waits for a signal. It exits 0 when stopped, 1 when the model cannot be loaded (the reason on
stderr), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m propeval.judge.llama_server", description=__doc__)
    ap.add_argument("--model", required=True, help="path of the GGUF file")
    ap.add_argument("--alias", default="", help="the model id clients send and /v1/models lists")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=0, help="0: llama.cpp's default")
    ap.add_argument("--chat-template", default="", help="a llama.cpp template name; default: the GGUF's own")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.n_ctx
    params.n_parallel = 1
    params.hostnames = [args.host]
    params.port = args.port
    if args.alias:
        params.model_alias = {args.alias}  # a set of names in this binding, not one string
    if args.chat_template:
        params.chat_template = args.chat_template  # a built-in name (not Jinja): use_jinja stays off
    else:
        params.use_jinja = True  # the GGUF's own template
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    # Wait for the signal in this thread; the server's threads do the serving.
    stop = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)
    try:
        server = xlc.Server(params)
    except Exception as e:  # xllamacpp raises a bare RuntimeError for a model it cannot load
        print(f"llama_server: cannot start: {e}", file=sys.stderr, flush=True)
        return 1
    print(f"llama_server: listening on {server.listening_address}", flush=True)
    signal.sigwait(stop)
    # Leave at once: the server keeps nothing on disk, and its destructor can wait forever for a main
    # loop that a signal during model loading never let start.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
