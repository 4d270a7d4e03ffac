"""Random initialisation in GPT-2's scheme.
Where it runs — shared (train's first weights and GPT(config, seed=…), run by `train`, never by a loaded model): init_params.

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
from minillm.model.params import GPTParams, empty_params


def init_params(config: ModelConfig, rng: np.random.Generator, std: float = 0.02,
                params: GPTParams | None = None) -> GPTParams:
    """Random parameters in GPT-2's scheme: weights ~ N(0, 0.02²), the two projections that write
    into the residual stream (``wo``, ``w_down``) scaled by 1/√(2L) so the stream's variance does
    not grow with depth; biases 0; norm gains 1. Drawn into ``params`` (default: new float32
    arrays, ``empty_params``) through ``w[...] = …`` only, so the same seed gives the same values
    in whatever ``params`` is made of.

    Example: ``GPT(config, init_params(config, np.random.default_rng(0)))`` — the same seed gives
    the same model (``GPT(config, seed=0)`` does exactly this).
    """
    params = empty_params(config) if params is None else params
    resid_std = std / math.sqrt(2 * config.n_layers)

    def normal(w, s=std):                            # float32 draws, ~1 MB of rows at a time, in
        rows = max(1, (1 << 18) // w.shape[-1])      # row order: the draws of one whole-matrix call
        if w.ndim == 3:                              # (a stack of experts: one matrix at a time)
            return [normal(m, s) for m in w]
        for r in range(0, w.shape[0], rows):
            w[r:r + rows] = rng.standard_normal((min(rows, w.shape[0] - r), w.shape[1]),
                                                dtype=np.float32) * np.float32(s)

    for w in params.named().values():
        if w.ndim == 1:
            w[...] = 0.0                             # biases 0 (and gains, set just below)
    for n in [params.norm_f, *(b_norm for b in params.blocks for b_norm in (b.norm1, b.norm2,
              b.post_attn_norm, b.post_ffn_norm) if b_norm is not None)]:
        n.weight[...] = 1.0                          # norm gains 1
    for b in params.blocks:
        for gain in (b.attn.q_norm, b.attn.k_norm):
            if gain is not None:
                gain[...] = 1.0                      # (Qwen3's per-head q and k norms too)
    for b in params.blocks:                          # the draw order fixes what a seed means
        for w in (b.attn.wq, b.attn.wk, b.attn.wv):
            normal(w)
        normal(b.attn.wo, resid_std)
        normal(b.ffn.w_up)
        normal(b.ffn.w_down, resid_std)
        if b.ffn.w_gate is not None:
            normal(b.ffn.w_gate)
        if b.ffn.router is not None:
            normal(b.ffn.router)
    normal(params.wte)
    if params.wpe is not None:
        normal(params.wpe, 0.01)
    if params.lm_head is not None:
        normal(params.lm_head)
    return params
