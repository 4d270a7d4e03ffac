"""minillm's engine against llama.cpp decoding a Gemma-3-shaped F32 GGUF, one thread each.

    python benchmarks/bench_gemma3_decode.py                   # 3 rounds
    python benchmarks/bench_gemma3_decode.py --rounds 1 --tokens 16

The file: Gemma 3 270M's shape (18 layers, C 640, 4 query heads on 1 KV head, head_dim 256,
F 2048, q/k norms, sliding window 512 on five layers of six, local RoPE base 10,000) with random
weights (seed 0) and a 32,768-token vocabulary instead of 262,144 (the head would be 80 % of the
weights), exported F32 by minillm and read by both. What is timed is ``bench_llamacpp.py``'s decode
(a 16-token prompt, then greedy tokens one forward pass each; tokens/s over those passes), in
rounds that alternate which engine goes first; printed: the median of the rounds of each and
their ratio, each round's median step in ms, the BLAS, the ``OPENBLAS_*`` settings and the load
average, and the bound (``decode_bound.py``: the step's weight products alone, and the streaming
rate, measured in the same run). ``--window W`` makes the window shorter than the decode.
``--also-rows`` adds a third side: minillm with its arena in the "rows" layout (every matrix by
output row, the loaders' layout before "by_width"), for a before / after in one run.

The window's flat cost (``--flat``, on by default; ``--no-flat`` skips it): minillm's step time
at positions W/2, W, 2W, 4W and 8W (a cache filled with random keys and values to that length,
the median of 7 steps each, alternating), for the file's model and for the same weights with the window as
long as the context (every layer attending to every key): past W the windowed step stays flat
on its 15 sliding layers, while the full one grows.

Needs cyllama==0.2.18 and threadpoolctl (development venv), never a test dependency.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")      # before numpy: no BLAS threads spawned

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "benchmarks")]
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

from bench_decode import blas_info  # noqa: E402
import bench_decode  # noqa: E402
import bench_llamacpp  # noqa: E402
from bench_llamacpp import LlamaSide, MinillmSide, agreement, llama_build  # noqa: E402
from decode_bound import bound_lines  # noqa: E402

from minillm import GPT, Tokenizer  # noqa: E402
from minillm.config import ModelConfig  # noqa: E402
from minillm.engine import EngineGPT  # noqa: E402
from minillm.kv_cache import KVCache  # noqa: E402


def gemma3_config(window: int) -> ModelConfig:
    return ModelConfig(vocab_size=32768, n_ctx=32768, d_model=640, n_heads=4, n_kv_heads=1,
                       head_dim=256, n_layers=18, d_ff=2048, arch="llama", ffn="geglu",
                       qk_norm=True, sandwich_norms=True, embed_scale=True, sliding_window=window,
                       layer_types=tuple("full" if (i + 1) % 6 == 0 else "sliding"
                                         for i in range(18)),
                       rope_theta=1e6, rope_local_theta=10000.0, norm_eps=1e-6)


def cache_at(config, position: int) -> KVCache:
    """A cache filled with random keys and values to ``position`` (what a step costs does not
    depend on their values)."""
    cache = KVCache(config, 1, capacity=position + 1)
    rng = np.random.default_rng(0)
    for kv in (cache.k, cache.v):                                   # [L, 1, KV, N, D]
        kv[...] = rng.standard_normal(kv.shape, dtype=np.float32)
    cache.advance(position)
    return cache


def step_ms_at(models, position: int, steps: int) -> list[float]:
    """Median ms of one-token steps at ``position`` for each of ``models``, their steps
    alternating (so both see the same machine), each cache rolled back after its step."""
    caches = [cache_at(m.config, position) for m in models]
    times = [[] for _ in models]
    for _ in range(steps + 1):                                      # (the first: warm-up)
        for model, cache, ts in zip(models, caches, times):
            t = bench_llamacpp.CLOCK[0]()
            model(np.array([[5]]), cache=cache, last_only=True)
            ts.append(bench_llamacpp.CLOCK[0]() - t)
            cache.rollback(position)
    return [statistics.median(ts[1:]) * 1e3 for ts in times]


def flat_past_window(model, window: int, steps: int = 7) -> None:
    """Print minillm's step ms at W/2 … 8W, windowed and with the window as long as the context."""
    c = model.config
    full = EngineGPT(replace(c, sliding_window=c.n_ctx), model.arena)   # the same weights, no copy
    print(f"\nstep ms at position (minillm, median of {steps} steps, the two alternating; load "
          f"average {os.getloadavg()[0]:.2f}):")
    print("| position | window W = %d | no window | windowed / no window |" % window)
    print("|---|---|---|---|")
    for pos in (window // 2, window, 2 * window, 4 * window, 8 * window):
        w, f = step_ms_at((model, full), pos, steps)
        print(f"| {pos} | {w:.1f} | {f:.1f} | {w / f:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--window", type=int, default=512)
    parser.add_argument("--flat", action=argparse.BooleanOptionalAction, default=True,
                        help="step time at W/2 ... 8W, with and without the window")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="time the passes by wall clock or by this process's CPU time")
    parser.add_argument("--also-rows", action="store_true",
                        help='also time minillm with its arena in the "rows" layout')
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits
    if args.clock == "cpu":
        bench_llamacpp.CLOCK[0] = bench_decode.clock = time.process_time
    print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"clock: {args.clock}")
    print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                              if k.startswith(("OPENBLAS", "OMP_", "MKL_"))) or "(none set)"))
    config = gemma3_config(args.window)
    model = GPT(config, seed=0)
    rng = np.random.default_rng(1)
    for name, w in model.params.named().items():     # gains around 1: the activations stay O(1)
        if w.ndim == 1:
            w[...] = 1 + 0.1 * rng.standard_normal(w.shape, dtype=np.float32)
    tok = Tokenizer({bytes([i]): i for i in range(256)}, {})
    prompt = list(range(1, 17))
    print(llama_build())
    with tempfile.TemporaryDirectory() as d, threadpool_limits(1):
        path = model.save_gguf(Path(d) / "gemma3.gguf", tok)
        del model
        print(f"  {path.stat().st_size / 1e6:.0f} MB F32 file; window {args.window}, "
              f"{args.tokens} tokens after a 16-token prompt, {args.rounds} rounds, one thread")
        llama = LlamaSide(path, n_ctx=16 + args.tokens + 8, exact=True)
        mine = MinillmSide(path)
        for line in bound_lines(mine.model):
            print("  " + line)
        sides = {"llama.cpp": llama, "minillm": mine}
        if args.also_rows:
            sides["minillm rows"] = MinillmSide(path, "rows")
        for side in sides.values():                   # warm up
            side.decode(prompt, 4)
        rates, greedy = {tag: [] for tag in sides}, {}
        for k in range(args.rounds):
            for tag, side in list(sides.items())[::1 if k % 2 == 0 else -1]:
                seconds, *greedy[tag] = side.decode(prompt, args.tokens)
                rates[tag].append(args.tokens / seconds)
            print(f"  round {k + 1}: median step ms " + ", ".join(
                f"{tag} {statistics.median(side.steps) * 1e3:.1f}" for tag, side in sides.items())
                + f" (load average {os.getloadavg()[0]:.2f})", flush=True)
        llama.close()
        if args.flat:
            flat_past_window(mine.model, args.window)
    l, m = (statistics.median(rates[t]) for t in ("llama.cpp", "minillm"))
    print(f"  decode tokens/s, median of {args.rounds}: llama.cpp {l:.1f}, minillm {m:.1f}; "
          f"minillm / llama.cpp = {m / l:.2f}")
    print(f"  rounds: llama.cpp {[round(r, 1) for r in rates['llama.cpp']]}, "
          f"minillm {[round(r, 1) for r in rates['minillm']]}")
    if args.also_rows:
        r = statistics.median(rates["minillm rows"])
        print(f"  minillm rows layout {r:.1f} tokens/s: rows / llama.cpp = {r / l:.2f}; "
              f"by_width / rows = {m / r:.2f}")
    print(f"  {agreement(greedy['minillm'][0], *greedy['llama.cpp'])}")


if __name__ == "__main__":
    main()
