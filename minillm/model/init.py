"""Random initialisation in GPT-2's scheme, drawn straight into a parameter arena.

    W ~ N(0, 0.02²)   every weight matrix and the embeddings (wpe: N(0, 0.01²))
    W ~ N(0, (0.02/√(2L))²)   wo and w_down, the two products that write into the residual stream
    b = 0, g = 1      biases and norm gains

Why 1/√(2L): each of the L blocks adds two terms to the residual stream; scaled so, the stream's
variance stays about the same at every depth instead of growing with L.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.config import ModelConfig
from minillm.model.arena import empty_arena
from minillm.model.params import GPTParams


def init_params(config: ModelConfig, rng: np.random.Generator, std: float = 0.02,
                layout: str = "plain") -> GPTParams:
    """Random parameters in GPT-2's scheme: weights ~ N(0, 0.02²), the two projections that write
    into the residual stream (``wo``, ``w_down``) scaled by 1/√(2L) so the stream's variance does
    not grow with depth; biases 0; norm gains 1. Drawn straight into a fresh parameter arena
    (``arena.empty_arena``): no second copy is ever made. ``layout`` "plain" (every tensor
    C-contiguous: training, flat views), "decode" or "tiled" (faster decoding); the same seed
    gives the same values in every layout.

    Example: ``GPT(config, init_params(config, np.random.default_rng(0)))`` — the same seed gives
    the same model (``GPT(config, seed=0)`` does exactly this).
    """
    params = empty_arena(config, layout)            # "plain": flat views work; the others decode faster
    resid_std = std / math.sqrt(2 * config.n_layers)

    def normal(w, s=std):                            # float32 draws into w: no float64 copy
        if isinstance(w, np.ndarray) and w.flags.c_contiguous:
            rng.standard_normal(out=w, dtype=np.float32)
            w *= np.float32(s)
            return      # subtle: drawing straight into a view laid out for decoding (arena.py)
        rows = max(1, (1 << 18) // w.shape[-1])      # would fill it in ITS memory order (same
        for r in range(0, w.shape[0], rows):         # seed, another model): ~1 MB row blocks
            w[r:r + rows] = rng.standard_normal((min(rows, w.shape[0] - r), w.shape[1]),
                                                dtype=np.float32) * np.float32(s)

    for w in params.named().values():
        if w.ndim == 1:
            w[...] = 0.0                             # biases 0 (and gains, set just below)
    for n in [params.norm_f, *(b_norm for b in params.blocks for b_norm in (b.norm1, b.norm2))]:
        n.weight[...] = 1.0                          # norm gains 1
    for b in params.blocks:                          # the draw order fixes what a seed means
        for w in (b.attn.wq, b.attn.wk, b.attn.wv):
            normal(w)
        normal(b.attn.wo, resid_std)
        normal(b.ffn.w_up)
        normal(b.ffn.w_down, resid_std)
        if b.ffn.w_gate is not None:
            normal(b.ffn.w_gate)
    normal(params.wte)
    if params.wpe is not None:
        normal(params.wpe, 0.01)
    if params.lm_head is not None:
        normal(params.lm_head)
    return params
