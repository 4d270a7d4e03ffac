"""The held-out score of rendered conversations: loss and accuracy on the assistant's tokens.

    loss     = −Σₙ mₙ log p(yₙ) / Σₙ mₙ          the training loss's formula, on unseen conversations
    accuracy = Σₙ mₙ [argmax zₙ = yₙ] / Σₙ mₙ    the share of counted tokens the model ranks first

m: the loss mask (mask.py: the replies and their stop tokens). No gradient is taken, so nothing
is kept for a backward: each batch runs the blocks dropping their caches and the head a chunk of
rows at a time (train/memory/), and an evaluation in the middle of a run adds little to the
training step's peak memory.

Example: ``evaluate_examples(model, [render(tok, conversation)], lora=None, batch_size=8)``
-> ``{"loss": 1.93, "accuracy": 0.61, "tokens": 18}``.
"""
from __future__ import annotations

import numpy as np

from minillm.engine.ops import norm_fast
from minillm.train.lora.adapters import LoRA, frozen_params
from minillm.train.memory.chunked_head import chunked_head_scores
from minillm.train.memory.recompute import forward_keeping_inputs
from minillm.train.sft.batches import pad_rows


def evaluate_examples(model, examples, lora: LoRA | None, batch_size: int) -> dict:
    """[(ids, counted)] -> {"loss", "accuracy", "tokens"} of the model (with ``lora`` applied as
    x W + s · (x A) B, the base untouched), ``batch_size`` conversations per forward."""
    params = model.params if lora is None else frozen_params(model.params, lora)
    config = model.config
    head = params.wte.T if params.lm_head is None else params.lm_head   # [C, V]
    nll, right, count = 0.0, 0, 0
    for i in range(0, len(examples), batch_size):
        x, y, m = pad_rows(examples[i:i + batch_size])                  # [B, T] each
        h, _, _ = forward_keeping_inputs(params, config, x, keep=False)   # [B, T, C]
        xf = norm_fast(h, params.norm_f, config.norm, config.norm_eps)  # [B, T, C]
        rows = np.flatnonzero(m.reshape(-1))                            # [R] the counted positions
        part, hits = chunked_head_scores(xf.reshape(-1, xf.shape[-1])[rows], head,
                                         y.reshape(-1)[rows])           # [R, C] -> sums
        nll, right, count = nll + part, right + hits, count + len(rows)
    return {"loss": nll / count, "accuracy": right / count, "tokens": count}
