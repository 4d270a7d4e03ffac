"""Training speed: tokens per second of minillm's NumPy trainer vs the same model in PyTorch (CPU).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_train.py [--threads 1] [--steps 12]
        [--vocab 2048 --layers 4 --d-model 128 --heads 4 --context 128 --batch 16]

One training step = forward, loss, backward and an AdamW update on a random batch. Both models
have the same shapes (GPT-2 style: learned positions, LayerNorm, tanh-GELU MLP, tied head), the
same float32 arithmetic and the same thread count. After two warm-up steps each, ``--rounds``
rounds alternate ``--steps`` NumPy steps and ``--steps`` torch steps (interleaved, so that a
change of machine load hits both); the figures are median step times and their ratio. torch is
optional: without it only the NumPy figure is printed.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minillm.config import ModelConfig  # noqa: E402
from minillm.model import GPT  # noqa: E402
from minillm.train.grad_model import loss_and_grads  # noqa: E402
from minillm.train.optim import AdamW, clip_grad_norm  # noqa: E402


def time_steps(step, n: int) -> list[float]:
    times = []
    for i in range(n):
        t = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - t)
    return times


def numpy_step_fn(config, batch):
    model = GPT(config, seed=0)
    opt = AdamW(model.params.named())
    rng = np.random.default_rng(0)

    def step(i):
        ids = rng.integers(0, config.vocab_size, (batch, config.n_ctx + 1))
        loss, grads = loss_and_grads(model.params, config, ids[:, :-1], ids[:, 1:])
        clip_grad_norm(grads, 1.0)
        opt.step(grads, 1e-3)
    return step, model


def torch_step_fn(config, numpy_model, batch):
    import torch
    import torch.nn.functional as F

    named = {k: torch.tensor(v, requires_grad=True) for k, v in numpy_model.params.named().items()}
    C, H, T = config.d_model, config.n_heads, config.n_ctx
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def ln(x, p):
        return F.layer_norm(x, (C,), named[p + ".weight"], named[p + ".bias"], config.norm_eps)

    def forward(ids):
        B = ids.shape[0]
        x = named["wte"][ids] + named["wpe"][:T]
        for i in range(config.n_layers):
            b = f"blocks.{i}."
            h = ln(x, b + "norm1")
            q, k, v = (h @ named[b + f"attn.w{n}"] + named[b + f"attn.b{n}"] for n in "qkv")
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            s = (q @ k.transpose(-1, -2)) / math.sqrt(C // H)
            o = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) @ v
            x = x + o.transpose(1, 2).reshape(B, T, C) @ named[b + "attn.wo"] + named[b + "attn.bo"]
            h = ln(x, b + "norm2")
            f = F.gelu(h @ named[b + "ffn.w_up"] + named[b + "ffn.b_up"], approximate="tanh")
            x = x + f @ named[b + "ffn.w_down"] + named[b + "ffn.b_down"]
        return ln(x, "norm_f") @ named["wte"].T

    decay = [p for k, p in named.items() if p.ndim >= 2]
    other = [p for k, p in named.items() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}], lr=1e-3, betas=(0.9, 0.95))
    g = torch.Generator().manual_seed(0)

    def step(i):
        ids = torch.randint(0, config.vocab_size, (batch, T + 1), generator=g)
        logits = forward(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, config.vocab_size), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(named.values(), 1.0)
        opt.step()
    return step


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
        return "; ".join(f"{d.get('internal_api')} {d.get('version')} ({d.get('num_threads')} threads)"
                         for d in threadpool_info())
    except ImportError:
        return "threadpoolctl not installed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=4, help="steps per round")
    ap.add_argument("--rounds", type=int, default=3)
    for name, default in (("vocab", 2048), ("layers", 4), ("d-model", 128), ("heads", 4),
                          ("context", 128), ("batch", 16)):
        ap.add_argument(f"--{name}", type=int, default=default)
    a = ap.parse_args()
    config = ModelConfig(vocab_size=a.vocab, n_ctx=a.context, d_model=a.d_model, n_heads=a.heads,
                         n_layers=a.layers, arch="gpt2")
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(a.threads)
    except ImportError:
        pass
    print(f"config: {config.n_layers} layers, d_model {config.d_model}, {config.n_heads} heads, "
          f"context {config.n_ctx}, vocab {config.vocab_size}, batch {a.batch}; threads {a.threads}")
    print(f"BLAS: {blas_info()}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    tokens = a.batch * a.context
    step, model = numpy_step_fn(config, a.batch)
    print(f"parameters: {model.num_parameters():,}; load average {os.getloadavg()[0]:.1f}")
    try:
        import torch
        torch.set_num_threads(a.threads)
        torch_step = torch_step_fn(config, model, a.batch)
    except ImportError:
        torch, torch_step = None, None
    times_np, times_torch = [], []
    time_steps(step, 2)                                   # warm-up
    if torch_step:
        time_steps(torch_step, 2)
    for _ in range(a.rounds):
        times_np += time_steps(step, a.steps)
        if torch_step:
            times_torch += time_steps(torch_step, a.steps)
    t_np = statistics.median(times_np)
    print(f"numpy : {t_np * 1000:8.1f} ms/step  {tokens / t_np:8,.0f} tokens/s")
    if torch_step is None:
        print("torch : not installed (skipped)")
        return
    t_torch = statistics.median(times_torch)
    print(f"torch : {t_torch * 1000:8.1f} ms/step  {tokens / t_torch:8,.0f} tokens/s  "
          f"(torch {torch.__version__})")
    print(f"numpy / torch speed: {t_torch / t_np:.2f}x  (load average {os.getloadavg()[0]:.1f})")

if __name__ == "__main__":
    main()
