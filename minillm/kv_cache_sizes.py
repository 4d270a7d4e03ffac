"""What a KV cache costs in memory, checked before anything is allocated.

Sizes come from users (``batch_size``, ``beam_size``, a batch of prompts): the bytes a cache needs
are checked against the machine's physical memory first (``check_cache_fits``), so
``batch_size=10**6`` is a ValueError naming it, not a MemoryError or a machine swapping to death.
The limit is all of the memory, a bound no run can pass; the forward pass needs its activations on
top. The cache itself: ``minillm/kv_cache.py``.
"""
from __future__ import annotations

import os


def memory_bytes() -> int | None:
    """The machine's physical memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def cache_bytes(config, batch_size: int, capacity: int) -> int:
    """What a cache of B rows and N positions holds: k and v [L, B, KV, N, D] float32, valid [B, N]."""
    return 2 * config.n_layers * batch_size * config.n_kv_heads * capacity * config.d_head * 4 \
        + batch_size * capacity


def check_cache_fits(config, batch_size: int, capacity: int, name: str = "batch_size",
                     per_row: int | None = None) -> None:
    """A ValueError naming ``name`` unless ``batch_size`` rows fit in memory: each a cache row of
    ``capacity`` positions plus ``per_row`` bytes (default: its [V] float32 logits; beam search
    also keeps float64 scores)."""
    per_row = 4 * config.vocab_size if per_row is None else per_row
    row = cache_bytes(config, 1, capacity) + per_row
    need, have = batch_size * row, memory_bytes()
    if have is not None and need > have:
        raise ValueError(f"{name}={batch_size:,} needs {need / 1e9:,.1f} GB ({batch_size:,} rows "
                         f"of a KV cache of {capacity:,} positions × {config.n_layers} layers and "
                         f"their logits), more than this machine's {have / 1e9:,.1f} GB of memory: "
                         f"allowed at most {have // row:,}")

