"""Activation recomputation: keep each block's input, recompute the block in the backward.

The plain step (grad_model.py) keeps every sub-layer's cache for the backward: per block the
norms' inputs, q, k, v, the attention weights P [B, H, T, T], the FFN's [N, F] activations — for
SmolLM2 at batch 4 × 128 about 19.7 MB a block, 590 MB for its 30 blocks. Here the forward keeps
only each block's input hₗ₋₁ [B, T, C] and the backward, block by block from the top, recomputes
that one block's cache from its input and then runs its backward:

    forward:   hₗ = Block_l(hₗ₋₁)              keep hₗ₋₁ (and maybe the FFN's a, u), drop the rest
    backward:  for l = L … 1:   cacheₗ = Block_l's cache from hₗ₋₁     (recomputed: the same numbers)
                                dhₗ₋₁ = Block_l⁻ᵀ(dhₗ, cacheₗ)  (block_backward)

The recomputation stops before the block's last product: the backward needs the FFN's hidden
activations, not its output y = h W_down, so that [N, F] @ [F, C] product is skipped (and
SwiGLU's h is rebuilt inside its backward, lean_ffn.py).

Selective recomputation: the FFN's pre-activations (SwiGLU: a = x W_gate and u = x W_up; GELU
MLP: h = x W_up) cost the most to recompute for their memory (two of the block's seven
products, the largest), so the top blocks keep them from the first forward, as many as fit in
``keep`` × the weights' bytes (default ``KEEP`` = 0.3); those blocks recompute only the
attention side and the norms. Memory kept until the backward, per block (float32, N = B·T):

    the block's input hₗ₋₁            4·N·C bytes                  SmolLM2, N = 512:  1.18 MB
    + a and u (SwiGLU; GELU MLP: h)    4·2·N·F bytes (4·N·F)                          6.29 MB
    the plain step's whole cache       4·(4NC + 2N·H·D + 2N·KV·D + B·H·T² + 3NF)      19.7 MB

so SmolLM2 at 4 × 128 keeps 25 of its 30 blocks' a and u (157 MB, 0.3 × its 513 MB of weights).
Peak memory: the weights + L inputs + the kept a, u + ONE block's cache + one chunk of the head's
logits (chunked_head.py: the [N, V] logits are never formed either).

Cost, in multiply-adds of the products per block (frozen weights: the backward repeats the
forward's products once, for the input's gradient): the attention side N·C·(2H·D + 2KV·D) +
2B·H·T²·D, the FFN's gate and up 2N·C·F, its down N·F·C (SmolLM2, N = 512: 0.53 G, 0.91 G,
0.45 G; the head N·C·V = 14.5 G each way). A block recomputed whole repeats the first two, a
block with its a and u kept the first only: the step's products are 1.30× the plain step's
with keep = 0, 1.14× at the default (25 blocks keep), 1.11× when every block keeps. Measured
(benchmarks/README.md, "bench_lora_step.py"): a SmolLM2 LoRA step at 4 × 128 in 1.11× PyTorch's
time at 1 thread, 1.24–1.33× at 2, peaking at 1.64× the weights.

A block's forward is a pure function of its input and weights, so the recomputed cache is the
very array the plain forward kept (bit for bit), and the lean forms are the same float32
operations in the same order: the gradients are the plain ones, bit for bit when one chunk of
the head holds every row (tested; more chunks change only the order of the loss's float64 sum
and of the head gradient's, chunked_head.py).

Example: ``loss, grads = loss_and_grads_recompute(params, config, x, y, loss_mask=m)`` returns
what ``loss_and_grads(params, config, x, y, loss_mask=m)`` returns (tested equal).
"""
from __future__ import annotations

import math

import numpy as np

from minillm.engine.ops import norm_fast
from minillm.model.params import param_shapes
from minillm.train.grad_attention import attention_forward
from minillm.train.grad_model import (_check_batch, block_backward, block_forward, check_trainable,
                                      embed_inputs, embedding_grads)
from minillm.train.grad_norm import norm_backward
from minillm.train.memory.chunked_head import CHUNK, chunked_head_loss
from minillm.train.memory.lean_ffn import ffn_backward_lean, ffn_cache_lean

KEEP = 0.3          # the FFN activations kept: at most this fraction of the weights' bytes


def blocks_keeping(params, config, rows: int, keep: float) -> int:
    """How many blocks keep their FFN pre-activations: as many as fit in ``keep`` × the weights'
    bytes, 4·k·rows·F bytes a block (k = 2 for SwiGLU's a and u, 1 for the GELU MLP's h)."""
    if isinstance(keep, bool) or not isinstance(keep, (int, float)) or not keep >= 0:
        raise ValueError(f"keep must be a number >= 0 (a fraction of the weights' bytes), got {keep!r}")
    itemsize = params.wte.dtype.itemsize
    weights = itemsize * sum(math.prod(s) for s in param_shapes(config).values())
    per_block = itemsize * (2 if config.ffn == "swiglu" else 1) * rows * config.d_ff
    return int(min(config.n_layers, keep * weights / per_block))        # (keep = inf: every block)


