"""A mixture of experts: E SwiGLU FFNs in one layer, and a router that sends each token to k.

    p = softmax(x W_router)                  [N, C] @ [C, E] -> [N, E]: how well each expert fits
    top = the k experts of largest p         [N, k], best first
    w = p[top]   (÷ Σ p[top] when ``norm_topk_prob``: Mixtral always, Qwen3-MoE as its config says)
    MoE(x) = Σ_{e ∈ top} w_e · FFN_e(x)      FFN_e(x) = (SiLU(x W_gate[e]) ⊙ x W_up[e]) W_down[e]

The layer holds E FFNs' parameters but each token runs only k of them: Mixtral 8x7B holds 8
experts per layer and runs 2. The experts are stacked, ``w_gate`` / ``w_up`` [E, C, F] and
``w_down`` [E, F, C], as llama.cpp stores them (``ffn_gate_exps`` …); the router is [C, E].

Example: E = 4, k = 2, a token with p = [0.1, 0.5, 0.3, 0.1] goes to experts 1 and 2 with
weights 0.5 and 0.3 (renormalised: 0.625 and 0.375).

Ties: the k largest are taken by a stable sort of −p, so of two equal probabilities the lower
expert index wins. ``torch.topk`` documents no order for ties; the fixtures have none (their
script checks), so minillm and transformers pick the same experts there.

Two forms, tested equal (tests/model/test_moe.py): ``moe_loop``, the definition — every expert
on every token, weighted by the router (0 where it was not chosen) — and ``moe``, the gathered
form — the tokens grouped by expert, each expert run on its own tokens only (k/E of the work; what
the model and the engine run). Both add the experts in the order 0 … E − 1.
"""
from __future__ import annotations

import numpy as np

from minillm.functional import softmax
from minillm.model.ffn import swiglu
from minillm.model.linear import linear
from minillm.model.params import FFNParams


def route(x: np.ndarray, router: np.ndarray, k: int, renormalise: bool):
    """x [N, C] -> (experts [N, k] int, weights [N, k] float32): each token's k experts, best
    first, and the router's weight for each."""
    p = softmax(linear(x, router))                          # [N, C] @ [C, E] -> [N, E]
    top = np.argsort(-p, axis=-1, kind="stable")[:, :k]     # [N, k] (ties: the lower index)
    w = np.take_along_axis(p, top, axis=-1)                 # [N, k]
    if renormalise:
        w = w / w.sum(axis=-1, keepdims=True)               # [N, k], each row sums to 1
    return top, w


def expert(p, e: int) -> FFNParams:
    """Expert e's SwiGLU weights: views [C, F], [C, F], [F, C] of the stacks."""
    return FFNParams(w_up=p.w_up[e], w_down=p.w_down[e], w_gate=p.w_gate[e])


def moe_loop(x: np.ndarray, p, config) -> np.ndarray:
    """x [B, T, C] -> [B, T, C], the definition: Σ_e g_e · FFN_e(x) over ALL E experts, where
    g_e is the router's weight for e (0 for a token that did not choose e). E/k times the work."""
    B, T, C = x.shape
    x = x.reshape(B * T, C)                                 # [N, C]: tokens are independent here
    top, w = route(x, p.router, config.n_experts_used, config.norm_topk_prob)   # [N, k] each
    out = np.zeros_like(x)                                  # [N, C]
    for e in range(config.n_experts):
        g = np.where(top == e, w, 0.0).sum(axis=-1)         # [N, k] -> [N]: e's weight, or 0
        out += g[:, None] * swiglu(x, expert(p, e))         # [N, 1] · [N, C]
    return out.reshape(B, T, C)


def moe(x: np.ndarray, p, config, ffn=swiglu, look=lambda name, a: a) -> np.ndarray:
    """x [B, T, C] -> [B, T, C], the gathered form of ``moe_loop``: expert e runs on the rows
    routed to it only. ``ffn(x, params)`` is the expert's FFN (the engine passes its own);
    ``look`` the hook points of the router's choice and weights, [B, T, k] each (minillm/hooks.py)."""
    B, T, C = x.shape
    x = x.reshape(B * T, C)                                 # [N, C]
    k = config.n_experts_used
    top, w = route(x, p.router, k, config.norm_topk_prob)  # [N, k] each
    top = look("mlp.hook_expert_indices", top.reshape(B, T, k)).reshape(B * T, k)   # [N, k]
    w = look("mlp.hook_expert_weights", w.reshape(B, T, k)).reshape(B * T, k)       # [N, k]
    order = np.argsort(top.ravel(), kind="stable")          # [N·k] (token, slot) pairs by expert
    counts = np.bincount(top.ravel(), minlength=config.n_experts)   # [E] pairs per expert
    starts = np.cumsum(counts) - counts                     # [E] where each expert's run begins
    out = np.zeros_like(x)                                  # [N, C]
    for e in np.flatnonzero(counts):                        # (an expert no token chose: skipped)
        pairs = order[starts[e]:starts[e] + counts[e]]      # [n] expert e's (token, slot) pairs
        tokens = pairs // k                                 # [n] distinct: a token picks e once
        y = ffn(x[tokens], expert(p, e))                    # [n, C] -> [n, C]
        out[tokens] += w.ravel()[pairs, None] * y           # [n, 1] · [n, C]
    return out.reshape(B, T, C)
