"""Activation recomputation: keep each block's input, recompute the block in the backward.

The plain step (grad_model.py) keeps every sub-layer's cache for the backward: per block the
norms' inputs, q, k, v, the attention weights P [B, H, T, T], the FFN's [N, F] activations — for
SmolLM2 at batch 4 × 128 about 18 MB a block, 550 MB for its 30 blocks. Here the forward keeps
only each block's input hₗ₋₁ [B, T, C] (1.2 MB a block) and the backward, block by block from
the top, recomputes that one block's forward from its input and then runs its backward:

    forward:   hₗ = Block_l(hₗ₋₁)                  keep hₗ₋₁ only, drop the cache
    backward:  for l = L … 1:   _, cacheₗ = Block_l(hₗ₋₁)       (recomputed: the same numbers)
                                dhₗ₋₁ = Block_l⁻ᵀ(dhₗ, cacheₗ)  (block_backward, unchanged)

A block's forward is a pure function of its input and weights, so the recomputed cache is the
very array the plain forward kept (bit for bit) and the gradients are the plain ones. The head
and loss run a chunk of rows at a time (chunked_head.py), so the [N, V] logits are never formed
either. Peak memory: the weights + L block inputs + ONE block's cache + one chunk's logits.

Cost: one more forward of the blocks per step (not of the head). By operation count that is at
most ~40% more (with frozen weights a block's backward costs about what its forward does); the
measured CPU time of a SmolLM2 LoRA step grew 15–25% at batch 4 × 128 and 40% at batch 1 × 128
(benchmarks/README.md, bench_lora_step.py --recompute).

Example: ``loss, grads = loss_and_grads_recompute(params, config, x, y, loss_mask=m)`` returns
what ``loss_and_grads(params, config, x, y, loss_mask=m)`` returns (tested equal).
"""
from __future__ import annotations

import numpy as np

from minillm.engine.ops import norm_fast
from minillm.train.grad_model import (_check_batch, block_backward, block_forward, check_trainable,
                                      embed_inputs, embedding_grads)
from minillm.train.grad_norm import norm_backward
from minillm.train.memory.chunked_head import CHUNK, chunked_head_loss


def forward_keeping_inputs(params, config, ids: np.ndarray, segments: np.ndarray | None = None,
                           keep: bool = True) -> tuple[np.ndarray, list, tuple]:
    """ids [B, T] -> (h_L [B, T, C], the blocks' inputs [h₀ … h_L₋₁] ([] unless ``keep``),
    (mask, positions, rope) as ``embed_inputs`` gives them); every block's cache is dropped."""
    x, mask, positions, rope = embed_inputs(params, config, ids, segments)   # [B, T, C]
    inputs = []                                                         # hₗ₋₁ of every block
    for bp in params.blocks:
        if keep:
            inputs.append(x)
        x, _ = block_forward(x, bp, config, mask, rope)                 # [B, T, C]; cache dropped
    return x, inputs, (mask, positions, rope)


def loss_and_grads_recompute(params, config, ids: np.ndarray, targets: np.ndarray,
                             loss_mask: np.ndarray | None = None,
                             segments: np.ndarray | None = None, frozen: bool = False,
                             chunk: int = CHUNK) -> tuple[float, dict]:
    """``loss_and_grads`` (same arguments, same result) keeping only the blocks' inputs and
    ``chunk`` rows of logits at a time."""
    check_trainable(config)
    _check_batch(ids, targets, config, loss_mask, segments)
    x, inputs, (mask, positions, rope) = forward_keeping_inputs(params, config, ids, segments)
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
        _, cache = block_forward(inputs[i], params.blocks[i], config, mask, rope)   # recomputed
        inputs[i] = None                                                # (kept in the cache now)
        dx = block_backward(dx, cache, params.blocks[i], config, grads, f"blocks.{i}.", frozen)
        del cache                                                       # before the next block's
    if not frozen:
        if not tied:
            grads["lm_head"] = dhead                                    # [C, V]
        dwte = dhead.T if tied else np.zeros_like(params.wte)           # [V, C]
        embedding_grads(dx, ids, positions, params, dwte, grads)
    return loss, grads
