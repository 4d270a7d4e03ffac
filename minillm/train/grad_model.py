"""The whole model's loss and gradients: forward with caches, then the backward, layer by layer.

    h₀ = wte[ids] (+ wpe[0 … T−1], GPT-2)                  embedding
    hₗ = hₗ₋₁ + Attn(Norm₁(hₗ₋₁)) ;  hₗ ← hₗ + FFN(Norm₂(hₗ))  residual blocks
    logits = Norm_f(h_L) · head                            head = wteᵀ (tied) or lm_head (untied)
    loss = −1/N Σ log softmax(logits)[target]               all N = B·T positions at once
    loss = −Σ mₙ log pₙ / Σ mₙ                              with a loss mask m [B, T] (0/1):
                                                            the mean over the counted rows only

The backward walks the same list in reverse. Three rules cover everything:
- a residual ``y = x + f(x)`` passes dy straight through *and* adds f's backward: dx = dy + df;
- a lookup ``h = wte[ids]`` scatters: row ``ids[n]`` of ∂L/∂wte gains dh[n] (repeats add up);
- the tied head uses wte twice, so its gradient is the sum of the head's and the lookup's; an
  untied head ``logits = x lm_head`` is a plain product: ∂L/∂lm_head = xᵀ dlogits.

Cross-entropy and softmax are differentiated together (one pass over the logits):
    ∂loss/∂logits = (softmax(logits) − onehot(target)) / N

Both families are covered: GPT-2 (LayerNorm, GELU MLP, learned positions, one K/V head per query
head, biases) and the Llama family (RMSNorm, SwiGLU, RoPE, grouped-query attention, no biases;
Qwen2: Q, K, V biases). Each piece's backward is its own function (grad_norm: both norms;
grad_attention: multi-head and grouped-query, with grad_rope's inverse rotation; grad_ffn: both
FFNs); train/grads/block.py calls them in order for one block, and here the blocks run one
after the other (train/grads/checks.py: what training refuses first). RoPE has no parameters,
so the positions of a Llama model carry no gradient (GPT-2's ``wpe`` does: rows 0 … T−1 gain
the sum over the batch).

Layout choice: each layer's backward lives in train/ (grad_norm, grad_attention, grad_ffn) in a
module parallel to the forward in model/, not beside it: model/ stays the inference code a reader
learns first, and the training modules reuse those very functions for their forward (the caching
wrappers here and in grad_*.py call them), so there is still one forward.
"""
from __future__ import annotations

import numpy as np

from minillm.engine.ops import linear, norm_fast
from minillm.functional import log_softmax
from minillm.model.attention import causal_mask
from minillm.model.embedding import embed
from minillm.model.rope import rope_angles
from minillm.train.grad_norm import norm_backward
# (the block's forward and backward, and the checks, live in train/grads/; importable from here)
from minillm.train.grads.block import block_backward, block_forward  # noqa: F401
from minillm.train.grads.checks import TRAINABLE, check_trainable  # noqa: F401
from minillm.train.grads.checks import check_batch as _check_batch


def cross_entropy_with_grad(logits: np.ndarray, targets: np.ndarray, total: int | None = None
                            ) -> tuple[float, np.ndarray]:
    """logits [N, V], targets [N] -> (mean −log p(target), ∂loss/∂logits [N, V]) in one pass.

    The loss is the same number as ``minillm.functional.cross_entropy`` (mean taken in float64).
    ``total``: divide by it instead of N (these rows are a chunk of a mean over ``total`` rows).
    """
    N = logits.shape[0] if total is None else total
    logp = log_softmax(logits)                                          # [n, V]
    rows = np.arange(logits.shape[0])
    loss = float(-logp[rows, targets].astype(np.float64).sum() / N)
    dlogits = np.exp(logp)                                              # [n, V]  softmax
    dlogits[rows, targets] -= 1.0                                       # − onehot(target)
    dlogits *= 1.0 / N                                                  # the mean
    return loss, dlogits


