"""Activation patching (causal tracing): run a corrupted prompt, but write into it activations
recorded on a clean one, and see how much of the clean answer comes back.

    clean   "The Eiffel Tower is in the city of"  -> " Paris"
    corrupt "The Colosseum is in the city of"      -> " Rome"

Patching activation a at (layer ℓ, position t) asks: is the fact carried *there*? If the clean
answer returns, everything the corrupted run lacked passed through that point.

Two exact identities are the method's sanity checks: patching every activation of the clean run
into the corrupted one gives the clean logits (the last one patched already is the normed stream
the head reads); patching none gives the corrupted logits.
"""
from __future__ import annotations

import numpy as np

from minillm.lens._runs import as_batch, cached

ROWS_CELLS = 1 << 25       # logits per batched forward (128 MB of float32): chunks bound the memory


def _pair(model, clean_ids, corrupt_ids):
    clean, corrupt = as_batch(clean_ids), as_batch(corrupt_ids)
    if clean.shape != corrupt.shape:
        raise ValueError(f"clean and corrupted ids must have the same shape (patching is "
                         f"position by position), got {clean.shape} and {corrupt.shape}")
    return clean, corrupt


def patch_activations(model, clean_ids, corrupt_ids, names=None) -> np.ndarray:
    """The corrupted run's logits [B, T, V] with each activation in ``names`` (default: every
    one the model records) replaced by the clean run's."""
    clean, corrupt = _pair(model, clean_ids, corrupt_ids)
    _, acts = model.run_with_cache(clean, names=None if names is None else list(names))
    if names is not None:
        missing = [n for n in names if n not in acts]
        if missing:
            raise ValueError(f"no activation is named {missing[0]!r} (names look like "
                             f"'blocks.0.hook_resid_pre')")
    hooks = {name: (lambda x, n, a=a: a) for name, a in acts.items()}
    return model.run_with_hooks(corrupt, hooks)


def patch_residual(model, clean_ids, corrupt_ids, metric, layers=None) -> np.ndarray:
    """-> [len(layers), T] float32: ``metric`` of the corrupted run's logits with the residual
    stream entering block ℓ (``blocks.ℓ.hook_resid_pre``) at position t alone taken from the
    clean run. ``metric`` is a token id (its logit at the last position of row 0) or a function
    logits [B, T, V] -> float (a logit difference, say). ``layers`` default: all of them.

    Cost: one forward per layer and chunk of positions: the T patched runs of a layer go as the
    rows of one batch (each row patches its own position; rows never see each other), at most
    ``ROWS_CELLS`` logits at a time. Where the prompts agree, layer 0's cell is the corrupted
    value exactly (the streams are the same there); at a position where they differ, layer 0's
    cell is the clean value exactly when that is the only difference.
    """
    clean, corrupt = _pair(model, clean_ids, corrupt_ids)
    L, (B, T) = model.config.n_layers, clean.shape
    layers = list(range(L)) if layers is None else list(layers)
    if any(isinstance(l, bool) or not isinstance(l, (int, np.integer)) or not 0 <= l < L
           for l in layers):
        raise ValueError(f"layers must be integers in [0, {L}), got {layers!r}")
    if isinstance(metric, (int, np.integer)) and not isinstance(metric, bool):
        token = int(metric)
        if not 0 <= token < model.config.vocab_size:
            raise ValueError(f"metric token must be in [0, {model.config.vocab_size}), got {token}")
        metric = lambda logits: float(logits[0, -1, token])
    elif not callable(metric):
        raise TypeError(f"metric must be a token id or a function of the logits, got {metric!r}")
    _, acts = cached(model, clean, [f"blocks.{l}.hook_resid_pre" for l in layers])
    per_chunk = max(1, ROWS_CELLS // (B * T * model.config.vocab_size))   # positions per forward
    out = np.zeros((len(layers), T), dtype=np.float32)
    for i, l in enumerate(layers):
        name, a = f"blocks.{l}.hook_resid_pre", acts[f"blocks.{l}.hook_resid_pre"]   # a [B, T, C]
        for start in range(0, T, per_chunk):
            ts = list(range(start, min(T, start + per_chunk)))     # the positions of this forward

            def patch(x, _name, ts=ts, a=a):                        # x [n·B, T, C]: n runs of B rows
                x = x.copy().reshape(len(ts), B, T, -1)             # [n, B, T, C]
                for run, t in enumerate(ts):
                    x[run, :, t] = a[:, t]                          # [B, C] run `run` patches t only
                return x.reshape(len(ts) * B, T, -1)
            logits = model.run_with_hooks(np.tile(corrupt, (len(ts), 1)), {name: patch})
            logits = logits.reshape(len(ts), B, T, -1)              # [n, B, T, V]
            for run, t in enumerate(ts):
                out[i, t] = metric(logits[run])
    return out
