"""The one way the lens tools run a model: always on a batch ([B, T] ids), so every recorded
activation has its batch axis whatever the caller passed (one sequence [T] is a batch of one)."""
from __future__ import annotations

import numpy as np


def as_batch(ids) -> np.ndarray:
    """[T] or [B, T] integer ids -> [B, T]; anything else is a ValueError naming the shape."""
    ids = np.asarray(ids)
    if ids.ndim not in (1, 2) or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be a non-empty [T] or [B, T] array of integer token ids, got "
                         f"shape {ids.shape} of {ids.dtype}")
    return ids[None] if ids.ndim == 1 else ids


def cached(model, ids, names) -> tuple[np.ndarray, dict]:
    """[B, T] ids -> (logits [B, T, V], {name: activation with its batch axis})."""
    return model.run_with_cache(as_batch(ids), names=list(names))


def check_head(model, layer: int, head: int) -> None:
    c = model.config
    for what, value, n in (("layer", layer, c.n_layers), ("head", head, c.n_heads)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
            raise ValueError(f"{what} must be an integer in [0, {n}), got {value!r}")
