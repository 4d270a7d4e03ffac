"""The engine's model: ``model.GPT`` with its forward pass over an arena.

``EngineGPT(config, arena)`` is a subclass of ``minillm.model.GPT``: the same input checks,
``__call__``, ``loss``, ``num_parameters`` and file methods (``EngineGPT.from_pretrained(path)``
loads straight into an arena: ``empty`` below); ``params`` is the arena's ``GPTParams`` (views into
the one block, so ``named()`` and the loaders see every parameter under its name); only
``forward`` differs — the joined products, query blocks and in-place forms of ``layers.py``, and
the head read from the arena (a [C, V] view of what it stores). Reused from model/ as they are:
the embedding, the RoPE angles and rotation, ``scaled_dot_product`` and the masks.

    fast = to_engine(GPT(config, seed=0))       # the same weights, copied into an arena
    fast(ids) ≈ model(ids)                      # equal up to float32 rounding (tests/engine/)
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from minillm.config import ModelConfig
from minillm.engine.arena import Arena, empty_arena, to_arena
from minillm.engine import step
from minillm.engine.layers import block
from minillm.engine.ops import linear, norm_fast
from minillm.engine.plan import plan_for, use
from minillm.model.embedding import embed
from minillm.model.gpt import GPT
from minillm.model.params import GPTParams, field_names
from minillm.model.rope import rope_angles
from minillm.model.variants import is_sliding, sliding_inputs, softcap


class EngineGPT(GPT):
    """``GPT`` over an ``Arena`` (``arena.py``): the same logits up to float32 rounding, faster."""

    def __init__(self, config: ModelConfig, arena: Arena):
        if not isinstance(arena, Arena):
            raise TypeError(f"arena must be an engine Arena (empty_arena, to_arena), got "
                            f"{type(arena).__name__}; a GPTParams goes to GPT(config, params)")
        super().__init__(config, arena.params)
        self.arena = arena
        self._laid_out = _leaves(arena.params)   # every (holder, field, weight) the arena made
        self._lanes = step.Lanes(self) if step.covers(config, arena) else None   # (step.py)

    @classmethod
    def empty(cls, config: ModelConfig) -> "EngineGPT":
        """An engine model whose arena is allocated, not yet set: what the loaders fill, one
        tensor at a time, straight into its place (``GPT.empty`` makes plain arrays). Each
        matrix is stored in the layout this machine's plan chose, and the products take its
        forms (``plan.py``: read from the user's cache folder, or measured once, ~8 s); with
        no plan (``MINILLM_PLAN=off``, or none can be stored) the "by_width" layout."""
        plan = plan_for(config)
        use(plan)
        return cls(config, empty_arena(config, plan or "by_width"))

    def forward(self, ids, positions, mask, cache=None, return_weights: bool = False,
                last_only: bool = False):
        self._check_laid_out()
        if (self._lanes is not None and ids.shape[1] == 1 and cache is not None
                and not return_weights):                                # one token a row: step.py
            return step.decode_step(self, self._lanes, ids, positions, mask, cache), []
        c, p = self.config, self.params
        x = embed(p.wte, ids, p.wpe, positions)                         # [B, T, C]
        if c.embed_scale:                                               # Gemma: × √C, as float32
            x *= np.float32(math.sqrt(c.d_model))
        rope = None
        if c.position == "rope":
            cos, sin = rope_angles(positions, c.d_head, c.rope_theta, c.rope_scaling)   # [B, T, D/2] each
            rope = (cos[:, None], sin[:, None])                         # [B, 1, T, D/2]
        if c.sliding_window is not None:                                # (layers.py cuts the keys)
            local = sliding_inputs(c, mask, rope, positions, rope_angles)
        weights = []
        for layer, (bp, joined) in enumerate(zip(p.blocks, self.arena.joined)):
            m, r = local if is_sliding(c, layer) else (mask, rope)
            r = None if layer in c.nope_layers else r                   # (SmolLM3: no RoPE)
            x, w = block(x, bp, joined, c, m, r, cache, layer, return_weights)   # [B, T, C]
            if return_weights:
                weights.append(w)                                       # [B, H, T, S]
        if last_only:
            x = x[:, -1:]                                               # [B, 1, C]
        x = norm_fast(x, p.norm_f, c.norm, c.norm_eps)                  # [B, T, C]
        head = p.wte.T if p.lm_head is None else p.lm_head              # [C, V] (a view: arena.py)
        logits = linear(x, head)                                        # [B, T, C] @ [C, V] -> [B, T, V]
        if c.final_softcap is not None:                                 # Gemma 2
            logits = softcap(logits, c.final_softcap)
        return logits, weights

    def first_layers(self, n: int) -> "EngineGPT":
        """The first n blocks, the final norm and head, sharing these weights (no copy)."""
        types = self.config.layer_types                                 # (sliding windows: each layer's)
        return type(self)(replace(self.config, n_layers=n, layer_types=types and types[:n]),
                          self.arena.first_layers(n))

    def _check_laid_out(self) -> None:
        """subtle: the joined matrices are read instead of wq, wk, …; a weight REPLACED in
        ``params`` (not written into) would be silently ignored, so it is refused."""
        if self.params is not self.arena.params:
            raise ValueError("model.params was replaced; this engine model reads its arena. "
                             "Write into the weights in place (w[...] = new), or load the model "
                             "with load_model(path, fast=False) for one of plain arrays")
        for holder, name, weight in self._laid_out:
            if getattr(holder, name) is not weight:
                raise ValueError(f"a weight ({name}) was replaced by another array; this engine "
                                 f"model reads its arena. Write into it in place (w[...] = new), "
                                 f"or load the model with load_model(path, fast=False)")


def _leaves(params: GPTParams) -> list[tuple[object, str, object]]:
    """(the dataclass holding it, its field name, the weight) for every weight of ``params``."""
    holders = [params, params.norm_f, *(h for b in params.blocks for h in (
        b.norm1, b.attn, b.norm2, b.ffn, b.post_attn_norm, b.post_ffn_norm) if h is not None)]
    return [(h, name, getattr(h, name)) for h in holders for name in field_names(type(h))
            if name not in ("blocks", "norm_f") and getattr(h, name) is not None]


def to_engine(model: GPT, layout: str = "by_width") -> EngineGPT:
    """An ``EngineGPT`` with float32 copies of ``model``'s weights in a new arena ("by_width",
    the un-planned loaders' layout, "rows" or "decode": ``arena.py``; or a ``Plan``: ``plan.py``,
    whose forms then run once ``plan.use(plan)``)."""
    return EngineGPT(model.config, to_arena(model.params, model.config, layout))


def plain_params(params: GPTParams, config: ModelConfig) -> GPTParams:
    """C-contiguous float32 copies of every weight (the arena's views are neither): what a model
    of plain arrays (``GPT(config, plain_params(fast.params, config))``) or the optimiser takes."""
    return GPTParams.from_named({k: np.array(a, dtype=np.float32, order="C")
                                 for k, a in params.named().items()}, config)
