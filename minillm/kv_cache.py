"""The KV cache: keep every layer's keys and values so each new token costs O(n), not O(n²).
Where it runs — shared (every cached loop, the engine and --reference alike): KVCache.store.

Without a cache, generating token n+1 runs the model over all n+1 tokens again, recomputing keys
and values that have not changed (position t's K and V depend only on tokens ≤ t — the causal
mask guarantees it). With a cache, each step feeds only the new token: its Q attends over the
cached K, V plus its own.

Example: cache = KVCache(config, batch_size=1, capacity=64); model(prompt_ids, cache=cache);
then model(next_id[None, None], cache=cache) one token at a time. A batch, beam or cache size is
checked against the machine's memory before anything is allocated (``kv_cache_sizes.py``).
"""
from __future__ import annotations

import numpy as np

# the memory accounting, beside the cache (minillm.kv_cache.check_cache_fits still imports)
from minillm.kv_cache_sizes import cache_bytes, check_cache_fits, memory_bytes  # noqa: F401


class KVCache:
    """Every layer's keys and values, preallocated: ``k``, ``v`` [L, B, KV, N, D] float32.

    Per layer and row the cache is a [KV, N, D] table of which the first ``length`` = n rows (of N)
    are filled. A forward call of T new tokens runs, in every layer ℓ:

        K_ℓ[:, n : n + T] = k_new          store: the T new rows after the n cached ones
        attend over K_ℓ[:, : n + T]        the views ``store`` returns: [B, KV, n + T, D]

    and then ``advance(T)`` makes n ← n + T (once, after the last layer). ``rollback(m)`` forgets
    all but the first m rows (m ≤ n: their slots are overwritten later); ``reorder(rows)`` makes row
    b hold row rows[b]'s history (beam search). Nothing is reallocated per token. ``valid`` [B, N]
    marks the slots holding real tokens (False: left padding in a batch of prompts of different
    lengths). KV, the KV heads, is fewer than the query heads under grouped-query attention.

    Example: ``cache = KVCache(config, batch_size=1, capacity=64)``; after a 5-token prompt
    ``cache.length == 5`` and ``cache.k[0, 0, :, :5]`` holds layer 0's keys of those 5 tokens.
    """

    def __init__(self, config, batch_size: int = 1, capacity: int | None = None):
        capacity = config.n_ctx if capacity is None else capacity
        if not _is_int(batch_size) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not _is_int(capacity) or not 1 <= capacity <= config.n_ctx:
            raise ValueError(f"capacity must be an integer in [1, n_ctx={config.n_ctx}], got {capacity!r}")
        batch_size, capacity = int(batch_size), int(capacity)
        check_cache_fits(config, batch_size, capacity, per_row=0)  # before allocating
        shape = (config.n_layers, batch_size, config.n_kv_heads, capacity, config.d_head)
        self.k = np.zeros(shape, dtype=np.float32)     # [L, B, KV, N, D]  zeros: pages untouched until used
        self.v = np.zeros(shape, dtype=np.float32)     # [L, B, KV, N, D]
        self.valid = np.ones((batch_size, capacity), dtype=bool)   # [B, N]
        self.length = 0

    @property
    def batch_size(self) -> int:
        return self.k.shape[1]

    @property
    def capacity(self) -> int:
        return self.k.shape[3]

    def store(self, layer: int, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Write this call's new k, v [B, KV, T, D] at [length, length + T) of ``layer`` and return
        views of everything cached so far for that layer: [B, KV, length + T, D] each (no copy)."""
        start, end = self.length, self.length + k.shape[2]
        self.k[layer, :, :, start:end] = k                       # [B, KV, T, D] into the slots
        self.v[layer, :, :, start:end] = v                       # [B, KV, T, D]
        return self.k[layer, :, :, :end], self.v[layer, :, :, :end]   # [B, KV, S, D] views

    def advance(self, n_new: int) -> None:
        """Called once per forward, after every layer has stored its entries."""
        self.length += n_new

    def check_room(self, n_new: int) -> None:
        if self.length + n_new > self.capacity:
            raise ValueError(f"the KV cache holds {self.length} of {self.capacity} positions: no room "
                             f"for {n_new} more (make a larger cache, or roll it back)")

    def reorder(self, rows) -> None:
        """Make row b hold what row rows[b] held (beam search keeps the best beams' histories)."""
        rows = np.asarray(rows)
        if rows.shape != (self.batch_size,) or rows.dtype.kind not in "iu" \
                or rows.min() < 0 or rows.max() >= self.batch_size:
            raise ValueError(f"rows must be {self.batch_size} indices in [0, {self.batch_size})")
        n = self.length
        self.k[:, :, :, :n] = self.k[:, rows, :, :n]             # [L, B, KV, n, D] gathered rows
        self.v[:, :, :, :n] = self.v[:, rows, :, :n]             # [L, B, KV, n, D]
        self.valid[:, :n] = self.valid[rows, :n]                 # [B, n]

    def rollback(self, length: int) -> None:
        """Forget everything after the first ``length`` positions (their slots get overwritten)."""
        if not _is_int(length) or not 0 <= length <= self.length:
            raise ValueError(f"can roll back only to a length in [0, {self.length}], got {length!r}")
        self.length = int(length)
        self.valid[:, self.length:] = True                       # [B, N − length] free again

    def nbytes(self) -> int:
        """Memory the cache reserves: 2 · L · B · KV · N · D · 4 bytes."""
        return self.k.nbytes + self.v.nbytes


def shared_prefix_cache(model, prompt: np.ndarray, batch_size: int, capacity: int):
    """Run ``prompt`` [P] once and copy its K/V into every row of a new ``batch_size``-row cache.

    Returns (cache with ``length == P``, last-position logits [V]). One forward pass (batch 1).
    """
    one = KVCache(model.config, batch_size=1, capacity=len(prompt))
    logits = model(prompt[None], cache=one, last_only=True)[0, -1]           # [V]
    cache = KVCache(model.config, batch_size=batch_size, capacity=capacity)
    P = len(prompt)
    cache.k[:, :, :, :P] = one.k                                   # [L, 1, KV, P, D] -> [L, B, KV, P, D]
    cache.v[:, :, :, :P] = one.v                                   # [L, 1, KV, P, D] -> [L, B, KV, P, D]
    cache.advance(P)
    return cache, logits


def _is_int(x) -> bool:
    """A Python or NumPy integer, not a bool (``len(ids) + n`` may well be an ``np.int64``)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)
