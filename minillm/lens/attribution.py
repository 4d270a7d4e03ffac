"""Direct logit attribution: how much each layer (and each attention head) writes, directly, into
one logit.

The stream at the end is a sum of what every sub-layer added (the residual connections):

    h_L = h_0 + Σ_ℓ a_ℓ + Σ_ℓ f_ℓ           a_ℓ = attention ℓ's output, f_ℓ = FFN ℓ's
    a_ℓ = Σ_h z_ℓh · W_O[h] + b_O           each head's output before W_O, its rows of W_O

and logit_v = Norm_f(h_L) · u_v (u_v the head's column of token v). The final norm is not linear
— it divides by the position's scale σ — so the contributions are defined with σ FROZEN at the
clean run's value (TransformerLens's convention). Then Norm_f is linear in h and the sum is exact:

    LayerNorm: logit_v = Σ_c (x_c − mean(x_c)) · (w ⊙ u_v) / σ  +  b · u_v
    RMSNorm:   logit_v = Σ_c  x_c               · (w ⊙ u_v) / σ

over the components x_c (the embedding h_0, each a_ℓ, each f_ℓ; each head and b_O inside a_ℓ).
``norm_bias`` is the b · u_v term (0 for RMSNorm). Each a_ℓ and f_ℓ is read as the stream's
difference across the sub-layer (resid_mid − resid_pre, resid_post − resid_mid): exactly what
was added, in every family (OLMo 2 and Gemma add a normalised output). The per-head split needs
the head outputs to reach the stream linearly: with a norm after attention (OLMo 2, Gemma) it is
not defined and ``heads`` is None. A soft-capped head (Gemma 2) is not linear: refused.

Example: ``a = direct_logit_attribution(model, ids, token=paris)``; ``a.ffn.argmax()`` is the FFN
that pushes " Paris" most; ``a.total() == a.logit`` up to float32 rounding.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minillm.lens._runs import as_batch, cached


@dataclass
class Attribution:
    """One logit split into direct contributions (floats; arrays are [L] or [L, H])."""
    logit: float                 # the model's logit of the token at the position
    embed: float                 # h_0: the embeddings (and positions)
    attn: np.ndarray             # [L] each attention sub-layer
    ffn: np.ndarray              # [L] each FFN (or mixture of experts)
    norm_bias: float             # b · u_v, the final LayerNorm's bias (0 for RMSNorm)
    heads: np.ndarray | None     # [L, H] each head (attn = heads.sum(1) + attn_bias), or None
    attn_bias: np.ndarray | None  # [L] W_O's bias b_O (zeros without one), or None with heads

    def total(self) -> float:
        """embed + Σ attn + Σ ffn + norm_bias: equals ``logit`` (the frozen-scale identity)."""
        return float(self.embed + self.attn.sum() + self.ffn.sum() + self.norm_bias)


def direct_logit_attribution(model, ids, token: int, position: int = -1) -> Attribution:
    """ids [T] (one sequence), the token whose logit is split, the position whose logits (the
    prediction of the token after it) are read -> Attribution."""
    c, p = model.config, model.params
    ids = as_batch(ids)
    if ids.shape[0] != 1:
        raise ValueError(f"direct_logit_attribution takes one sequence, got {ids.shape[0]} rows")
    T = ids.shape[1]
    if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < c.vocab_size:
        raise ValueError(f"token must be an id in [0, {c.vocab_size}), got {token!r}")
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not -T <= position < T:
        raise ValueError(f"position must be an integer in [-{T}, {T}), got {position!r}")
    if c.final_softcap is not None:
        raise ValueError("direct logit attribution needs a linear readout; this model soft-caps "
                         "its logits (Gemma 2), which no frozen scale makes linear")
    L = c.n_layers
    per_head = not (c.post_norms or c.sandwich_norms)
    names = [f"blocks.{l}.{n}" for l in range(L)
             for n in ("hook_resid_pre", "hook_resid_mid", "hook_resid_post")]
    names += [f"blocks.{l}.attn.hook_z" for l in range(L)] if per_head else []
    logits, acts = cached(model, ids, names)
    at = lambda name: acts[name][0, position]                       # [C] (or [H, D]) at the position
    stream = [at(f"blocks.{l}.{n}") for l in range(L)
              for n in ("hook_resid_pre", "hook_resid_mid", "hook_resid_post")]
    h_L = stream[-1]                                                # [C] the final stream
    parts = np.stack([stream[0]] + [stream[3 * l + 1] - stream[3 * l] for l in range(L)]
                     + [stream[3 * l + 2] - stream[3 * l + 1] for l in range(L)])   # [1 + 2L, C]
    head = p.wte.T if p.lm_head is None else p.lm_head              # [C, V]
    u = p.norm_f.weight * head[:, token]                            # [C] w ⊙ u_v
    if c.norm == "layernorm":
        sigma = float(np.sqrt(h_L.var() + c.norm_eps))              # the frozen scale
        centre = lambda x: x - x.mean(-1, keepdims=True)            # [..., C] linear in x
        norm_bias = float(p.norm_f.bias @ head[:, token])
    else:
        sigma = float(np.sqrt(np.mean(h_L * h_L) + c.norm_eps))
        centre = lambda x: x
        norm_bias = 0.0
    direct = lambda x: centre(x) @ u / sigma                        # [..., C] -> [...]
    shares = direct(parts)                                          # [1 + 2L]
    heads = attn_bias = None
    if per_head:
        H, D = c.n_heads, c.d_head
        heads = np.stack([direct(np.einsum("hd,hdc->hc", at(f"blocks.{l}.attn.hook_z"),
                                           p.blocks[l].attn.wo.reshape(H, D, -1)))
                          for l in range(L)])                       # [H, D]·[H, D, C] -> [L, H]
        attn_bias = np.array([0.0 if p.blocks[l].attn.bo is None else direct(p.blocks[l].attn.bo)
                              for l in range(L)], dtype=np.float32)  # [L]
    return Attribution(logit=float(logits[0, position, token]), embed=float(shares[0]),
                       attn=shares[1:L + 1], ffn=shares[L + 1:], norm_bias=norm_bias,
                       heads=heads, attn_bias=attn_bias)