def block_cache(x: np.ndarray, kept: tuple, bp, config, mask: np.ndarray, rope=None) -> tuple:
    """Block_l's cache for ``block_backward`` from its input x [B, T, C], recomputed (the FFN's
    pre-activations taken from ``kept`` when given); the block's output is not computed."""
    kind, eps = config.norm, config.norm_eps
    a, attn_cache = attention_forward(norm_fast(x, bp.norm1, kind, eps), bp.attn, config, mask,
                                      rope)                             # [B, T, C]
    x1 = x + a                                                          # [B, T, C]
    ffn_cache = ffn_cache_lean(norm_fast(x1, bp.norm2, kind, eps), bp.ffn, config.ffn, kept)
    return x, attn_cache, x1, ffn_cache


def forward_keeping_inputs(params, config, ids: np.ndarray, segments: np.ndarray | None = None,
                           keep: bool = True, n_kept: int = 0) -> tuple[np.ndarray, list, tuple]:
    """ids [B, T] -> (h_L [B, T, C], per block (hₗ₋₁, kept pre-activations or ()) ([] unless
    ``keep``), (mask, positions, rope) as ``embed_inputs`` gives them); the top ``n_kept``
    blocks keep their FFN's pre-activations, every other part of every cache is dropped."""
    x, mask, positions, rope = embed_inputs(params, config, ids, segments)   # [B, T, C]
    saved = []                                                          # (hₗ₋₁, kept) of every block
    first_kept = len(params.blocks) - n_kept
    for i, bp in enumerate(params.blocks):
        x_in = x
        x, cache = block_forward(x, bp, config, mask, rope)             # [B, T, C]
        if keep:                                                        # SwiGLU (x, a, u, h) -> (a, u);
            ffn = cache[3]                                              # GELU MLP (x, h, g) -> (h,)
            saved.append((x_in, (ffn[1:3] if config.ffn == "swiglu" else ffn[1:2])
                          if i >= first_kept else ()))
    return x, saved, (mask, positions, rope)


def loss_and_grads_recompute(params, config, ids: np.ndarray, targets: np.ndarray,
                             loss_mask: np.ndarray | None = None,
                             segments: np.ndarray | None = None, frozen: bool = False,
                             chunk: int = CHUNK, keep: float = KEEP) -> tuple[float, dict]:
    """``loss_and_grads`` (same arguments, same result) keeping only the blocks' inputs (and the
    FFN pre-activations of the top blocks, within ``keep`` × the weights' bytes: 0 recomputes
    every block whole) and ``chunk`` rows of logits at a time."""
    check_trainable(config)
    _check_batch(ids, targets, config, loss_mask, segments)
    n_kept = blocks_keeping(params, config, ids.size, keep)
    x, saved, (mask, positions, rope) = forward_keeping_inputs(params, config, ids, segments,
                                                               n_kept=n_kept)
    B, T, C = x.shape
    xf = norm_fast(x, params.norm_f, config.norm, config.norm_eps).reshape(-1, C)   # [N, C]
    rows = np.arange(B * T) if loss_mask is None else np.flatnonzero(loss_mask.reshape(-1))  # [R]
    tied = params.lm_head is None
    head = params.wte.T if tied else params.lm_head                     # [C, V]
    loss, dkept, dhead = chunked_head_loss(xf[rows], head, targets.reshape(-1)[rows], chunk,
                                           head_grad=not frozen)        # [R, C], [C, V]
    dxf = np.zeros_like(xf)                                             # [N, C]: uncounted rows 0
    dxf[rows] = dkept
    grads: dict[str, np.ndarray] = {}
    dx, g = norm_backward(dxf.reshape(B, T, C), x, params.norm_f, config.norm, config.norm_eps)
    if not frozen:
        grads.update({f"norm_f.{k}": v for k, v in g.items()})          # [C] each
    for i in reversed(range(len(params.blocks))):
        cache = block_cache(*saved[i], params.blocks[i], config, mask, rope)   # recomputed
        saved[i] = None                                                 # (kept in the cache now)
        dx = block_backward(dx, cache, params.blocks[i], config, grads, f"blocks.{i}.", frozen,
                            ffn_backward_lean)
        del cache                                                       # before the next block's
    if not frozen:
        if not tied:
            grads["lm_head"] = dhead                                    # [C, V]
        dwte = dhead.T if tied else np.zeros_like(params.wte)           # [V, C]
        embedding_grads(dx, ids, positions, params, dwte, grads)
    return loss, grads
