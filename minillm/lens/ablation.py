"""Head ablation: remove one attention head's contribution and see what the model loses.

A head's output before the output projection is z_h [B, T, D] (``blocks.ℓ.attn.hook_z``
[B, T, H, D]); the sub-layer adds Σ_h z_h · W_O[h] to the stream. Ablating head h replaces z_h:

    zero:  z_h ← 0                           (as if W_O[h] were zero: the head writes nothing)
    mean:  z_h ← mean over (b, t) of z_h     on ``reference`` ids (default: the ids themselves):
                                              what the head writes on average, not what it reads

Mean ablation keeps the head's average contribution (which later layers may rely on as a
constant), so it measures what the head adds *for this input*. Example:
``ablate_heads(model, ids, [(1, 3)])`` -> the logits with layer 1's head 3 silenced.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from minillm.lens._runs import as_batch, cached, check_head

KINDS = ("zero", "mean")


def head_ablation_hooks(model, heads, kind: str = "zero", reference=None) -> dict:
    """{hook name: fn} for ``model.run_with_hooks``: each listed (layer, head) ablated."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    by_layer = defaultdict(list)
    for item in heads:
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise ValueError(f"heads must be (layer, head) pairs, got {item!r}")
        check_head(model, *item)
        by_layer[int(item[0])].append(int(item[1]))
    names = [f"blocks.{l}.attn.hook_z" for l in by_layer]
    means = {}
    if kind == "mean":
        if reference is None:
            raise ValueError("mean ablation needs the reference ids to average over")
        _, acts = cached(model, reference, names)
        means = {n: acts[n].mean(axis=(0, 1)) for n in names}      # [B, T, H, D] -> [H, D]

    def hook_for(name, hs):
        def ablate(z, _name):                                       # z [B, T, H, D]
            z = z.copy()
            z[:, :, hs] = 0.0 if kind == "zero" else means[name][hs]   # [B, T, h, D]
            return z
        return ablate
    return {f"blocks.{l}.attn.hook_z": hook_for(f"blocks.{l}.attn.hook_z", hs)
            for l, hs in by_layer.items()}


def ablate_heads(model, ids, heads, kind: str = "zero", reference=None) -> np.ndarray:
    """ids [T] or [B, T] -> logits [T, V] or [B, T, V] with the listed (layer, head)s ablated.
    ``kind="mean"`` averages each head's output over ``reference`` (default: ``ids``)."""
    batch = as_batch(ids)
    hooks = head_ablation_hooks(model, heads, kind, batch if reference is None else reference)
    logits = model.run_with_hooks(batch, hooks)                     # [B, T, V]
    return logits[0] if np.ndim(ids) == 1 else logits
