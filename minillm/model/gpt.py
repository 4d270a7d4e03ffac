"""The GPT model: token ids in, next-token logits out.

    h₀ = Embed(ids)                            [B, T] -> [B, T, C]
    hₗ = Block_l(hₗ₋₁)     for l = 1 … L       attention + FFN, with residuals
    logits = Norm_f(h_L) · wteᵀ                [B, T, C] -> [B, T, V]   (tied LM head)

``logits[b, t]`` scores every vocabulary entry as the token that follows ``ids[b, :t+1]``. One call
computes this for *every* position at once — that is how training sees a whole sequence in one
parallel pass (``loss``) — while generation, which needs the token at t before it can ask about
t + 1, calls the model once per new token (with a KV cache, on that one token only).

GPT-2 and the Llama family are two settings of this one model (see ``ModelConfig``): learned
positions or RoPE, LayerNorm or RMSNorm, GELU MLP or SwiGLU, full or grouped-query attention.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.functional import cross_entropy
from minillm.model.attention import causal_mask
from minillm.model.block import block
from minillm.model.embedding import embed
from minillm.model.norm import norm
from minillm.model.params import GPTParams, init_params
from minillm.model.rope import rope_tables


class GPT:
    """A decoder-only transformer. ``GPT(config, seed=0)`` makes a randomly initialised one;
    ``GPT.from_pretrained(path)`` loads a Hugging Face checkpoint directory.

    Example: ``logits = GPT(config)(np.array([1, 2, 3]))`` -> [3, V] float32.
    """

    def __init__(self, config: ModelConfig, params: GPTParams | None = None, seed: int = 0):
        self.config = config
        params = params if params is not None else init_params(config, np.random.default_rng(seed))
        if not params.in_one_block():      # one contiguous arena: decoding streams it ~1.4x faster
            params = GPTParams.from_named(params.named(), config)
        self.params = params
        if config.position == "rope":       # one table for every position the model can see
            self.rope_cos, self.rope_sin = rope_tables(config.n_ctx, config.d_head, config.rope_theta, grow=True)

    # ---- the forward pass -----------------------------------------------------------------
    def __call__(self, ids, cache=None, attention_mask=None, return_attention: bool = False,
                 last_only: bool = False):
        """ids [T] or [B, T] int -> logits [T, V] or [B, T, V] float32.

        cache: a ``KVCache``; the ids continue what it holds (positions and mask are offset).
        attention_mask: [B, T] bool, False for padding tokens (left padding in a batch of prompts
            of different lengths); padded keys are never attended and positions skip them.
        return_attention: also return each layer's weights, a list of [B, H, T, S]. (Without it,
            long inputs take attention.query_blocks: the same logits up to float32 rounding.)
        last_only: compute logits for the last position only ([B, 1, V]) — all generation needs.
        """
        ids, squeeze = self._check_ids(ids, cache)
        B, T = ids.shape
        start = 0 if cache is None else cache.length
        S = start + T
        mask = causal_mask(T, S)[None]                                  # [1, T, S] lower-triangular
        if attention_mask is None and cache is not None and not cache.valid[:, :start].all():
            attention_mask = np.ones((B, T), dtype=bool)                # earlier padding still counts
        if attention_mask is not None:
            valid, positions = self._padding(attention_mask, cache, start, B, T)
            mask = mask & valid[:, None, :]                             # [B, T, S] no padded keys
            mask[:, np.arange(T), start + np.arange(T)] = True          # subtle: a padding query
            # must still see something (itself), or its softmax row would be all −∞ (NaN).
        else:
            positions = np.broadcast_to(np.arange(start, S), (B, T))    # [B, T]

        c, p = self.config, self.params
        x = embed(p.wte, ids, p.wpe, positions)                         # [B, T, C]
        rope = None
        if c.position == "rope":
            rope = (self.rope_cos[positions][:, None], self.rope_sin[positions][:, None])  # [B, 1, T, D/2]
        weights = []
        for layer, bp in enumerate(p.blocks):
            x, w = block(x, bp, c, mask, rope=rope, cache=cache, layer=layer,
                         need_weights=return_attention)                 # [B, T, C]
            if return_attention:
                weights.append(w)                                       # [B, H, T, S]
        if cache is not None:
            cache.advance(T)
        if last_only:
            x = x[:, -1:]                                               # [B, 1, C]
        x = norm(x, p.norm_f, c.norm, c.norm_eps)                       # [B, T, C]
        head = p.wte.T if p.lm_head is None else p.lm_head              # [C, V]
        logits = x @ head                                               # [B, T, C] @ [C, V] -> [B, T, V]
        if squeeze:
            logits = logits[0]                                          # [T, V]
            weights = [w[0] for w in weights]
        return (logits, weights) if return_attention else logits

    forward = __call__

    def loss(self, ids) -> float:
        """Mean next-token cross-entropy over every position, in ONE forward pass.

        For ids x₀ … x_T, position t's logits predict x_{t+1}:
            loss = −1/(B·T) Σ_b Σ_{t<T} log softmax(logits[b, t])[x_{t+1}]
        Example: for "I love coding", one pass scores "I"→"love" and "I love"→"coding" together.
        """
        ids, _ = self._check_ids(ids, None, targets=1)   # n_ctx inputs + the last one's target
        if ids.shape[1] < 2:
            raise ValueError("loss needs sequences of at least 2 tokens (an input and a target)")
        logits = self(ids[:, :-1])                                      # [B, T-1, V]
        return cross_entropy(logits, ids[:, 1:])                        # targets [B, T-1]

    # ---- input checks and padding ----------------------------------------------------------
    def _check_ids(self, ids, cache, targets: int = 0):
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"token ids must be integers, got dtype {ids.dtype}")
        if ids.ndim not in (1, 2) or ids.shape[-1] == 0:
            raise ValueError(f"token ids must have shape [T] or [B, T] with T ≥ 1, got {ids.shape}")
        if ids.min() < 0 or ids.max() >= self.config.vocab_size:
            raise ValueError(f"token ids must be in [0, {self.config.vocab_size}); got "
                             f"min {ids.min()}, max {ids.max()}")
        squeeze = ids.ndim == 1
        ids = ids[None] if squeeze else ids
        start = 0 if cache is None else cache.length
        if start + ids.shape[1] > self.config.n_ctx + targets:
            raise ValueError(f"{start + ids.shape[1]} positions exceed the context window "
                             f"n_ctx={self.config.n_ctx} ({start} cached + {ids.shape[1]} new)")
        if cache is not None:
            if cache.batch_size != ids.shape[0]:
                raise ValueError(f"the cache has {cache.batch_size} rows, the ids {ids.shape[0]}")
            cache.check_room(ids.shape[1])
        return ids.astype(np.int64, copy=False), squeeze

    @staticmethod
    def _padding(attention_mask, cache, start, B, T):
        """Key validity [B, S] and per-row positions [B, T] when rows carry padding.

        A row's position counts only its real tokens: with left padding ``[pad, pad, a, b]``,
        ``a`` sits at position 0, exactly as if the row had been run alone.
        """
        m = np.asarray(attention_mask, dtype=bool)
        if m.shape != (B, T):
            raise ValueError(f"attention_mask must have shape {(B, T)}, got {m.shape}")
        if cache is None:
            valid = m                                                   # [B, S = T]
            before = np.zeros(B, dtype=np.int64)                        # [B] nothing cached
        else:
            cache.valid[:, start:start + T] = m
            valid = cache.valid[:, :start + T]                          # [B, S]
            before = valid[:, :start].sum(axis=1)                       # [B] real tokens so far
        positions = before[:, None] + np.cumsum(m, axis=1) - 1          # [B, T]
        return valid, np.maximum(positions, 0)                          # padding sits at 0

    # ---- checkpoints ------------------------------------------------------------------------
    @classmethod
    def from_pretrained(cls, path: str | Path) -> "GPT":
        """Load a Hugging Face checkpoint directory (``config.json`` + ``model.safetensors``)."""
        from minillm.io.checkpoints import load_hf_checkpoint
        config, params = load_hf_checkpoint(path)
        return cls(config, params)

    def save_pretrained(self, path: str | Path) -> None:
        """Write ``config.json`` + ``model.safetensors`` in Hugging Face's layout and names."""
        from minillm.io.checkpoints import save_hf_checkpoint
        save_hf_checkpoint(path, self.config, self.params)

    def save_gguf(self, path: str | Path, tokenizer, dtype: str = "f32") -> Path:
        """Write one GGUF file (weights + ``tokenizer``) that llama.cpp and transformers load;
        dtype "f32", "f16" or "q8_0". See ``minillm/io/gguf_export.py``."""
        from minillm.io.gguf_export import save_gguf
        return save_gguf(path, self, tokenizer, dtype)

    def num_parameters(self) -> int:
        return sum(a.size for a in self.params.named().values())
