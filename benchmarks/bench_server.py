"""``minillm serve`` under load: aggregate decode throughput with 1, 8 and 16 concurrent streams,
and time to first token (TTFT) under load.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_server.py            # SmolLM2 if present
    python benchmarks/bench_server.py --model weights/tiny-llama --rounds 3

The model: SmolLM2-135M-Instruct from MINILLM_SHARED_DATA (its GGUF, dequantized to float32 at
load: the F32 forward) when present, else the shipped weights/tiny-llama (said so). A server
with 16 slots runs in this process on a free 127.0.0.1 port; for each concurrency c (1, 8, 16,
interleaved in every round) c client threads start together, each streaming one completion
(greedy, ignore_eos, ``--tokens`` new tokens, a different prompt of about 16 tokens each) over HTTP.

    end-to-end tok/s         tokens after each stream's first / (last stream's end − first
                             first token), wall clock: what clients see, the prompt forwards of
                             requests joining meanwhile included (prompts arriving together are
                             prefilled together: decoding/joining.py)
    decode tok/s (CPU)       the same tokens / the batch thread's CPU seconds in [B, 1] decode
                             forwards (its steps minus its prompt forwards): the batcher's decode
                             rate, steady on a shared machine where wall clocks are not
    ratio                    each at c over its median at c = 1 (goal: >= 3x at 8 and 16,
                             issue 41)
    TTFT                     request sent -> first token received, over every stream of the
                             round at that c: median and 95th percentile (the prompts of the
                             requests that arrive together are prefilled in one forward, so each
                             waits for the group's: TTFT under load grows with the group)

Medians over rounds, with their spread (min-max): the machine may be shared. Prints the BLAS
library and its threads, the load average, the CPU and the engine's plan setting (MINILLM_PLAN:
"batch" unless set, as ``minillm serve``'s default ``--plan batch``; "on" for the one-stream plan).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("MINILLM_PLAN", "batch")     # what `minillm serve` uses (its --plan default)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_decode import blas_info  # noqa: E402

from minillm import load_model  # noqa: E402
from minillm.server import make_server  # noqa: E402

SHARED = Path(os.environ.get("MINILLM_SHARED_DATA", HERE.parent.parent / "shared" / "data"))
SMOLLM2 = SHARED / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
WORDS = "the sea is blue because water absorbs red light and scatters blue back to us".split()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def one_stream(port: int, prompt: str, tokens: int, out: list) -> None:
    """Stream one greedy completion; append (sent, first token, end, tokens received)."""
    body = json.dumps({"prompt": prompt, "max_tokens": tokens, "temperature": 0, "stream": True,
                       "ignore_eos": True})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    sent = time.perf_counter()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    first, n = None, 0
    for line in response:
        if line.startswith(b"data: {"):
            n += 1
            first = first or time.perf_counter()
    conn.close()
    out.append((sent, first, time.perf_counter(), n))


def run(server, c: int, tokens: int, salt: int) -> tuple[float, float, list[float]]:
    """c streams at once -> (end-to-end tok/s, decode tok/s per batch-thread CPU second, each
    stream's TTFT in s)."""
    out: list = []
    port, clock = server.server_address[1], server.engine.batcher.clock
    prompts = [" ".join(WORDS[(i + salt) % len(WORDS):] + WORDS[:(i + salt) % len(WORDS)])
               for i in range(c)]
    threads = [threading.Thread(target=one_stream, args=(port, p, tokens, out)) for p in prompts]
    before = dict(clock)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if any(n != tokens + 1 for *_, n in out):       # + the chunk with the finish reason
        raise RuntimeError(f"incomplete streams: {[n for *_, n in out]}")
    decoded = sum(n - 2 for *_, n in out)            # tokens after each stream's first
    span = max(end for _, _, end, _ in out) - min(first for _, first, _, _ in out)
    decode_cpu = (clock["step_cpu"] - before["step_cpu"]) - (clock["prefill_cpu"] - before["prefill_cpu"])
    return decoded / span, decoded / decode_cpu, [first - sent for sent, first, _, _ in out]


def spread(values: list[float], unit: str = "") -> str:
    return f"{statistics.median(values):.1f}{unit} ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="default: SmolLM2 if present, else tiny-llama")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--tokens", type=int, default=24, help="new tokens per stream")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--context", type=int, default=128, help="tokens per request (cache)")
    args = parser.parse_args()
    name = args.model or (str(SMOLLM2) if SMOLLM2.exists() else "weights/tiny-llama")
    note = "" if args.model or SMOLLM2.exists() else f" ({SMOLLM2} absent: the shipped tiny model)"
    t = time.perf_counter()
    model, tokenizer = load_model(name)
    print(f"model: {name}{note}; {model.num_parameters():,} parameters, float32; load "
          f"{time.perf_counter() - t:.1f} s")
    print(f"CPU: {cpu_model()}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    print(f"BLAS: {blas_info()}; env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                                                   if k.startswith(("OPENBLAS", "OMP_", "MINILLM_PLAN")))
                                          or "(no OPENBLAS_*/OMP_* set)"))
    slots = max(args.concurrency)
    server = make_server(model, tokenizer, name="bench", port=0, slots=slots,
                         capacity=min(args.context, model.config.n_ctx))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"server: {slots} slots, context {server.served.capacity}; {args.tokens} new tokens "
          f"per stream, greedy; {args.rounds} rounds, concurrency interleaved")
    run(server, 1, 4, 0)                             # warm-up
    base = args.concurrency[0]
    e2e, decode, ttft = ({c: [] for c in args.concurrency} for _ in range(3))
    for r in range(args.rounds):
        for c in args.concurrency:
            a, d, times = run(server, c, args.tokens, salt=r)
            e2e[c].append(a)
            decode[c].append(d)
            ttft[c] += times
    server.stop(grace=1.0)
    print("end-to-end: tokens after each stream's first / (last end - first first token), wall "
          "clock, other requests' prompt forwards included")
    print("decode: the same tokens / the batch thread's CPU seconds in [B, 1] decode forwards "
          "(steps minus prompt forwards)")
    print("ratios: to the median at 1 stream; medians over rounds (min-max)")
    print(f"{'streams':>7}  {'end-to-end tok/s':>20} {'ratio':>6}  {'decode tok/s (CPU)':>20} "
          f"{'ratio':>6}  {'TTFT median':>11} {'TTFT p95':>9}")
    for c in args.concurrency:
        q = sorted(ttft[c])
        p95 = q[min(len(q) - 1, int(round(0.95 * (len(q) - 1))))]
        print(f"{c:>7}  {spread(e2e[c]):>20} {statistics.median(e2e[c]) / statistics.median(e2e[base]):>5.2f}x"
              f"  {spread(decode[c]):>20} "
              f"{statistics.median(decode[c]) / statistics.median(decode[base]):>5.2f}x"
              f"  {statistics.median(q) * 1e3:>8.0f} ms {p95 * 1e3:>6.0f} ms")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
