"""The logit lens (nostalgebraist, 2020): read a middle layer's residual stream as if it were the
last one, through the final norm and the head.

    logits_ℓ = Norm_f(h_ℓ) · W_U          h_ℓ [T, C] the stream after ℓ blocks -> [T, V]
    probs_ℓ  = softmax(logits_ℓ)

h_0 is the embedding (the stream entering block 0), h_L the stream after the last block, so
logits_L are the model's own logits exactly: the lens is the model's last step applied early.
The question it answers: after how many blocks does the model's top guess already stand?

Example: for "The capital of France is", ``lens_table(model, ids)`` gives the top token of every
(layer, position); at the last position " Paris" reaches the top some layers before the end.
"""
from __future__ import annotations

import numpy as np

from minillm.functional import softmax
from minillm.lens._runs import cached
from minillm.model.linear import linear
from minillm.model.norm import norm
from minillm.model.variants import softcap


def residual_names(n_layers: int) -> list[str]:
    """The L + 1 streams the lens reads: before each block, then after the last one."""
    return [f"blocks.{l}.hook_resid_pre" for l in range(n_layers)] + \
        [f"blocks.{n_layers - 1}.hook_resid_post"]


def final_readout(model, resid: np.ndarray) -> np.ndarray:
    """resid [..., C] -> logits [..., V]: the model's final norm, head (and Gemma 2's soft-cap)."""
    c, p = model.config, model.params
    if resid.ndim < 1 or resid.shape[-1] != c.d_model:
        raise ValueError(f"resid must end in the model's width {c.d_model}, got shape {resid.shape}")
    x = norm(resid, p.norm_f, c.norm, c.norm_eps)                   # [..., C]
    head = p.wte.T if p.lm_head is None else p.lm_head              # [C, V]
    logits = linear(x, head)                                        # [..., C] @ [C, V] -> [..., V]
    if c.final_softcap is not None:
        logits = softcap(logits, c.final_softcap)                   # [..., V] within ±cap
    return logits


def logit_lens(model, ids, *, probs: bool = False) -> np.ndarray:
    """ids [T] or [B, T] -> [L + 1, T, V] (or [L + 1, B, T, V]): row ℓ is the readout of the
    stream after ℓ blocks (row 0 the embeddings, row L the model's logits). ``probs=True``
    gives softmax(logits) instead."""
    names = residual_names(model.config.n_layers)
    _, acts = cached(model, ids, names)                             # each [B, T, C]
    out = np.stack([final_readout(model, acts[n]) for n in names])  # [L + 1, B, T, V]
    if np.ndim(ids) == 1:
        out = out[:, 0]                                             # [L + 1, T, V]
    return softmax(out) if probs else out


def lens_table(model, ids) -> tuple[np.ndarray, np.ndarray]:
    """ids [T] -> (top ids [L + 1, T] int, their probabilities [L + 1, T] float32): the table
    ``python -m minillm lens`` prints. Row ℓ, column t: the lens's best guess for the token
    after position t, read after ℓ blocks."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"lens_table takes one sequence of ids [T], got shape {ids.shape}")
    p = logit_lens(model, ids, probs=True)                          # [L + 1, T, V]
    top = p.argmax(-1)                                              # [L + 1, T]
    return top, np.take_along_axis(p, top[..., None], -1)[..., 0]   # [L + 1, T] each