def loss_and_grads(params, config, ids: np.ndarray, targets: np.ndarray,
                   loss_mask: np.ndarray | None = None, segments: np.ndarray | None = None,
                   frozen: bool = False) -> tuple[float, dict]:
    """ids, targets [B, T] int -> (mean next-token loss, {flat name: gradient}) — one forward,
    one backward. ``targets[b, t]`` is the token that should follow ``ids[b, :t+1]``.

    ``loss_mask`` [B, T] (0/1 or bool): which targets count; the mean is over those only, and
    only their rows go through the head (an uncounted position's logits would get a zero
    gradient: not computing them is the same arithmetic, and spares the [N, V] products).
    Right padding (any pad id, mask 0) changes nothing: under the causal mask no real position
    sees a later pad, and a pad's zero loss gradient reaches no weight (tested: a padded batch
    gives exactly the gradients of its rows taken one by one, weighted by their token counts).
    ``segments`` [B, T] (non-decreasing ints): several sequences packed in one row; attention
    stays inside each segment (block-diagonal causal mask) and positions restart at 0, so a
    packed row computes what its pieces would, each alone (``packed_attention``).
    ``frozen``: params marked by ``lora.adapters.frozen_params``; only the adapters' gradients.

    Example: ``loss, grads = loss_and_grads(model.params, model.config, w[:, :-1], w[:, 1:])``;
    ``grads`` has the keys (and shapes) of ``model.params.named()``.
    """
    check_trainable(config)
    _check_batch(ids, targets, config, loss_mask, segments)
    rows = None if loss_mask is None else np.flatnonzero(loss_mask.reshape(-1))   # [R] counted
    logits, cache = forward_with_cache(params, config, ids, segments, rows)   # [B, T, V] or [R, V]
    y = targets.reshape(-1) if rows is None else targets.reshape(-1)[rows]    # [N] or [R]
    loss, dlogits = cross_entropy_with_grad(logits.reshape(-1, logits.shape[-1]), y)
    return loss, backward(dlogits, cache, params, config, frozen)


