"""Induction heads (Olsson et al., 2022): heads that complete a pattern seen before —
"… A B … A" -> "B". They show plainly on a random sequence repeated twice: the first repeat is
unpredictable, the second can be copied, and the loss on it falls.

Two scores describe such a head. On ids = r ‖ r (r: n random tokens, after ``offset`` tokens
of prefix), a query at t = offset + n + i of the second repeat holds the token seen at t − n;
the token that FOLLOWED it sits at t − n + 1.

    prefix-matching score   = 1/n · Σ_{t ∈ second repeat} A[t, t − n + 1]

the attention weight (``blocks.ℓ.attn.hook_pattern``) the head puts on that key, averaged over
the repeat: 1 for a perfect induction head; a uniform head scores about 1/(number of keys).

    copying score           = Σ_i λ_i / Σ_i |λ_i|,   λ = eigenvalues of  W_E · W_V^h · W_O^h · W_U

the head's OV circuit [V, V] (token attended to -> logits it writes, with the gains of the norm
before attention and of the final norm; their per-position scales and centring left out, as in
Elhage et al. 2021). Positive eigenvalues raise the logit of the token attended to: a copying head
scores near 1, one that suppresses what it attends to near −1. The non-zero eigenvalues of
(W_E W_V)(W_O W_U) are those of (W_O W_U)(W_E W_V), a [D, D] matrix, so V never has to be squared.
"""
from __future__ import annotations

import numpy as np

from minillm.lens._runs import as_batch, cached


def repeated_random_tokens(vocab_size: int, n: int, *, batch: int = 1, seed: int = 0,
                           prefix=()) -> np.ndarray:
    """[batch, len(prefix) + 2n] int64: ``prefix`` (a BOS, say), then n tokens drawn uniformly
    from [0, vocab_size), then the same n again. Example: n=3 -> [7, 1, 4, 7, 1, 4]."""
    for name, value in (("vocab_size", vocab_size), ("n", n), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    r = np.random.default_rng(seed).integers(0, vocab_size, size=(batch, n))   # [batch, n]
    head = np.broadcast_to(np.asarray(prefix, dtype=np.int64), (batch, len(prefix)))
    return np.concatenate([head, r, r], axis=1).astype(np.int64)   # [batch, P + 2n]


def prefix_matching_score(pattern: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """pattern [..., T, S] (a head's attention weights) -> [...]: the mean weight a query of the
    second repeat puts on the key after its token's first occurrence (the formula above)."""
    T = pattern.shape[-2]
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 or offset < 0 \
            or offset + 2 * n > T:
        raise ValueError(f"n (the repeat's length) and offset must fit the {T} positions: "
                         f"offset + 2n ≤ {T}, got n={n!r}, offset={offset!r}")
    t = np.arange(offset + n, offset + 2 * n)                       # [n] queries of the second repeat
    S = pattern.shape[-1]
    return pattern[..., t, t - n + 1 + (S - T)].mean(-1)            # [..., n] -> [...]


def prefix_matching_scores(model, ids, n: int, offset: int = 0) -> np.ndarray:
    """ids [T] or [B, T] (from ``repeated_random_tokens``) -> [L, H]: every head's score,
    averaged over the batch."""
    ids = as_batch(ids)
    names = [f"blocks.{l}.attn.hook_pattern" for l in range(model.config.n_layers)]
    _, acts = cached(model, ids, names)
    return np.stack([prefix_matching_score(acts[name], n, offset).mean(0)
                     for name in names])                            # [L, B, H] -> [L, H]


def copying_scores(model) -> np.ndarray:
    """-> [L, H] float32: every head's copying score (the eigenvalue formula above)."""
    c, p = model.config, model.params
    head = p.wte.T if p.lm_head is None else p.lm_head              # [C, V] W_U
    UE = (p.norm_f.weight[:, None] * head) @ p.wte                  # [C, V] @ [V, C] -> [C, C]
    H, D, G = c.n_heads, c.d_head, c.n_heads // c.n_kv_heads
    scores = np.zeros((c.n_layers, H), dtype=np.float32)
    for l, bp in enumerate(p.blocks):
        gain = np.ones(c.d_model, np.float32) if c.post_norms else bp.norm1.weight   # [C]
        for h in range(H):
            kv = h // G                                             # the KV head h reads
            wv = gain[:, None] * bp.attn.wv[:, kv * D:(kv + 1) * D]  # [C, D]
            wo = bp.attn.wo[h * D:(h + 1) * D]                      # [D, C]
            ov = (wo @ UE @ wv).astype(np.float64)                  # [D, C][C, C][C, D] -> [D, D]
            lam = np.linalg.eigvals(ov)                             # [D] complex
            scores[l, h] = float(lam.real.sum() / max(np.abs(lam).sum(), 1e-30))
    return scores
