"""Batched decoding: how many tokens per second B rows get from one read of the weights.

    /work/venv/bin/python benchmarks/bench_batch.py             # GPT-2-124M shape and SmolLM2
    /work/venv/bin/python benchmarks/bench_batch.py --quick     # fewer sizes, steps and requests

Prints (medians of interleaved rounds, every figure a ratio to a baseline of the same run):
  batch B       aggregate decode tokens/s with a B-row KV cache (B = 1, 2, 4, 8, 16, 32): one
                forward of [B, 1] tokens per step, B tokens per step; the ratio to B = 1.
                A step reads every weight once whatever B is, so until the products become
                compute-bound the ratio can approach B — IF each product reads its matrix once
                (``[B·T, C] @ W``), not once per row, and without packing it first (the rows
                layout's tiles, ``minillm/engine/rows.py``; the "decode" layout is timed beside it).
                The compute ceiling: B rows cost at least 2·B·parameters flops, at the best
                matrix-multiply rate this run measures — B = 32 cannot beat it on any layout
  with prefill  ``generate_batch`` of B = 8 (and 32) prompts of 16 tokens, 16 new tokens each,
                against ``generate`` of one such prompt, both timed whole (the prompts' forward
                counted): new tokens per second, the ratio to B = 1 (goal: B = 8 >= 5x)
  32-row rate   the best rate a product by 32 rows reaches on this machine, its weights read
                from memory (the general product on either storage order, the rows layout's
                tiles), as a fraction of the [256, C] rate: how much of the compute ceiling a
                B = 32 step can reach here at all
  continuous    32 requests of mixed prompt lengths and budgets (greedy): ``serve`` with 8 and
                16 slots vs ``generate`` one request after another (time ratio; goal <= 0.25),
                and static ``generate_batch`` groups of 8 (each group waits for its longest);
                and the prompts' forwards alone: every schedule computes them, and they are
                compute-bound (batching them saves no arithmetic), so they — plus 2·parameters
                flops per new token at the best matrix-multiply rate — floor the ratio
Goals (issue 14): GPT-2-124M shape, 1 thread: B = 8 >= 5x the B = 1 tokens/s, B = 32 >= 12x.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_decode import CONFIG, blas_info  # noqa: E402

from minillm import KVCache, generate, generate_batch, serve  # noqa: E402
from minillm.engine import empty_arena, to_engine  # noqa: E402
from minillm.engine import EngineGPT  # noqa: E402
from minillm.model.init import init_params  # noqa: E402

SMOLLM2 = HERE.parent.parent / "shared" / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024      # Linux: KiB


def step_times(model, B: int, context: int, steps: int) -> list[float]:
    """Seconds of each of ``steps`` greedy decode steps of a B-row batch after ``context`` tokens."""
    V = model.config.vocab_size
    cache = KVCache(model.config, batch_size=B, capacity=context + steps)
    ids = np.random.default_rng(B).integers(0, V, (B, context))                 # [B, context]
    logits = model(ids, cache=cache, last_only=True)                            # [B, 1, V]
    times = []
    for _ in range(steps):
        token = np.argmax(logits[:, -1], axis=-1)[:, None]                      # [B, 1]
        t = time.perf_counter()
        logits = model(token, cache=cache, last_only=True)
        times.append(time.perf_counter() - t)
    return times


def batch_sizes(model, sizes, steps: int, rounds: int) -> dict[int, float]:
    """Median seconds per step for each B, the sizes interleaved in every round."""
    r = {B: [] for B in sizes}
    for _ in range(rounds):
        for B in sizes:
            r[B] += step_times(model, B, 16, steps)
    return {B: statistics.median(t) for B, t in r.items()}


def mixed_requests(model, n: int, max_prompt: int, max_new: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    prompts = [rng.integers(0, model.config.vocab_size, rng.integers(4, max_prompt + 1)).tolist()
               for _ in range(n)]
    budgets = rng.integers(2, max_new + 1, n).tolist()                          # uneven on purpose
    return prompts, budgets


def continuous(model, n: int, max_prompt: int, max_new: int) -> dict[str, float]:
    """Seconds to finish every request: one by one, static groups of 8, and ``serve``."""
    prompts, budgets = mixed_requests(model, n, max_prompt, max_new)
    out = {}
    t = time.perf_counter()
    alone = [[s.id for s in generate(model, p, k, temperature=0)] for p, k in zip(prompts, budgets)]
    out["one by one"] = time.perf_counter() - t
    t = time.perf_counter()
    for p in prompts:                                             # what every schedule must do
        model(np.asarray(p)[None], cache=KVCache(model.config, 1, len(p)), last_only=True)
    out["prompts alone"] = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(0, n, 8):
        generate_batch(model, prompts[i:i + 8], max(budgets[i:i + 8]), temperature=0)
    out["static groups of 8"] = time.perf_counter() - t
    for slots in (8, 16):
        t = time.perf_counter()
        got = serve(model, prompts, budgets, batch_size=slots, temperature=0)
        out[f"serve, {slots} slots"] = time.perf_counter() - t
        if got != alone:                                          # greedy: identical, or say so
            print(f"  note: serve with {slots} slots differs from one by one in "
                  f"{sum(a != b for a, b in zip(got, alone))} of {n} requests (float rounding ties)")
    out["tokens"] = sum(len(a) for a in alone)
    return out


def with_prefill(model, sizes, rounds: int, prompt: int = 16, new: int = 16) -> dict[int, float]:
    """Median new tokens/s of ``generate`` (B = 1) and ``generate_batch`` (B > 1), prompt forward
    included, the sizes interleaved in every round."""
    rng = np.random.default_rng(1)
    prompts = [rng.integers(0, model.config.vocab_size, prompt).tolist() for _ in range(max(sizes))]
    rates = {B: [] for B in sizes}
    for _ in range(rounds):
        for B in sizes:
            t = time.perf_counter()
            if B == 1:
                list(generate(model, prompts[0], new, temperature=0))
            else:
                generate_batch(model, prompts[:B], new, temperature=0)
            rates[B].append(B * new / (time.perf_counter() - t))
    return {B: statistics.median(r) for B, r in rates.items()}


def prompt_forward(model, B: int, T: int, rounds: int) -> float:
    """Median seconds of one forward of B prompts of T tokens into a fresh cache (last position)."""
    ids = np.random.default_rng(2).integers(0, model.config.vocab_size, (B, T))
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        model(ids, cache=KVCache(model.config, B, T), last_only=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def rate_at_rows(C: int, rows: int, rounds: int) -> dict[str, float]:
    """flop/s of [rows, C] @ [C, 4C] products over 12 such matrices (113 MB at C = 768: read from
    memory, as in a decode step), the best pass of each way: the general product on W stored
    [C, N] and stored by rows, and the rows layout's tiles (engine/rows.py)."""
    from minillm.engine.rows import tile_product
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, C), dtype=np.float32)                        # [rows, C]
    stored = [rng.standard_normal((C, 4 * C), dtype=np.float32) for _ in range(12)]   # [C, N] each
    by_rows = [np.ascontiguousarray(w.T) for w in stored]                       # [N, C] each
    ways = {"general, [C, N]": lambda: [x @ w for w in stored],
            "general, rows": lambda: [x @ wt.T for wt in by_rows],
            "tiles, rows": lambda: [tile_product(x, wt) for wt in by_rows]}
    best = {name: float("inf") for name in ways}
    for _ in range(rounds):
        for name, f in ways.items():
            t = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - t)
    return {name: 2 * rows * C * 4 * C * 12 / sec for name, sec in best.items()}