def packed_attention(segments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """segments [B, T] -> (mask [B, T, T] bool, positions [B, T]): query t sees key s iff s ≤ t
    and both are in one segment; a position counts from its segment's start.

    Example: segments [[0, 0, 1]] -> positions [[0, 1, 0]]; token 2 sees only itself.
    """
    B, T = segments.shape
    same = segments[:, :, None] == segments[:, None, :]                 # [B, T, T]
    t = np.arange(T)
    starts = np.where(np.diff(segments, axis=1, prepend=segments[:, :1] - 1) != 0, t, 0)   # [B, T]
    starts = np.maximum.accumulate(starts, axis=1)                      # [B, T]  its segment's start
    return same & causal_mask(T, T)[None], t - starts                   # [B, T, T], [B, T]


def embed_inputs(params, config, ids: np.ndarray, segments: np.ndarray | None = None) -> tuple:
    """ids [B, T] -> (h₀ [B, T, C], attention mask [1 or B, T, T], positions [B, T], rope): what
    every block reads (rope: (cos, sin) [B, 1, T, D/2], or None for learned positions)."""
    B, T = ids.shape
    mask = causal_mask(T, T)[None]                                      # [1, T, T]
    positions = np.broadcast_to(np.arange(T), (B, T))                   # [B, T]
    if segments is not None:                                            # packed rows
        mask, positions = packed_attention(segments)                    # [B, T, T], [B, T]
    x = embed(params.wte, ids, params.wpe, positions)                   # [B, T, C]
    rope = None
    if config.position == "rope":                                       # the angles of 0 … T−1
        cos, sin = rope_angles(positions, config.d_head, config.rope_theta, config.rope_scaling)   # [B, T, D/2] each
        rope = (cos[:, None], sin[:, None])                             # [B, 1, T, D/2]: every head
    return x, mask, positions, rope


def forward_with_cache(params, config, ids: np.ndarray, segments: np.ndarray | None = None,
                       rows: np.ndarray | None = None) -> tuple[np.ndarray, tuple]:
    """ids [B, T] -> logits [B, T, V] (the same as ``GPT(config, params)(ids)``) and the cache.
    ``rows`` [R] (indices into the B·T positions, flattened): the logits of those only, [R, V]."""
    x, mask, positions, rope = embed_inputs(params, config, ids, segments)   # [B, T, C], …
    caches = []
    for bp in params.blocks:
        x, c = block_forward(x, bp, config, mask, rope)                 # [B, T, C]
        caches.append(c)
    xf = norm_fast(x, params.norm_f, config.norm, config.norm_eps)      # [B, T, C]
    head = params.wte.T if params.lm_head is None else params.lm_head   # [C, V]
    out = xf if rows is None else xf.reshape(-1, xf.shape[-1])[rows]    # [B, T, C] or [R, C]
    return linear(out, head), (ids, caches, x, xf, positions, rows)     # [B, T, V] or [R, V]


def backward(dlogits: np.ndarray, cache: tuple, params, config, frozen: bool = False) -> dict:
    """dlogits [N, V] (or [R, V]: the rows the forward kept) -> {flat name: gradient}, walking
    the model from the head to the embedding.

    ``frozen``: the base model is frozen (LoRA): no gradient for the embedding, the head and the
    norms (the head's and embedding's [V, C] products are skipped; the norms' [C] sums, which their
    backward yields beside the input's gradient, are dropped); the block projections give what
    their ``Frozen`` marks say (train/frozen.py: the adapters' gradients only)."""
    ids, caches, x, xf, positions, rows = cache
    B, T, C = x.shape
    grads: dict[str, np.ndarray] = {}
    xf2 = xf.reshape(-1, C) if rows is None else xf.reshape(-1, C)[rows]   # [N, C] or [R, C]
    if frozen:                                                          # only the input's gradient
        dxf = dlogits @ (params.wte if params.lm_head is None else params.lm_head.T)   # [N, C]
    elif params.lm_head is None:                                        # tied: logits = xf wteᵀ
        dwte = (xf2.T @ dlogits).T                                      # ([C, N] @ [N, V])ᵀ -> [V, C]
        # (computed as the head [C, V] and seen transposed: the layout the engine's arena gives wte)
        dxf = dlogits @ params.wte                                      # [N, V] @ [V, C] -> [N, C]
    else:
        dwte = np.zeros_like(params.wte)                                # [V, C]
        grads["lm_head"] = xf2.T @ dlogits                              # [C, N] @ [N, V] -> [C, V]
        dxf = dlogits @ params.lm_head.T                                # [N, V] @ [V, C] -> [N, C]
    if rows is not None:                                                # the other rows: zero
        dxf, kept = np.zeros((B * T, C), dxf.dtype), dxf                # [N, C]
        dxf[rows] = kept                                                # [R, C] into [N, C]
    dx, g = norm_backward(dxf.reshape(B, T, C), x, params.norm_f, config.norm, config.norm_eps)
    if not frozen:
        grads.update({f"norm_f.{k}": v for k, v in g.items()})          # [C] each
    for i in reversed(range(len(params.blocks))):
        dx = block_backward(dx, caches[i], params.blocks[i], config, grads, f"blocks.{i}.", frozen)
    if not frozen:
        embedding_grads(dx, ids, positions, params, dwte, grads)
    return grads


def embedding_grads(dx: np.ndarray, ids: np.ndarray, positions: np.ndarray, params,
                    dwte: np.ndarray, grads: dict) -> None:
    """dx = ∂L/∂h₀ [B, T, C] -> grads["wte"] (``dwte`` [V, C], the head's part when tied, plus the
    lookup's scattered rows) and, with learned positions, grads["wpe"]."""
    C = dx.shape[-1]
    np.add.at(dwte, ids.reshape(-1), dx.reshape(-1, C))                 # scatter rows: [N, C] -> [V, C]
    grads["wte"] = dwte
    if params.wpe is not None:                                          # learned positions (GPT-2)
        wpe = np.zeros_like(params.wpe)                                 # [n_ctx, C]
        np.add.at(wpe, positions.reshape(-1), dx.reshape(-1, C))        # [N, C] -> rows of [n_ctx, C]
        grads["wpe"] = wpe
