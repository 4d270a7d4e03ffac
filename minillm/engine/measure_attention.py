"""Timing the attention's form on this machine: how many queries ``query_blocks`` takes at once.

A prompt's attention (``layers.query_blocks``) computes a block of queries' scores at a time:
[B, H, block, S] instead of [B, H, T, S], skipping the keys the causal mask hides from the whole
block. A small block skips more of the masked triangle and keeps its scores in the cache; a large
one makes fewer, larger products. Which wins depends on the heads (H, KV, D), the CPU's caches and
the BLAS, so the plan times the candidate blocks for the model's heads on a 512-token prompt and
keeps the fastest — leaving the fixed QUERY_BLOCK (64) only for a win of more than MARGIN, as
for the products. On one machine (AMD EPYC, L2 1 MiB, quiet) SmolLM2's 9 heads of 64 took
7.1 / 6.2 / 6.3 / 7.0 ms in blocks of 16 / 32 / 64 / 128: 64 kept, no clear win:

    measure_attention((9, 3, 64)) -> {"block": 64, "ms": {"16": 7.1, "32": 6.2, "64": 6.3, "128": 7.0}}

The values are random normals (a softmax's time does not depend on them); each block's time is
the best of REPEATS calls, the blocks timed in turns.
"""
from __future__ import annotations

import time

import numpy as np

from minillm.engine.layers import QUERY_BLOCK, query_blocks
from minillm.engine.measure import MARGIN
from minillm.model.attention import causal_mask

BLOCKS = (16, 32, 64, 128)     # the candidate blocks
PROMPT = 512                   # the prompt length they are timed on
REPEATS = 3


def attention_heads(config) -> tuple[int, int, int]:
    """(H, KV, D) of ``config``: what the attention's time depends on."""
    return (config.n_heads, config.n_kv_heads, config.d_head)


def measure_attention(heads: tuple[int, int, int], prompt: int = PROMPT) -> dict:
    """{"block": the chosen block, "ms": {block: best milliseconds}} for one prompt of
    ``prompt`` tokens through ``query_blocks`` with heads (H, KV, D)."""
    H, KV, D = heads
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, H, prompt, D), dtype=np.float32)          # [1, H, T, D]
    k, v = (rng.standard_normal((1, KV, prompt, D), dtype=np.float32) for _ in range(2))
    mask = causal_mask(prompt, prompt)[None]                              # [1, T, T]
    best = {b: float("inf") for b in BLOCKS}
    for _ in range(REPEATS):
        for b in BLOCKS:                                                  # in turns
            t = time.perf_counter()
            query_blocks(q, k, v, mask, b)
            best[b] = min(best[b], time.perf_counter() - t)
    ms = {str(b): round(s * 1e3, 3) for b, s in best.items()}
    fastest = min(best, key=best.get)
    keep = best[fastest] * (1 + MARGIN) >= best[QUERY_BLOCK]               # not a clear win
    return {"block": QUERY_BLOCK if keep else fastest, "ms": ms}
