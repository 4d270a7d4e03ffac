"""Requests joining a running batch: their prompts prefilled together, in groups of similar length.

When several requests wait for free slots (eight clients arriving at once), prefilling each
prompt alone runs eight [1, P] forwards, each reading every weight; one [8, P] forward reads them
once. The prompts are left-padded to the longest of their group (``decoding/batch.py``'s padding:
``padded_inputs`` gives each row its own positions and hides its padding, so each row computes
what it would alone, up to float32 summation order), and grouped so that padding stays a small
part of the work (``prompt_groups``).

Example: prompts of 16, 500 and 18 tokens -> two forwards: [2, 18] (the 16 padded by 2) and
[1, 500].
"""
from __future__ import annotations

import numpy as np

from minillm.decoding.batch import left_pad, padded_inputs
from minillm.kv_cache import KVCache


def prompt_groups(joining: list, waste: float = 0.5) -> list[list]:
    """``joining`` [(slot, request), …] in groups prefilled together: by prompt length, each
    group's padding at most ``waste`` of the tokens its forward runs.

    Example: prompts of 16, 500, 18 tokens -> [[the 16, the 18], [the 500]]: the 16 padded to
    18 (2 of 36 tokens are padding); the 500 beside them would make 1,018 of 1,500 padding."""
    groups: list[list] = []
    for pair in sorted(joining, key=lambda pr: len(pr[1].prompt)):    # shortest first
        if groups:
            group = groups[-1] + [pair]
            padded = len(pair[1].prompt) * len(group)             # the [k, longest] forward's tokens
            real = sum(len(r.prompt) for _, r in group)
            if padded - real <= waste * padded:
                groups[-1] = group
                continue
        groups.append([pair])
    return groups


def prefill_together(model, prompts: list[np.ndarray]):
    """(a KV cache [k rows, P columns] holding the k prompts right-aligned, their last
    positions' logits [k, V]) from ONE forward over the prompts left-padded to P, the longest."""
    ids, valid = left_pad(prompts)                                # [k, P] each
    k, P = ids.shape
    cache = KVCache(model.config, batch_size=k, capacity=P)
    cache.valid[:] = valid
    positions, mask = padded_inputs(valid, P)                     # [k, P], [k, P, P]
    logits = model(ids, cache=cache, positions=positions, mask=mask, last_only=True)[:, -1]
    return cache, logits                                          # [k, V]
