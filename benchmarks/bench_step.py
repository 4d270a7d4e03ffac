"""Where one decode step's time goes: a per-component table of bytes read and time.

    /work/venv/bin/python benchmarks/bench_step.py [--steps 16] [--rounds 5] [--contexts 16 1000]

For a GPT-2-124M-shaped and a SmolLM2-135M-shaped engine model (random float32 weights, the
loaders' "rows" layout), one thread: every function a decode step calls is wrapped in a timer
while ``steps`` greedy steps run at each context, and the table gives, per component, the calls
per step, the time per step (median over rounds), the bytes it must read (the weights it
multiplies by; for attention the cached K and V; for the KV-cache writes what they write), the
rate that makes, and its share of the step. "the rest" is the step minus every timed component:
the Python between them (the forward's loop, reshapes, the mask, the input checks). The bound is
the weights' bytes over the best streaming rate this run measures (bench_decode's five kernels);
a component at the bound's rate is done. The sampler is timed apart (greedy argmax, and the
"chat" preset's sample) on the step's logits.

The wrapping adds ~0.3 µs per call (two clock reads); the step without wrappers is printed too.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_decode import CONFIG as GPT2, bandwidth, blas_info  # noqa: E402

import minillm.engine.gpt as engine_gpt  # noqa: E402
import minillm.engine.layers as layers  # noqa: E402
from minillm import KVCache, ModelConfig, Sampler  # noqa: E402
from minillm.engine import empty_arena  # noqa: E402
from minillm.engine import EngineGPT  # noqa: E402
from minillm.model.init import init_params  # noqa: E402

SMOLLM2 = ModelConfig(vocab_size=49152, n_ctx=2048, d_model=576, n_heads=9, n_layers=30,
                      arch="llama", n_kv_heads=3, d_ff=1536, norm_eps=1e-5, rope_theta=100000.0)
clock = time.perf_counter


class Timers:
    """Wraps module-level functions; ``spent[name]`` seconds and ``calls[name]``, ``moved[name]``
    bytes, accumulated while ``on``."""

    def __init__(self):
        self.spent, self.calls, self.moved = defaultdict(float), defaultdict(int), defaultdict(int)
        self.undo = []

    def wrap(self, module, attr: str, name_of, bytes_of=lambda *a: 0):
        real = getattr(module, attr)

        def timed(*args, **kwargs):
            t = clock()
            out = real(*args, **kwargs)
            name = name_of(*args)
            self.spent[name] += clock() - t
            self.calls[name] += 1
            self.moved[name] += bytes_of(*args)
            return out
        setattr(module, attr, timed)
        self.undo.append((module, attr, real))

    def restore(self):
        for module, attr, real in reversed(self.undo):
            setattr(module, attr, real)

    def reset(self):
        self.spent.clear(), self.calls.clear(), self.moved.clear()


def product_names(model) -> dict[tuple, str]:
    """Which weight a ``linear`` call multiplies by, from its shape."""
    c, b, j = model.config, model.params.blocks[0], model.arena.joined[0]
    names = {tuple(b.attn.wo.shape): "wo product", tuple(b.ffn.w_down.shape): "w_down product",
             (c.d_model, c.vocab_size): "LM head product"}
    names[tuple(j.qkv.shape) if j.qkv is not None else tuple(b.attn.wq.shape)] = "Q|K|V product"
    up = j.gate_up if j.gate_up is not None else b.ffn.w_up
    names[tuple(up.shape)] = "gate|up product" if c.ffn == "swiglu" else "w_up product"
    return names


def instrument(model) -> Timers:
    names, tm = product_names(model), Timers()
    nbytes = lambda x, w, b=None: w.nbytes + (b.nbytes if b is not None else 0)   # noqa: E731
    for module in (layers, engine_gpt):
        tm.wrap(module, "linear", lambda x, w, b=None: names.get(tuple(w.shape), "other product"), nbytes)
        tm.wrap(module, "norm_fast", lambda *a: "norms")
    tm.wrap(layers, "scaled_dot_product", lambda *a: "attention over the cache",
            lambda q, k, v, *rest: k.nbytes + v.nbytes)
    tm.wrap(layers, "apply_rope", lambda *a: "RoPE")
    tm.wrap(layers, "split_heads", lambda *a: "split / merge heads")
    tm.wrap(layers, "merge_heads", lambda *a: "split / merge heads")
    tm.wrap(layers, "split_columns", lambda *a: "split joined outputs")
    tm.wrap(layers, "gelu_tanh_fast", lambda *a: "activation")
    tm.wrap(layers, "silu_fast", lambda *a: "activation")
    tm.wrap(engine_gpt, "embed", lambda *a: "embedding", lambda wte, ids, *r: ids.size * wte.shape[1] * 4)
    tm.wrap(engine_gpt, "rope_angles", lambda *a: "RoPE")
    store = KVCache.store                                       # a method: wrapped by hand

    def timed_store(cache, layer, k, v):
        t = clock()
        out = store(cache, layer, k, v)
        tm.spent["KV-cache writes"] += clock() - t
        tm.calls["KV-cache writes"] += 1
        tm.moved["KV-cache writes"] += k.nbytes + v.nbytes
        return out
    KVCache.store = timed_store
    tm.undo.append((KVCache, "store", store))
    return tm


def decode_steps(model, context: int, steps: int):
    """A cache after ``context`` random tokens; ``run()`` times ``steps`` greedy steps (then rolls
    back) and returns the per-step times and the last logits."""
    cache = KVCache(model.config, 1, context + steps)
    ids = np.random.default_rng(0).integers(0, model.config.vocab_size, (1, context))
    model(ids, cache=cache, last_only=True)

    def run():
        times, token = [], np.array([[1]])
        for _ in range(steps):
            t = clock()
            logits = model(token, cache=cache, last_only=True)
            token = np.array([[int(np.argmax(logits[0, -1]))]])
            times.append(clock() - t)
        cache.rollback(context)
        return times, logits[0, -1]
    return run


def report(label: str, config: ModelConfig, contexts, steps: int, rounds: int, bw: float):
    arena = empty_arena(config, "rows")
    init_params(config, np.random.default_rng(0), params=arena.params)
    model = EngineGPT(config, arena)
    weights = 4 * model.num_parameters() - (model.params.wpe.nbytes if model.params.wpe is not None else 0)
    print(f"\n== {label}: {model.num_parameters():,} parameters, {weights / 1e6:.0f} MB read per "
          f"token; bound {bw / weights:.1f} tok/s ({weights / bw * 1e3:.1f} ms) at {bw / 1e9:.1f} GB/s")
    for context in contexts:
        run = decode_steps(model, context, steps)
        plain = []
        for _ in range(rounds):
            plain += run()[0]
        tm = instrument(model)
        per_round, wrapped = [], []
        try:
            for _ in range(rounds):
                tm.reset()
                times, logits = run()
                wrapped += times
                per_round.append((statistics.mean(times), {k: v / steps for k, v in tm.spent.items()},
                                  {k: v // steps for k, v in tm.moved.items()},
                                  {k: v // steps for k, v in tm.calls.items()}))
        finally:
            tm.restore()
        step, step_wrapped = statistics.median(plain), statistics.median(wrapped)
        spent = {k: statistics.median(r[1].get(k, 0.0) for r in per_round) for k in per_round[0][1]}
        moved, calls = per_round[-1][2], per_round[-1][3]
        rest = statistics.median(r[0] - sum(r[1].values()) for r in per_round)   # within each round
        print(f"\ncontext {context}: step {step * 1e3:.2f} ms unwrapped ({1 / step:.1f} tok/s, "
              f"{100 * weights / bw / step:.0f} % of the bound), {step_wrapped * 1e3:.2f} ms wrapped")
        print(f"  {'component':26s} {'calls':>5s} {'ms/step':>8s} {'MB':>8s} {'GB/s':>6s} {'share':>6s}")
        for name in sorted(spent, key=spent.get, reverse=True):
            rate = moved[name] / spent[name] / 1e9 if moved[name] and spent[name] else float("nan")
            print(f"  {name:26s} {calls[name]:5d} {spent[name] * 1e3:8.3f} {moved[name] / 1e6:8.2f} "
                  f"{rate:6.1f} {100 * spent[name] / step_wrapped:5.1f}%")
        print(f"  {'the rest (Python between)':26s} {'':5s} {rest * 1e3:8.3f} {'':8s} {'':6s} "
              f"{100 * rest / step_wrapped:5.1f}%")
        greedy = statistics.median(timed(lambda: int(np.argmax(logits)), 50))
        chat_sampler, rng = Sampler.from_preset("chat"), np.random.default_rng(0)
        chat = statistics.median(timed(lambda: chat_sampler.sample(logits, rng), 50))
        print(f"  sampler, apart: greedy argmax {greedy * 1e3:.3f} ms, the \"chat\" preset "
              f"{chat * 1e3:.3f} ms ({100 * chat / step:.1f} % of a step)")


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = clock()
        fn()
        out.append(clock() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--contexts", type=int, nargs="+", default=[16, 1000])
    parser.add_argument("--skip-smollm2", action="store_true")
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1):
        print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items() if k.startswith(("OPENBLAS", "OMP_")))
                         or "(no OPENBLAS_*/OMP_* set)"))
        bw = bandwidth(5)
        report("GPT-2-124M shape", GPT2, args.contexts, args.steps, args.rounds, bw)
        if not args.skip_smollm2:
            report("SmolLM2-135M shape", SMOLLM2, args.contexts, args.steps, args.rounds, bw)
        print(f"\n(load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
