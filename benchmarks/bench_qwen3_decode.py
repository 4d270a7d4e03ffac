"""minillm's engine against llama.cpp decoding one Qwen3-shaped F32 GGUF file, one thread each.

    python benchmarks/bench_qwen3_decode.py                  # 8 layers, 5 rounds (~2-4 min)
    python benchmarks/bench_qwen3_decode.py --layers 28 --rounds 3     # Qwen3-0.6B's depth
    python benchmarks/bench_qwen3_decode.py --quick          # 2 layers, 16 tokens, 2 rounds

The file: Qwen3-0.6B's layer shape (C 1024, 16 query heads on 8 KV heads, head_dim 128 so
H·D = 2048 ≠ C, q/k RMSNorm, SwiGLU F 3072, θ 1e6, tied) with random weights (seed 0), GPT-2's
50,257-token vocabulary (its tokenizer goes into the file) and ``--layers`` layers, exported F32 by
minillm as llama.cpp's ``qwen3``; both read that same file. Needs ``cyllama==0.2.18`` (llama.cpp
b9190, no BLAS) and threadpoolctl in a development venv; never a test or run-time dependency.

What is timed, the same for both (wall clock, one BLAS / ggml thread): a 16-token prompt goes in,
then ``--tokens`` greedy tokens one forward pass each; tokens/s over those passes alone (the
argmax and the wheel's copy of llama.cpp's logits outside the clock). Rounds alternate which
engine goes first; the figures are the median of the rounds (and the best), the ratio minillm /
llama.cpp of the medians. llama.cpp runs without flash attention and with an F32 KV cache (exact
float32 attention, as minillm). The greedy tokens of the two are compared. Also printed: the
``OPENBLAS_*`` settings, the load average each round, each round's median step in ms, and the
bound (``decode_bound.py``: the step's weight products alone and the streaming rate, measured in
the same run). ``--also-rows`` adds minillm with its arena in the "rows" layout (the loaders'
before "by_width") as a third side, for a before / after in one run.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")      # before numpy: no BLAS threads spawned

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "benchmarks")]
from bench_decode import blas_info  # noqa: E402
import bench_decode  # noqa: E402
import bench_llamacpp  # noqa: E402
from bench_llamacpp import LlamaSide, MinillmSide, agreement, llama_build  # noqa: E402
from decode_bound import bound_lines  # noqa: E402

from minillm import GPT, ModelConfig, Tokenizer  # noqa: E402


def qwen3_config(layers: int, vocab_size: int) -> ModelConfig:
    """Qwen3-0.6B's layer shape with ``layers`` layers and a ``vocab_size`` vocabulary."""
    return ModelConfig(vocab_size=vocab_size, n_ctx=4096, d_model=1024, n_heads=16, n_kv_heads=8,
                       head_dim=128, n_layers=layers, d_ff=3072, norm_eps=1e-6, arch="llama",
                       attn_bias=False, rope_theta=1e6, qk_norm=True, tie_embeddings=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 layers, 16 tokens, 2 rounds")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="time the passes by wall clock or by this process's CPU time")
    parser.add_argument("--also-rows", action="store_true",
                        help='also time minillm with its arena in the "rows" layout')
    args = parser.parse_args()
    if args.quick:
        args.layers, args.tokens, args.rounds = 2, 16, 2
    from threadpoolctl import threadpool_limits
    if args.clock == "cpu":
        bench_llamacpp.CLOCK[0] = bench_decode.clock = time.process_time
    threadpool_limits(1)                                # whatever the environment said
    print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"clock: {args.clock}")
    print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                              if k.startswith(("OPENBLAS", "OMP_", "MKL_"))) or "(none set)"))
    print(f"{llama_build()}; n_threads=1; flash attention off, F32 KV cache")
    tok = Tokenizer.load("gpt2")
    config = qwen3_config(args.layers, tok.vocab_size)
    prompt = tok.encode((ROOT / "README.md").read_text())[:16]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        path = GPT(config, seed=0).save_gguf(Path(tmp) / "qwen3-f32.gguf", tok)
        print(f"Qwen3-shaped file: {args.layers} layers, C 1024, H 16 / KV 8, D 128, F 3072, "
              f"V {config.vocab_size:,}; {path.stat().st_size / 1e6:.0f} MB F32, exported in "
              f"{time.perf_counter() - t:.1f} s")
        llama = LlamaSide(path, n_ctx=16 + args.tokens, exact=True)
        mine = MinillmSide(path)
        for line in bound_lines(mine.model):
            print(line)
        sides = {"l": llama, "m": mine}
        if args.also_rows:
            sides["r"] = MinillmSide(path, "rows")
        for side in sides.values():                                         # warm up
            side.decode(prompt, 4)
        rates, greedy = {tag: [] for tag in sides}, {}
        for k in range(args.rounds):
            for tag, side in list(sides.items())[::1 if k % 2 == 0 else -1]:  # who goes first
                seconds, *greedy[tag] = side.decode(prompt, args.tokens)
                rates[tag].append(args.tokens / seconds)
            rows = f", minillm rows {rates['r'][-1]:.2f}" if args.also_rows else ""
            steps = ", ".join(f"{statistics.median(s.steps) * 1e3:.1f}" for s in sides.values())
            print(f"  round {k + 1}: llama.cpp {rates['l'][-1]:.2f}, minillm {rates['m'][-1]:.2f}"
                  f"{rows} tokens/s; median step ms {steps} (load average "
                  f"{os.getloadavg()[0]:.2f})", flush=True)
        llama.close()
    check = agreement(greedy["m"][0], *greedy["l"])
    l_med, m_med = statistics.median(rates["l"]), statistics.median(rates["m"])
    print(f"\ndecode, 16-token prompt then {args.tokens} greedy tokens, {args.rounds} rounds; "
          f"{check}")
    print("| file | llama.cpp tokens/s median (best) | minillm median (best) | ratio of medians |")
    print("|---|---|---|---|")
    print(f"| qwen3-shaped f32, {args.layers} layers | {l_med:.2f} ({max(rates['l']):.2f}) | "
          f"{m_med:.2f} ({max(rates['m']):.2f}) | {m_med / l_med:.2f}x |")
    if args.also_rows:
        r_med = statistics.median(rates["r"])
        print(f"minillm rows layout: {r_med:.2f} tokens/s median, rows / llama.cpp = "
              f"{r_med / l_med:.2f}x; by_width / rows = {m_med / r_med:.2f}x")


if __name__ == "__main__":
    main()
