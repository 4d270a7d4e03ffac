"""The GPT model: token ids in, next-token logits out.
Where it runs — shared (EngineGPT is a subclass): GPT.__call__; copied (the engine's own: engine/gpt.py::EngineGPT.forward, tested equal in tests/engine/test_engine_equals_model.py): GPT.forward.

    h₀ = Embed(ids)                            [B, T] -> [B, T, C]
    hₗ = Block_l(hₗ₋₁)     for l = 1 … L       attention + FFN, with residuals
    logits = Norm_f(h_L) · wteᵀ                [B, T, C] -> [B, T, V]   (tied LM head)

``logits[b, t]`` scores every vocabulary entry as the token that follows ``ids[b, :t+1]``. One call
computes this for *every* position at once — that is how training sees a whole sequence in one
parallel pass (``loss``) — while generation, which needs the token at t before it can ask about
t + 1, calls the model once per new token (with a KV cache, on that one token only).

GPT-2 and the Llama family are two settings of this one model (see ``ModelConfig``): learned
positions or RoPE, LayerNorm or RMSNorm, GELU MLP or SwiGLU, full or grouped-query attention.
Mistral and Gemma add sliding-window layers, Gemma embeddings × √C and (Gemma 2) soft-capped logits.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.config import ModelConfig
from minillm.functional import cross_entropy
from minillm.model.block import block
from minillm.model.checks import check_ids, check_params, check_positions_and_mask
from minillm.model.embedding import embed
from minillm.model.linear import linear
from minillm.model.norm import norm
from minillm.model.init import init_params
from minillm.model.files import ModelFiles
from minillm.hooks import Hooked, Layer, keep, patterns
from minillm.model.params import GPTParams
from minillm.model.rope import rope_angles
from minillm.model.variants import is_sliding, sliding_inputs, softcap


class GPT(ModelFiles, Hooked):
    """A decoder-only transformer over plain float32 ndarrays. ``GPT(config, seed=0)`` makes a
    randomly initialised one; ``GPT(config, params)`` uses ``params`` AS GIVEN: the model reads
    those very arrays, so editing them afterwards changes the model.

    Example: ``logits = GPT(config)(np.array([1, 2, 3]))`` -> [3, V] float32.

    ``minillm.GPT`` is this class. Its file methods (``GPT.from_pretrained(path)``,
    ``save_pretrained``, ``save_gguf``) come from ``ModelFiles`` (model/files.py: files, not
    math); the input checks of ``__call__`` are in model/checks.py; ``run_with_cache`` and
    ``run_with_hooks`` (every activation by name, hooks that edit them) come from ``Hooked``
    (minillm/hooks.py). ``minillm/engine/`` runs the same math faster (``EngineGPT``, a
    subclass overriding ``forward``), and ``load_model(path)`` gives that one unless ``fast=False``.
    """

    def __init__(self, config: ModelConfig, params: GPTParams | None = None, seed: int = 0):
        self.config = config
        if params is None:
            params = init_params(config, np.random.default_rng(seed))
        check_params(params, config)
        self.params = params

    # ---- the forward pass -----------------------------------------------------------------
    def __call__(self, ids, cache=None, *, positions=None, mask=None, return_weights: bool = False,
                 last_only: bool = False):
        """ids [T] or [B, T] int -> logits [T, V] or [B, T, V] float32.

        cache: a ``KVCache``; the ids continue what it holds: S = cache.length + T keys.
        positions: [B, T] (or [T]) int, each token's position (default: cache.length + 0 … T − 1).
        mask: [B, T, S] bool (or [1, T, S] or [T, S]: one for every row), True where query t may
            see key s (default: ``causal_mask(T, S)``). It must be causal: no query sees a later key.
            ``minillm.decoding.batch.padded_inputs`` builds positions and mask for left-padded rows; a
            cache holding padding needs both (the defaults would count the padding).
        return_weights: also return each layer's attention weights, a list of [B, H, T, S].
        last_only: compute logits for the last position only ([B, 1, V]) — all generation needs.
        """
        ids, squeeze = check_ids(ids, self.config, cache)               # [B, T] int64
        B, T = ids.shape
        positions, mask = check_positions_and_mask(positions, mask, cache, self.config, B, T)
        logits, weights = self.forward(ids, positions, mask, cache, return_weights, last_only)
        if cache is not None:
            cache.advance(T)
        if squeeze:
            logits = logits[0]                                          # [T, V]
            weights = [w[0] for w in weights]
        return (logits, weights) if return_weights else logits

    def forward(self, ids, positions, mask, cache=None, return_weights: bool = False,
                last_only: bool = False, hook=None):
        """The math, on checked inputs: ids [B, T] -> (logits [B, T, V], weights: a list of
        [B, H, T, S] per layer, or empty unless ``return_weights``). ``hook(name, x) -> x`` is
        called at every hook point (minillm/hooks.py; None: none)."""
        c, p = self.config, self.params
        weights, hook = patterns(hook) if return_weights else ([], hook)   # (hook_pattern's)
        look = hook or keep
        x = embed(p.wte, ids)                                           # [B, T, C]
        if c.embed_scale:                                               # Gemma: × √C, as float32
            x *= np.float32(math.sqrt(c.d_model))                       # [B, T, C]
        x = look("hook_embed", x)
        if p.wpe is not None:                                           # GPT-2: learned positions
            x = x + look("hook_pos_embed", embed(p.wpe, positions))     # [B, T, C]
        rope = None
        if c.position == "rope":                                        # the angles of these positions
            cos, sin = rope_angles(positions, c.d_head, c.rope_theta, c.rope_scaling)   # [B, T, D/2] each
            rope = (cos[:, None], sin[:, None])                         # [B, 1, T, D/2]: every head
        if c.sliding_window is not None:                                # the window's mask (and RoPE)
            local = sliding_inputs(c, mask, rope, positions, rope_angles)
        for layer, bp in enumerate(p.blocks):
            m, r = local if is_sliding(c, layer) else (mask, rope)      # [B or 1, T, S], angles
            if layer in c.nope_layers:                                  # SmolLM3: no RoPE here
                r = None
            x = block(x, bp, Layer(c, m, r, cache, layer, hook))        # [B, T, C]
        if last_only:
            x = x[:, -1:]                                               # [B, 1, C]
        x = look("ln_final.hook_normalized", norm(x, p.norm_f, c.norm, c.norm_eps))   # [B, T, C]
        head = p.wte.T if p.lm_head is None else p.lm_head              # [C, V] (tied: wteᵀ)
        logits = linear(x, head)                                        # [B, T, C] @ [C, V] -> [B, T, V]
        if c.final_softcap is not None:                                 # Gemma 2: within ±cap
            logits = softcap(logits, c.final_softcap)                   # [B, T, V]
        return look("hook_logits", logits), weights

    hooked_forward = forward    # (what run_with_cache runs, on an EngineGPT too: minillm/hooks.py)

    def loss(self, ids) -> float:
        """Mean next-token cross-entropy over every position, in ONE forward pass.

        For ids x₀ … x_T, position t's logits predict x_{t+1}:
            loss = −1/(B·T) Σ_b Σ_{t<T} log softmax(logits[b, t])[x_{t+1}]
        Example: for "I love coding", one pass scores "I"→"love" and "I love"→"coding" together.
        """
        ids, _ = check_ids(ids, self.config, None, targets=1)   # n_ctx inputs + the last one's target
        if ids.shape[1] < 2:
            raise ValueError("loss needs sequences of at least 2 tokens (an input and a target)")
        logits = self(ids[:, :-1])                                      # [B, T-1, V]
        return cross_entropy(logits, ids[:, 1:])                        # targets [B, T-1]

    def num_parameters(self) -> int:
        return sum(a.size for a in self.params.named().values())
