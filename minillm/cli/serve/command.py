"""``python -m minillm serve --model M [--host 127.0.0.1] [--port 8000] [--slots N] [--api-key K]``.

Serves ``M`` over OpenAI's HTTP API (minillm/server/): any OpenAI client pointed at
``http://127.0.0.1:8000/v1`` can chat with it. Binds 127.0.0.1 (this machine only) unless
``--host`` says otherwise, and says on start which address it listens on and what that exposes.
``--slots N``: requests decoded together (the continuous batcher's rows); more wait for a slot.
``--plan batch`` (the default): the engine stores each weight matrix the way 2-32 rows (a batch of
requests) multiply it fastest on this machine (``MINILLM_PLAN=batch``, minillm/engine/plan.py);
``--plan on`` the way ONE row does (what ``generate`` and ``chat`` use); ``--plan off`` the fixed
rules. Measured on one machine (benchmarks/bench_server.py, 1 BLAS thread): "batch" served 8
streams 1.27-1.35x faster than "on" (110-117 against 87 tokens/s), one stream 15 % slower.
``--context N``: tokens one request may fill (prompt + reply; default min(2048, n_ctx)): the KV
cache holds slots × context positions. Ctrl-C stops accepting, gives running replies
``--grace`` seconds, cuts the rest and exits 0.
"""
from __future__ import annotations

import ipaddress
import os
import sys

from minillm.cli.resolve import help_text, load_model_and_tokenizer


PLANS = {"batch": "for batches (--plan batch)", "on": "for one stream (--plan on)",
         "off": "by the fixed rules (--plan off)"}


def add_arguments(parser) -> None:
    parser.add_argument("-m", "--model", required=True, help=help_text("--model"))
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on; any but a loopback address lets other "
                             "machines reach the model (then set --api-key)")
    parser.add_argument("--port", type=int, default=8000, help="the port (0: any free one)")
    parser.add_argument("--slots", type=int, default=4,
                        help="requests decoded together (the continuous batcher's rows)")
    parser.add_argument("--context", type=int, default=None,
                        help="tokens one request may fill, prompt + reply (default: "
                             "min(2048, the model's n_ctx))")
    parser.add_argument("--api-key", default=None,
                        help="require 'Authorization: Bearer KEY' on every request (default: "
                             "the MINILLM_API_KEY environment variable, if set; else no key)")
    parser.add_argument("--name", default=None,
                        help="the model's name in the API (default: the --model argument)")
    parser.add_argument("--chat-format", default=None, metavar="NAME",
                        help="the chat format (default: the one the model's template names)")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds running replies get to finish after Ctrl-C")
    parser.add_argument("--plan", choices=("batch", "on", "off"), default=None,
                        help="how the engine stores its weights: for batches of requests (batch, "
                             "the default), for one stream (on), or by the fixed rules (off); "
                             "default: the MINILLM_PLAN environment variable if set, else batch")
    parser.add_argument("--reference", action="store_true",
                        help="run minillm/model/'s readable code instead of the engine")


def check_arguments(args) -> None:
    """What ``serve`` refuses before loading the model, each naming its flag."""
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in [0, 65535] (0: any free port), got {args.port}")
    if not 1 <= args.slots <= 256:
        raise ValueError(f"--slots must be an integer in [1, 256], got {args.slots}")
    if args.context is not None and args.context < 2:
        raise ValueError(f"--context must be at least 2 tokens, got {args.context}")
    if not 0 <= args.grace < float("inf"):
        raise ValueError(f"--grace must be a number of seconds >= 0, got {args.grace}")
    if args.api_key is not None and not args.api_key:
        raise ValueError("--api-key must not be empty (leave it out for no key)")


def run(args) -> int:
    from minillm import make_server
    from minillm.server.errors import log
    check_arguments(args)
    plan = args.plan or os.environ.get("MINILLM_PLAN", "").strip().lower() or "batch"
    os.environ["MINILLM_PLAN"] = plan             # what the engine's loader reads (engine/plan.py)
    _, model, tokenizer = load_model_and_tokenizer(args.model, reference=args.reference)
    key = args.api_key if args.api_key is not None else os.environ.get("MINILLM_API_KEY")
    try:
        server = make_server(model, tokenizer, name=args.name or args.model, host=args.host,
                             port=args.port, capacity=args.context, chat_format=args.chat_format,
                             slots=args.slots, api_key=key or None)
    except OSError as exc:                  # a port in use, an address not of this machine
        raise ValueError(f"--host {args.host} --port {args.port}: cannot listen there "
                         f"({exc.strerror or exc})") from None
    host, port = server.server_address[:2]
    log(server.served.note)
    where = ("this machine only" if ipaddress.ip_address(host).is_loopback else
             f"ANY host that can reach {host}" + ("" if key else " — and no --api-key is set"))
    log(f"serving {server.served.name!r} on {server.url}/v1 ({where}); {args.slots} slots, "
        f"{server.served.capacity} tokens per request{', API key required' if key else ''}; "
        f"weights stored {PLANS.get(plan, plan) if not args.reference else 'as plain arrays'}. "
        f"Ctrl-C stops.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log(f"stopping: no new requests; running replies get {args.grace:g} s")
    finally:
        server.stop(grace=args.grace)
    print("minillm serve: stopped", file=sys.stderr)
    return 0
