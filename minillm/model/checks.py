"""What ``GPT.__call__`` checks before the math runs (model/gpt.py calls these), so that the
formula files stay the formulas: token ids in the vocabulary and the window, the cache's rows and
room, positions and a causal mask of the right shapes (the defaults when none are given), the
parameters' names and shapes.
"""
from __future__ import annotations

import numpy as np

from minillm.model.attention import causal_mask
from minillm.model.params import GPTParams, check_names_and_shapes


def check_params(params, config) -> None:
    """``params`` must be a GPTParams whose names and shapes are ``config``'s."""
    if not isinstance(params, GPTParams):
        raise TypeError(f"params must be a GPTParams, got {type(params).__name__}")
    check_names_and_shapes(params.named(), config)


def check_ids(ids, config, cache=None, targets: int = 0):
    """ids [T] or [B, T] -> (ids [B, T] int64, whether a batch of one was added). Token ids
    in the vocabulary; cached + new positions within the window (``targets``: the extra target
    a loss reads past the inputs); the cache's rows and room."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"token ids must be integers, got dtype {ids.dtype}")
    if ids.ndim not in (1, 2) or ids.size == 0:
        raise ValueError(f"token ids must have shape [T] or [B, T] with B, T ≥ 1, got {ids.shape}")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError(f"token ids must be in [0, {config.vocab_size}); got "
                         f"min {ids.min()}, max {ids.max()}")
    squeeze = ids.ndim == 1
    ids = ids[None] if squeeze else ids                             # [B, T]
    start = 0 if cache is None else cache.length
    if start + ids.shape[1] > config.n_ctx + targets:
        raise ValueError(f"{start + ids.shape[1]} positions exceed the context window "
                         f"n_ctx={config.n_ctx} ({start} cached + {ids.shape[1]} new)")
    if cache is not None:
        if cache.batch_size != ids.shape[0]:
            raise ValueError(f"the cache has {cache.batch_size} rows, the ids {ids.shape[0]}")
        cache.check_room(ids.shape[1])
    return ids.astype(np.int64, copy=False), squeeze

def check_positions_and_mask(positions, mask, cache, config, B: int, T: int):
    """The defaults, or the caller's positions [B, T] and mask [B or 1, T, S], checked."""
    start = 0 if cache is None else cache.length
    S = start + T
    if (positions is None or mask is None) and cache is not None \
            and not cache.valid[:, :start].all():   # the defaults would count the padding
        raise ValueError("this cache holds padding: pass positions= and mask= "
                         "(minillm.decoding.batch.padded_inputs builds them)")
    if positions is None:
        positions = np.broadcast_to(np.arange(start, S), (B, T))    # [B, T]
    else:
        positions = np.asarray(positions)
        if positions.dtype.kind not in "iu" or positions.shape not in ((B, T), (T,)):
            raise ValueError(f"positions must be integers of shape {(B, T)}, got "
                             f"{positions.dtype} {positions.shape}")
        if positions.min() < 0 or positions.max() >= config.n_ctx:
            raise ValueError(f"positions must be in [0, n_ctx={config.n_ctx})")
        positions = np.broadcast_to(positions, (B, T))              # [B, T]
    if mask is None:
        return positions, causal_mask(T, S)[None]                   # [1, T, S] lower-triangular
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape[-2:] != (T, S) or mask.ndim not in (2, 3) \
            or (mask.ndim == 3 and mask.shape[0] not in (1, B)):
        raise ValueError(f"mask must be bool of shape {(B, T, S)} (or {(1, T, S)}), got "
                         f"{mask.dtype} {mask.shape}")
    mask = mask.reshape(-1, T, S)                                   # [B or 1, T, S]
    if (mask & ~causal_mask(T, S)).any():
        raise ValueError("mask lets a query see a later key; the model is causal")
    if not mask.any(axis=-1).all():
        raise ValueError("mask hides every key from some query (its softmax would be NaN)")
    return positions, mask