def matmul_rate(C: int, rounds: int) -> float:
    """The machine's float32 matrix-multiply rate (flop/s), the best of a few [256, C] @ [C, 4C]
    products: what B rows per step cost at least once decoding is compute-bound."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((256, C), dtype=np.float32), rng.standard_normal((C, 4 * C), dtype=np.float32)
    times = []
    for _ in range(3 * rounds):
        t = time.perf_counter()
        x @ w
        times.append(time.perf_counter() - t)
    return 2 * x.shape[0] * w.size / min(times)


def report(name: str, model, args) -> None:
    print(f"\n== {name}: {model.num_parameters():,} parameters, "
          f"{sum(a.nbytes for a in model.params.named().values()) / 1e6:.0f} MB float32")
    sizes = [1, 8, 32] if args.quick else [1, 2, 4, 8, 16, 32]
    decode = to_engine(model, layout="decode")
    step_times(model, 2, 16, 2)                                   # warm up
    m = batch_sizes(model, sizes, args.steps, args.rounds)
    d = batch_sizes(decode, [1, 8], args.steps, args.rounds)
    rate = matmul_rate(model.config.d_model, args.rounds)
    flops = 2 * (model.num_parameters() - (model.params.wpe.size if model.params.wpe is not None else 0))
    for B in sizes:
        ceiling = B * m[1] / max(m[1], B * flops / rate)          # at the matrix-multiply rate
        print(f"batch {B:2d}       {B / m[B]:7.1f} tok/s aggregate  ({m[B] * 1e3:6.1f} ms/step)  "
              f"{B * m[1] / m[B]:5.2f}x B = 1   (compute ceiling {ceiling:5.1f}x)")
    print(f"decode layout  B = 8 is {8 * d[1] / d[8]:.2f}x its B = 1 ({d[1] * 1e3:.1f} / {d[8] * 1e3:.1f} "
          f"ms/step); rows B = 1 is {d[1] / m[1]:.2f}x faster, B = 8 {d[8] / m[8]:.2f}x")
    print(f"               (ceiling: B rows cost at least B x 2 x parameters flops at the best "
          f"[256, C] @ [C, 4C] rate this run, {rate / 1e9:.0f} GFLOP/s)")
    at32 = rate_at_rows(model.config.d_model, 32, args.rounds)
    best32 = max(at32.values())
    print("32-row rate    [32, C] @ [C, 4C] products, weights from memory: " + ", ".join(
          f"{name} {r / 1e9:.0f}" for name, r in at32.items()) + f" GFLOP/s; the best is "
          f"{best32 / rate:.2f} of the [256, C] rate: a B = 32 step can reach ~{best32 / rate:.0%} "
          f"of its compute ceiling at most with this BLAS")
    pre = with_prefill(model, [1, 8, 32], args.rounds)
    print(f"with prefill   16-token prompts, 16 new tokens, prompt forward counted: B = 1 "
          f"{pre[1]:.1f} tok/s; B = 8 {pre[8]:.1f} tok/s = {pre[8] / pre[1]:.2f}x; "
          f"B = 32 {pre[32]:.1f} tok/s = {pre[32] / pre[1]:.2f}x")
    fwd = {B: prompt_forward(model, B, 16, args.rounds) for B in (1, 8)}
    at128 = max(rate_at_rows(model.config.d_model, 128, args.rounds).values())
    blocks = 2 * 128 * (model.num_parameters() - model.config.vocab_size * model.config.d_model
                        - (model.params.wpe.size if model.params.wpe is not None else 0))
    print(f"  where B = 8's time goes: its prompts' forward (128 rows) {fwd[8] * 1e3:.0f} ms — the "
          f"block matrices' flops alone take {blocks / at128 * 1e3:.0f} ms at the best 128-row rate "
          f"this run measures ({at128 / 1e9:.0f} GFLOP/s) — and 16 steps of {m[8] * 1e3:.1f} ms; "
          f"B = 1: {fwd[1] * 1e3:.0f} ms and 16 x {m[1] * 1e3:.1f} ms")
    n, max_prompt, max_new = (16, 24, 16) if args.quick else (32, 64, 48)
    c = continuous(model, n, max_prompt, max_new)
    base = c.pop("one by one")
    tokens, prompts = c.pop("tokens"), c.pop("prompts alone")
    floor = prompts + tokens * flops / rate                       # + every new token's arithmetic
    print(f"continuous     {n} requests, prompts 4-{max_prompt}, budgets 2-{max_new} "
          f"({tokens} tokens): one by one {base:.1f} s; reading the prompts alone (one forward "
          f"each, compute-bound) takes {prompts:.1f} s = {prompts / base:.2f}x; with every new "
          f"token's flops at the best rate, no schedule can beat {floor:.1f} s = {floor / base:.2f}x")
    for label, sec in c.items():
        print(f"  {label:20s} {sec:6.1f} s = {sec / base:.2f}x one by one")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=8, help="decode steps per size and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="B = 1, 8, 32; 16 short requests")
    parser.add_argument("--skip-smollm2", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = min(args.steps, 4), min(args.rounds, 2)
    from threadpoolctl import threadpool_limits
    with threadpool_limits(args.threads):
        print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                                  if k.startswith(("OPENBLAS", "OMP_", "MKL_"))) or "(none set)"))
        arena = empty_arena(CONFIG, "rows")
        init_params(CONFIG, np.random.default_rng(0), params=arena.params)
        model = EngineGPT(CONFIG, arena)                    # (load_model now fills "by_width")
        report("GPT-2-124M shape (random weights, rows layout)", model, args)
        if not args.skip_smollm2 and SMOLLM2.exists():
            from minillm.loading import load_gguf_model
            report("SmolLM2-135M-Instruct (Q4_1 GGUF -> float32)", load_gguf_model(SMOLLM2)[0], args)
        elif not args.skip_smollm2:
            print(f"\n(SmolLM2 skipped: no file at {SMOLLM2})")
    print(f"\npeak RSS       {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
