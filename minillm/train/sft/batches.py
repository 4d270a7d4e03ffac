"""Rendered conversations -> training batches: padded (the default) or packed, in a fixed order.

Padding: each row is one conversation, right-padded to the longest of its batch with ``pad_id``
and loss mask 0. Nothing a real token computes depends on the padding (causal attention sees
only earlier positions), and the padding's gradient is exactly zero (grad_model.py; tested).

Packing (``pack_rows``): several conversations one after the other in one row, ``segments``
telling them apart. Attention does NOT cross a conversation boundary (a block-diagonal causal
mask) and positions restart at 0 in each, so a packed row computes what its conversations would
alone, with less padding. Padding is the simple default; packing pays when lengths vary a lot.

Length: a conversation longer than the limit is refused with its number and length (a ValueError
from ``check_lengths``), never truncated: a cut reply would teach the model to stop mid-sentence.

Order: ``batch_indices(n, batch, seed, step)`` is a pure function of its arguments (a fresh
permutation each epoch), so a resumed run sees exactly the batches of an uninterrupted one.
Example: n = 5, batch = 2 -> steps 0, 1, 2 cover epoch 0 as [a, b], [c, d], [e]; step 3 starts
epoch 1 with another permutation.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.train.sft.mask import training_pair


def check_lengths(examples, limit: int, what: str = "conversation") -> None:
    """ValueError naming the first example with more than ``limit`` tokens."""
    for n, (ids, _) in enumerate(examples, start=1):
        if len(ids) > limit:
            raise ValueError(too_long(what, n, len(ids), limit))


def too_long(what: str, n: int, n_tokens: int, limit: int) -> str:
    return (f"{what} {n} has {n_tokens} tokens, more than the limit of {limit} "
            f"(the model's context or --max-tokens); shorten or split it: "
            f"conversations are never truncated")


def steps_per_epoch(n: int, batch: int) -> int:
    return math.ceil(n / batch)


def batch_indices(n: int, batch: int, seed: int, step: int) -> np.ndarray:
    """The example indices of step ``step``: epoch e = step // steps_per_epoch uses the
    permutation drawn from (seed, e); the step takes its next ``batch`` entries (fewer at the end)."""
    epoch, k = divmod(step, steps_per_epoch(n, batch))
    order = np.random.default_rng([seed, epoch]).permutation(n)
    return order[k * batch:(k + 1) * batch]


def pad_rows(examples, pad_id: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[(ids [Lᵢ], counted [Lᵢ])] -> inputs, targets [B, T] (pad_id after each row's end) and
    loss mask [B, T] (0 on the padding), T = max Lᵢ − 1."""
    pairs = [training_pair(ids, counted) for ids, counted in examples]
    T = max(len(x) for x, _, _ in pairs)
    inputs = np.full((len(pairs), T), pad_id, np.int64)                 # [B, T]
    targets = np.full((len(pairs), T), pad_id, np.int64)                # [B, T]
    mask = np.zeros((len(pairs), T), np.int64)                          # [B, T]
    for b, (x, y, m) in enumerate(pairs):
        inputs[b, :len(x)], targets[b, :len(y)], mask[b, :len(m)] = x, y, m
    return inputs, targets, mask


def pack_rows(examples, T: int, pad_id: int = 0) -> tuple[np.ndarray, ...]:
    """[(ids, counted)] -> inputs, targets, loss mask, segments [R, T]: conversations placed one
    after the other, in order, a new row when the next does not fit; segment k = the row's k-th
    conversation, the padding at a row's end its own segment (mask 0)."""
    pairs = [training_pair(ids, counted) for ids, counted in examples]
    rows, row = [], []
    for pair in pairs:
        if len(pair[0]) > T:
            raise ValueError(f"a conversation of {len(pair[0]) + 1} tokens does not fit a packed "
                             f"row of {T} positions")
        if sum(len(p[0]) for p in row) + len(pair[0]) > T:
            rows.append(row)
            row = []
        row.append(pair)
    rows.append(row)
    out = [np.full((len(rows), T), v, np.int64) for v in (pad_id, pad_id, 0, 0)]
    for r, row in enumerate(rows):
        t = 0
        for k, (x, y, m) in enumerate(row):
            for a, v in zip(out, (x, y, m, np.full(len(x), k))):
                a[r, t:t + len(x)] = v
            t += len(x)
        out[3][r, t:] = len(row)                                         # the padding's segment
    return tuple(out)
