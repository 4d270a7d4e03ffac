"""Decode speed of a GPT-2-124M-shaped model (random weights, built locally, no download).

    /work/venv/bin/python benchmarks/bench_decode.py              # 1 and 2 threads
    /work/venv/bin/python benchmarks/bench_decode.py --threads 1 --steps 16

Prints, per BLAS thread count (medians of per-step times, all measured in this one run):
  bandwidth     streaming-read bandwidth (GB/s): the best of five read-only float32 kernels
                on 512 MB arrays (bigger than any cache) — a dot product of two of them, a
                reduction, matrix-vector products over both layouts, and np.einsum's own loop
                (the engine's "einsum" form) — i.e. the best rate this machine streams memory
                at, not the rate of one access pattern (the five are printed: the last round's)
  bound         the memory-bandwidth bound: bytes of weights read per token / bandwidth —
                decoding one token must read every weight matrix once (wte twice over: it is
                the LM head too, but only one row is gathered for the embedding)
  cache@16      decode tokens/s with the KV cache at context 16, and % of the bound
  cache@1000    the same at context 1000 (+ per-token time ratio to context 16; goal <= 1.3)
  decode layout cache@16 (and prefill 512) with the same weights in the engine's "decode" arena
                layout (engine/arena.py: [C, N] matrices) against the "rows" layout used above,
                the loaders' (Wᵀ [N, C] stored: engine/rows.py)
  plain layout  the same in the model of plain ndarrays (``fast=False``: model/ code only, no
                arena, no joined products, the tied head read as wteᵀ)
  no cache      tokens/s re-running the whole context every step (context 16 .. 16+steps)
  torch         HF transformers + torch CPU ``generate`` on the same shape (greedy, KV cache),
                when torch and transformers are installed
  prefill 512   seconds for a 512-token prompt, minillm vs torch (goal: minillm >= 1.5x faster),
                and the sgemm floor: the same run's weight products alone (no attention, GELU,
                norms) in NumPy and in torch, the least time any exact prefill can take
Before the rounds, peak RSS (resource.getrusage): after the random init here, and after loading
the same model from a saved checkpoint in a fresh process (``GPT.from_pretrained``), each as a
multiple of the float32 weight bytes (goal: <= 1.3x).
Goals (issue 4): cache@16 >= 90 % of the bound; >= 2x torch's decode; cache@1000 <= 1.3x cache@16.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minillm import GPT, KVCache, ModelConfig  # noqa: E402
from minillm.engine import empty_arena, plain_params, to_engine  # noqa: E402
from minillm.engine import EngineGPT  # noqa: E402
from minillm.engine.ops import linear  # noqa: E402
from minillm.model.init import init_params  # noqa: E402

CONFIG = ModelConfig(vocab_size=50257, n_ctx=1024, d_model=768, n_heads=12, n_layers=12)
clock = time.perf_counter   # --clock cpu: time.process_time, the CPU time of this process —
# on a shared machine it leaves out the time other jobs held the core (1 thread only: with more
# threads it adds the threads' times up, and OpenBLAS's spinning threads inflate it)


def median_time(fn, repeats: int) -> float:
    """Median seconds of ``repeats`` calls of ``fn()``."""
    times = []
    for _ in range(repeats):
        t = clock()
        fn()
        times.append(clock() - t)
    return statistics.median(times)


STREAMS = None   # the two 512 MB arrays bandwidth() reads, allocated once
BANDWIDTHS = []  # the last call's rates, bytes/s, one per BANDWIDTH_KERNELS


BANDWIDTH_KERNELS = ("dot", "reduce", "x @ A", "x @ Bᵀ", "einsum")


def bandwidth(repeats: int) -> float:
    """Bytes per second actually streamed from memory: the best of five read-only kernels —
    a float32 dot product of two 512 MB arrays, a reduction of one, x @ A with A [C, N] (the
    product x @ W, W stored [in, out]), x @ Bᵀ with B [N, C] (W stored by rows, [out, in]:
    engine/rows.py), and ``np.einsum`` of a vector with A' [N, 512] (NumPy's own loop, which
    walks its matrix in storage order: the engine's "einsum" form, engine/forms.py). A bound
    below the model's own rate would be no bound, so every way the engine reads is a kernel."""
    global STREAMS
    if STREAMS is None:
        n = 512 * 2**20 // 4                                        # 512 MB of float32
        STREAMS = (np.ones(n, dtype=np.float32), np.ones(n, dtype=np.float32))   # [N], [N]
    a, b = STREAMS
    A = a[:a.size // 768 * 768].reshape(768, -1)                    # [C, N/C]  a view
    B = b[:b.size // 768 * 768].reshape(-1, 768)                    # [N/C, C]  a view
    E = a.reshape(-1, 512)                                          # [N/512, 512]  a view
    x = np.ones((1, 768), dtype=np.float32)                         # [1, C]
    e = np.ones(E.shape[0], dtype=np.float32)                       # [N/512]
    rates = (2 * a.nbytes / median_time(lambda: np.dot(a, b), repeats),        # reads both
             a.nbytes / median_time(lambda: np.add.reduce(a), repeats),
             A.nbytes / median_time(lambda: x @ A, repeats),                   # [1, C] @ [C, N/C]
             B.nbytes / median_time(lambda: x @ B.T, repeats),                 # [1, C] @ [C, N/C]
             E.nbytes / median_time(lambda: np.einsum("c,cn->n", e, E), repeats))   # -> [512]
    BANDWIDTHS[:] = rates
    return max(rates)


def kernel_rates() -> str:
    """The last bandwidth call's rates: "dot 25.1, reduce 24.0, …" (GB/s)."""
    return ", ".join(f"{k} {r / 1e9:.1f}" for k, r in zip(BANDWIDTH_KERNELS, BANDWIDTHS))


def weight_products(model, ids) -> float:
    """Seconds for the prefill's weight products alone: every block matrix times the [T, C]
    activations, and the LM head for the last row — the matrix-multiply (sgemm) floor under any
    prefill that computes exactly (attention, GELU and norms come on top)."""
    T, C = ids.shape[1], model.config.d_model
    x = np.random.default_rng(2).standard_normal((1, T, C), dtype=np.float32)   # [1, T, C]
    h = np.random.default_rng(3).standard_normal((1, T, model.config.d_ff), dtype=np.float32)
    p = model.params
    t = clock()
    for b in p.blocks:
        for w in (b.attn.wq, b.attn.wk, b.attn.wv, b.attn.wo, b.ffn.w_up):
            linear(x, w)                                            # [1, T, C] @ [C, ·]
        linear(h, b.ffn.w_down)                                     # [1, T, F] @ [F, C]
    linear(x[:, -1:], p.wte.T)                                      # [1, 1, C] @ [C, V]
    return clock() - t


def weight_bytes_per_token(model) -> int:
    p = model.params
    skip = p.wpe.nbytes if p.wpe is not None else 0                 # one row of wpe is read
    return 4 * model.num_parameters() - skip


class Decoder:
    """A cache prefilled once with ``context`` random tokens; ``steps(n)`` times n cached decode
    steps and rolls the cache back, so rounds at different contexts can be interleaved (under a
    shared, noisy machine the ratio of interleaved medians is what stays meaningful)."""

    def __init__(self, model, context: int, max_steps: int):
        self.model, self.context = model, context
        self.cache = KVCache(model.config, batch_size=1, capacity=context + max_steps)
        ids = np.random.default_rng(0).integers(0, CONFIG.vocab_size, (1, context))   # [1, context]
        model(ids, cache=self.cache, last_only=True)

    def steps(self, n: int) -> list[float]:
        times, token = [], np.array([[1]])                          # [1, 1]
        for _ in range(n):
            t = clock()
            logits = self.model(token, cache=self.cache, last_only=True)   # [1, 1, V]
            token = np.array([[int(np.argmax(logits[0, -1]))]])
            times.append(clock() - t)
        self.cache.rollback(self.context)
        return times


def no_cache_step_times(model, context: int, steps: int) -> list[float]:
    ids = list(np.random.default_rng(0).integers(0, CONFIG.vocab_size, context))
    times = []
    for _ in range(steps):
        t = clock()
        logits = model(np.array(ids)[None], last_only=True)         # the whole context again
        ids.append(int(np.argmax(logits[0, -1])))
        times.append(clock() - t)
    return times


class Torch:
    """HF GPT2LMHeadModel of the same shape (random init): ``generate`` and a 512-token prefill
    (``logits_to_keep=1``: like ``generate``'s own prefill and ours, only the last position's
    logits — the full [512, V] head would add ~40 GFLOP)."""

    def __init__(self, threads: int):
        import torch
        import transformers
        torch.set_num_threads(threads)
        self.torch = torch
        cfg = transformers.GPT2Config(vocab_size=CONFIG.vocab_size, n_positions=CONFIG.n_ctx,
                                      n_embd=CONFIG.d_model, n_layer=CONFIG.n_layers,
                                      n_head=CONFIG.n_heads)
        self.model = transformers.GPT2LMHeadModel(cfg).eval()
        self.prompt = torch.randint(0, CONFIG.vocab_size, (1, 16))
        self.long = torch.randint(0, CONFIG.vocab_size, (1, 512))
        self.generate(2)                                            # warm up

    def generate(self, n: int) -> float:
        """Seconds for greedy ``generate`` of n new tokens after the 16-token prompt."""
        t = clock()
        with self.torch.no_grad():
            self.model.generate(self.prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                pad_token_id=0, eos_token_id=None)
        return clock() - t

    def weight_products(self) -> float:
        """Seconds for torch's own weight products of the 512-token prefill alone (the same
        shapes as ``weight_products`` below: its sgemm floor)."""
        torch = self.torch
        x = torch.randn(1, 512, CONFIG.d_model)                    # [1, T, C]
        h = torch.randn(1, 512, 4 * CONFIG.d_model)                # [1, T, F]
        t = clock()
        with torch.no_grad():
            for b in self.model.transformer.h:                     # Conv1D weights are [in, out]
                for w in (b.attn.c_attn.weight, b.attn.c_proj.weight, b.mlp.c_fc.weight):
                    x @ w
                h @ b.mlp.c_proj.weight
            x[:, -1:] @ self.model.lm_head.weight.T
        return clock() - t

    def prefill(self) -> float:
        t = clock()
        with self.torch.no_grad():
            self.model(self.long, use_cache=True, logits_to_keep=1)   # last position only, as ours
        return clock() - t


def measure(model, threads: int, steps: int, rounds: int, with_torch: bool) -> dict:
    """Every figure for one thread count, in interleaved rounds; medians over the rounds."""
    short, long = Decoder(model, 16, steps), Decoder(model, 1000, steps)
    plain = Decoder(GPT(CONFIG, plain_params(model.params, CONFIG)), 16, steps)
    decode = to_engine(model, layout="decode")
    decode16 = Decoder(decode, 16, steps)
    torch_model = None
    if with_torch:
        try:
            torch_model = Torch(threads)
        except ImportError:
            pass
    ids512 = np.random.default_rng(1).integers(0, CONFIG.vocab_size, (1, 512))    # [1, 512]
    r = {k: [] for k in ("bw", "c16", "plain", "decode", "c1000", "nocache", "pre", "pre_decode",
                         "gemm", "tgen", "tgen1", "tpre", "tgemm")}
    for _ in range(rounds):
        r["bw"].append(bandwidth(1))
        r["c16"] += short.steps(steps)
        r["plain"] += plain.steps(steps)
        r["decode"] += decode16.steps(steps)
        r["c1000"] += long.steps(steps)
        r["nocache"] += no_cache_step_times(model, 16, max(2, steps // 4))
        t = clock()
        model(ids512, cache=KVCache(CONFIG, 1, 512), last_only=True)
        r["pre"].append(clock() - t)
        t = clock()
        decode(ids512, cache=KVCache(CONFIG, 1, 512), last_only=True)
        r["pre_decode"].append(clock() - t)
        r["gemm"].append(weight_products(model, ids512))
        if torch_model is not None:
            r["tgen"].append(torch_model.generate(steps + 1))
            r["tgen1"].append(torch_model.generate(1))
            r["tpre"].append(torch_model.prefill())
            r["tgemm"].append(torch_model.weight_products())
    m = {k: statistics.median(v) for k, v in r.items() if v}
    if torch_model is not None:
        m["torch"] = (m.pop("tgen") - m.pop("tgen1")) / steps      # seconds per decoded token
    return m


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (10⁶ bytes; Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def load_peak_rss_mb(model) -> float:
    """Save ``model`` and load it back in a fresh process: that process's peak RSS in MB.

    subtle: Linux carries ru_maxrss across fork and exec, so a child would report at least this
    process's peak; the child reads its own high-water mark (VmHWM) from /proc instead."""
    code = ("import sys; from minillm import GPT; GPT.from_pretrained(sys.argv[1]); "
            "line = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]; "
            "print(int(line.split()[1]) * 1024 / 1e6)")
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = subprocess.run([sys.executable, "-c", code, d], env=env, check=True,
                             capture_output=True, text=True)
    return float(out.stdout)


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    return "; ".join(f"{i['internal_api']} {i.get('version')} {i.get('architecture')} "
                     f"threads={i['num_threads']}" for i in threadpool_info())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=8, help="decode steps per round and setting")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurement rounds")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = parser.parse_args()
    global clock
    if args.clock == "cpu":
        clock = time.process_time
    from threadpoolctl import threadpool_limits
    print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"clock: {args.clock}")
    print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                              if k.startswith(("OPENBLAS", "OMP_", "MKL_"))) or "(no OPENBLAS_*/OMP_* set)"))
    t = time.perf_counter()
    arena = empty_arena(CONFIG, "rows")                   # the loaders' layout before "by_width"
    init_params(CONFIG, np.random.default_rng(0), params=arena.params)
    model = EngineGPT(CONFIG, arena)                    # (load_model now fills "by_width": arena.py)
    print(f"model: GPT-2 124M shape, {model.num_parameters():,} parameters (random init "
          f"{time.perf_counter() - t:.1f} s); weights read per token "
          f"{weight_bytes_per_token(model) / 1e6:.0f} MB")
    weights, after_init = model.num_parameters() * 4 / 1e6, peak_rss_mb()    # float32 MB, MB
    loaded = load_peak_rss_mb(model) if sys.platform == "linux" else float("nan")
    print(f"peak RSS       after the random init {after_init:.0f} MB = {after_init / weights:.2f}x "
          f"the {weights:.0f} MB of float32 weights; after from_pretrained in a fresh process "
          f"{loaded:.0f} MB = {loaded / weights:.2f}x (goal <= 1.3x)")
    for threads in args.threads:
        with threadpool_limits(threads):
            m = measure(model, threads, args.steps, args.rounds, not args.no_torch)
        bound = weight_bytes_per_token(model) / m["bw"]             # seconds per token
        c16, c1000 = m["c16"], m["c1000"]
        print(f"\n== {threads} thread(s)   (load average now {os.getloadavg()[0]:.1f})")
        print(f"bandwidth      {m['bw'] / 1e9:6.2f} GB/s  -> bound {1 / bound:6.1f} tok/s "
              f"({bound * 1e3:.1f} ms/token); last round: "
              f"{kernel_rates()} GB/s")
        print(f"cache@16       {1 / c16:6.1f} tok/s  ({c16 * 1e3:.1f} ms)  {100 * bound / c16:5.1f} % of the bound")
        print(f"cache@1000     {1 / c1000:6.1f} tok/s  ({c1000 * 1e3:.1f} ms)  {c1000 / c16:.2f}x the time at 16")
        print(f"decode layout  {1 / m['decode']:6.1f} tok/s  ({m['decode'] * 1e3:.1f} ms)  "
              f"the rows layout is {m['decode'] / c16:.2f}x faster; prefill 512 "
              f"{m['pre']:.2f} s rows, {m['pre_decode']:.2f} s decode layout")
        print(f"plain layout   {1 / m['plain']:6.1f} tok/s  ({m['plain'] * 1e3:.1f} ms)  "
              f"the rows layout is {m['plain'] / c16:.2f}x faster")
        print(f"no cache@16+   {1 / m['nocache']:6.1f} tok/s  ({m['nocache'] * 1e3:.1f} ms)  "
              f"the cache is {m['nocache'] / c16:.1f}x faster")
        if "torch" in m:
            print(f"torch generate {1 / m['torch']:6.1f} tok/s  ({m['torch'] * 1e3:.1f} ms)  "
                  f"minillm/torch = {m['torch'] / c16:.2f}x")
            print(f"prefill 512    minillm {m['pre']:.2f} s, torch {m['tpre']:.2f} s  "
                  f"minillm/torch = {m['tpre'] / m['pre']:.2f}x")
            print(f"  sgemm floor  the weight products alone take {m['gemm']:.2f} s in NumPy "
                  f"({m['gemm'] / m['pre']:.0%} of minillm's prefill), {m['tgemm']:.2f} s in torch; "
                  f"1.5x torch would need <= {m['tpre'] / 1.5:.2f} s")
        else:
            print(f"prefill 512    minillm {m['pre']:.2f} s (torch/transformers not installed)")


if __name__ == "__main__":
    main()
