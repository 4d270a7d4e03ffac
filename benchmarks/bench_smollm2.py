"""SmolLM2-135M-Instruct, the real Q4_1 GGUF model: load cost, memory and decode speed.

    /work/venv/bin/python benchmarks/bench_smollm2.py                 # 1 and 2 BLAS threads
    /work/venv/bin/python benchmarks/bench_smollm2.py --threads 1 --steps 16 --rounds 3

Prints (medians; every figure from this one run):
  load        seconds of ``load_gguf_model`` (parse, tokenizer, dequantise all to float32) and
              the peak RSS right after it (resource.getrusage), before anything else allocates,
              as a multiple of the float32 weight bytes (goal <= 1.3x)
  keep Q4_1   the alternative: dequantise on use. Seconds to decode every weight tensor once from
              the memory map = what each generated token would pay on top, and the bytes the
              quantised tensors take (what would stay resident instead of float32)
  per BLAS thread count, in interleaved rounds:
    bandwidth   streaming-read GB/s (bench_decode.bandwidth: the best of a float32 dot product
                of two 512 MB arrays, a reduction, a matrix-vector product and the same product
                over 32-column tiles)
    bound       float32 weight bytes read per token / bandwidth (every matrix once; wte in full,
                as the tied LM head) -> tokens/s
    decode      tokens/s with the KV cache after the 37-token chat prompt, and % of the bound
    decode layout  the same with the weights in the "decode" layout ([C, N]: engine/arena.py)
    matmuls     the token's matrix products alone (x @ W for each weight, same shapes): the BLAS
                floor; decode - matmuls = attention, norms, RoPE, SwiGLU and Python overhead
    generate    tokens/s through ``minillm.decoding.generate`` (preset "chat"), sampling and prompt included
    per token   ms per generated token through ``generate`` greedy (temperature 0) and with preset "chat", the
                prompt's cost cancelled ((time for n + 1 tokens − time for 1) / n): noisy
    sampling    one ``Sampler.sample`` on the model's real logits (V = 49,152), greedy and "chat",
                medians of 50 draws; goal: decode step + chat within 5 % of step + greedy
Goal (issue 6): decode >= 50 % of the bound.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_decode import bandwidth, blas_info, kernel_rates, median_time, peak_rss_mb  # noqa: E402

from minillm import KVCache  # noqa: E402
from minillm.chat.chatml import chatml_ids  # noqa: E402
from minillm.decoding.generate import generate  # noqa: E402
from minillm.sampling import PRESETS, Sampler  # noqa: E402
from minillm.io.gguf.read import read_gguf  # noqa: E402
from minillm.loading import load_gguf_model  # noqa: E402
from minillm.engine import to_engine  # noqa: E402
from minillm.engine.ops import linear  # noqa: E402

DEFAULT = HERE.parent.parent / "shared" / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def weight_bytes_per_token(model) -> int:
    """Every weight matrix is read once per token; wte in full because it is the LM head."""
    return sum(a.nbytes for a in model.params.named().values())


def decode_times(model, prompt, steps: int) -> list[float]:
    cache = KVCache(model.config, capacity=len(prompt) + steps)
    logits = model(np.array(prompt)[None], cache=cache, last_only=True)   # [1, 1, V]
    times = []
    for _ in range(steps):
        token = np.array([[int(np.argmax(logits[0, -1]))]])             # [1, 1]
        t = time.perf_counter()
        logits = model(token, cache=cache, last_only=True)
        times.append(time.perf_counter() - t)
    return times


def matmuls_only(model) -> None:
    """The products of one decode step as the model makes them, nothing else: x [1, C] @ every
    weight (wq|wk|wv and w_gate|w_up as one product each when the arena joins them), through
    ``linear`` as the model calls it (engine/rows.py's product)."""
    p, C = model.params, model.config.d_model
    x, h = np.ones((1, C), np.float32), np.ones((1, model.config.d_ff), np.float32)
    for b, joined in zip(p.blocks, model.arena.joined):
        a, f = b.attn, b.ffn
        qkv = [joined.qkv] if joined.qkv is not None else [a.wq, a.wk, a.wv]
        gate_up = [joined.gate_up] if joined.gate_up is not None else [f.w_gate, f.w_up]
        for w in (*qkv, a.wo, *gate_up):
            linear(x, w)                                                # [1, C] @ [C, ·]
        linear(h, f.w_down)                                             # [1, F] @ [F, C]
    linear(x, p.wte.T)                                                  # [1, C] @ [C, V]


def dequantise_all(g) -> None:
    for name in g.tensors:
        g.tensor(name)


def generate_rate(model, prompt, steps: int) -> float:
    t = time.perf_counter()
    n = sum(1 for _ in generate(model, prompt, steps, preset="chat", seed=0))
    return n / (time.perf_counter() - t)


def generate_step(model, prompt, steps: int, **how) -> float:
    """Seconds per token through ``generate`` once the prompt is in: (time for steps + 1 tokens
    − time for 1 token) / steps, so the prefill cancels out. EOS is ignored: always ``steps``."""
    def run(n):
        t = time.perf_counter()
        for _ in generate(model, prompt, n, seed=0, stop_at_eos=False, **how):
            pass
        return time.perf_counter() - t
    return (run(steps + 1) - run(1)) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT))
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=16, help="decode steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurement rounds")
    args = parser.parse_args()
    if not Path(args.model).exists():
        sys.exit(f"no model at {args.model}: run `python -m minillm download smollm2` and pass --model")
    from threadpoolctl import threadpool_limits
    print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                              if k.startswith(("OPENBLAS", "OMP_", "MKL_"))) or "(no OPENBLAS_*/OMP_* set)"))
    t = time.perf_counter()
    model, tok = load_gguf_model(args.model)
    weights = weight_bytes_per_token(model) / 1e6                  # float32 MB
    print(f"load           {time.perf_counter() - t:.2f} s, peak RSS {peak_rss_mb():.0f} MB = "
          f"{peak_rss_mb() / weights:.2f}x the float32 weights {weights:.0f} MB (goal <= 1.3x; "
          f"{model.num_parameters():,} parameters)")
    g = read_gguf(args.model)
    quantised = sum(i.nbytes for i in g.tensors.values())
    with threadpool_limits(1):
        deq = median_time(lambda: dequantise_all(g), 3)
    print(f"keep Q4_1      tensors take {quantised / 1e6:.0f} MB; dequantising them all takes "
          f"{deq * 1e3:.0f} ms = the extra cost of EVERY token if weights were decoded on use")
    prompt = chatml_ids(tok, [{"role": "user", "content": "What is the capital of France?"}])
    decode_layout = to_engine(model, layout="decode")
    for threads in args.threads:
        r = {"bw": [], "dec": [], "dec_d": [], "mm": [], "gen": [], "greedy": [], "chat": [],
             "s_greedy": [], "s_chat": []}
        logits = model(np.array(prompt), last_only=True)[-1]            # [V] real next-token logits
        rng = np.random.default_rng(0)
        with threadpool_limits(threads):
            decode_times(model, prompt, 2)                              # warm up
            for _ in range(args.rounds):
                r["bw"].append(bandwidth(1))
                r["dec"] += decode_times(model, prompt, args.steps)
                r["dec_d"] += decode_times(decode_layout, prompt, args.steps)
                r["mm"].append(median_time(lambda: matmuls_only(model), args.steps))
                r["gen"].append(generate_rate(model, prompt, args.steps))
                r["greedy"].append(generate_step(model, prompt, args.steps, temperature=0))
                r["chat"].append(generate_step(model, prompt, args.steps, preset="chat"))
                for name in ("greedy", "chat"):
                    sampler = PRESETS[name] if name == "chat" else Sampler(temperature=0)
                    r[f"s_{name}"].append(median_time(lambda: sampler.sample(logits, rng), 50))
        m = {k: statistics.median(v) for k, v in r.items()}
        bound = weight_bytes_per_token(model) / m["bw"]                 # seconds per token
        print(f"\n== {threads} thread(s)   (load average now {os.getloadavg()[0]:.1f})")
        print(f"bandwidth      {m['bw'] / 1e9:6.2f} GB/s  -> bound {1 / bound:6.1f} tok/s "
              f"({bound * 1e3:.1f} ms/token); last round: "
              f"{kernel_rates()} GB/s")
        print(f"decode         {1 / m['dec']:6.1f} tok/s  ({m['dec'] * 1e3:.1f} ms)  "
              f"{100 * bound / m['dec']:5.1f} % of the bound")
        print(f"decode layout  {1 / m['dec_d']:6.1f} tok/s  ({m['dec_d'] * 1e3:.1f} ms)  the same "
              f"weights [C, N] (engine/arena.py): the rows layout is {m['dec_d'] / m['dec']:.2f}x faster")
        print(f"matmuls only   {1 / m['mm']:6.1f} tok/s  ({m['mm'] * 1e3:.1f} ms)  "
              f"the rest of the step: {(m['dec'] - m['mm']) * 1e3:.1f} ms")
        print(f"generate       {m['gen']:6.1f} tok/s  (preset chat, sampling included)")
        print(f"per token      greedy {m['greedy'] * 1e3:.1f} ms, chat {m['chat'] * 1e3:.1f} ms "
              f"through generate, prompt excluded: chat/greedy = {m['chat'] / m['greedy']:.3f} "
              f"(noisy: two runs of {args.steps} tokens)")
        print(f"sampling       one draw on real logits: greedy {m['s_greedy'] * 1e3:.2f} ms, chat "
              f"{m['s_chat'] * 1e3:.2f} ms = {100 * m['s_chat'] / m['dec']:.1f} % of a decode step; "
              f"step + chat / step + greedy = {(m['dec'] + m['s_chat']) / (m['dec'] + m['s_greedy']):.3f} (goal <= 1.05)")
    print(f"\npeak RSS       {peak_rss_mb():.0f} MB (includes the 768 MB bandwidth array and the "
          f"decode-layout copy of the weights)")


if __name__ == "__main__":
    main()
