"""The bound a one-token decode step is measured against, on this machine, in this run.

Decoding one token multiplies one row by every weight matrix: each weight is read from memory
once and used for 2 flops, so a step cannot take less than the time to stream the weights.
Two figures, both measured in the run that prints them:

- the step's weight products alone: one row times every matrix the engine's decode step reads
  (each layer's joined Q|K|V, wo, gate|up, w_down; the head), in the engine's own arena layout
  and by the engine's own form of each product (``rows.product``: its plan's, when one is used),
  the best of ``repeats`` passes — the step with nothing but its matrix products;
- the streaming rate: ``bench_decode.bandwidth`` (the best of five read-only kernels over 512 MB
  arrays), and the step time it implies for these bytes.

Used by bench_qwen3_decode.py and bench_gemma3_decode.py; timed by their clock (``--clock``).
"""
from __future__ import annotations

import numpy as np

from bench_decode import bandwidth
from bench_llamacpp import CLOCK

from minillm.engine.rows import product   # the engine's form of each product (its plan's)


def step_matrices(model) -> list[np.ndarray]:
    """The [C, N] matrices (views into the arena) one decode step multiplies a row by."""
    p, out = model.params, []
    for b, joined in zip(p.blocks, model.arena.joined):
        a, f = b.attn, b.ffn
        out += [joined.qkv] if joined.qkv is not None else [a.wq, a.wk, a.wv]
        out.append(a.wo)
        if joined.gate_up is not None:
            out.append(joined.gate_up)
        else:
            out += [w for w in (f.w_gate, f.w_up) if w is not None]
        out.append(f.w_down)
    out.append(p.wte.T if p.lm_head is None else p.lm_head)
    return out


def products_seconds(model, repeats: int) -> tuple[float, int]:
    """(best seconds of one pass of one row times every step matrix, bytes those matrices hold)."""
    mats = step_matrices(model)
    rng = np.random.default_rng(0)
    rows = {m.shape[0]: rng.standard_normal((1, m.shape[0]), dtype=np.float32) for m in mats}
    best = float("inf")
    for _ in range(repeats):
        t = CLOCK[0]()
        for m in mats:
            product(rows[m.shape[0]], m)                       # [1, C] @ [C, N] -> [1, N]
        best = min(best, CLOCK[0]() - t)
    return best, sum(m.size * m.itemsize for m in mats)


def bound_lines(model, repeats: int = 5) -> list[str]:
    """Two printable lines: the products alone, and the streaming rate's bound."""
    seconds, nbytes = products_seconds(model, repeats)
    rate = bandwidth(3)
    return [f"bound: the step's weight products alone (one row x {nbytes / 1e6:.0f} MB of "
            f"matrices, engine layout, best of {repeats}) {seconds * 1e3:.1f} ms = "
            f"{nbytes / seconds / 1e9:.2f} GB/s -> {1 / seconds:.1f} tokens/s",
            f"bound: streaming read {rate / 1e9:.2f} GB/s (bench_decode.bandwidth) -> "
            f"{nbytes / rate * 1e3:.1f} ms = {rate / nbytes:.1f} tokens/s for these bytes"]
