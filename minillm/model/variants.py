"""What Mistral and Gemma 2 / 3 change in the model: a sliding window, soft-capping, and the checks
of their config fields (``ModelConfig``'s last eight).

The sliding window (Mistral; Gemma's "local" layers). A query at position p sees the keys at
positions p − W < s ≤ p: itself and the W − 1 before it, W keys at most.

    W = 3, T = S = 5        keys 0 1 2 3 4
                query 0       [1 · · · ·]
                query 1       [1 1 · · ·]
                query 2       [1 1 1 · ·]
                query 3       [· 1 1 1 ·]      key 0 is out of query 3's window: 3 − 0 ≥ W
                query 4       [· · 1 1 1]

The boundary is transformers' (``sliding_window_overlay``: ``kv_idx > q_idx - sliding_window``)
and llama.cpp's (a key is masked when ``p1 - p0 >= n_swa``). Which layers slide is the config's
``layer_types`` ("sliding" or "full" per layer): Mistral slides on every layer, Gemma 2 on every
other one (0, 2, 4, …), Gemma 3 on five of six (all but 5, 11, 17, …). Information still travels
further than W: a sliding layer's output at p already mixes what p − W + 1 saw, so L layers reach
back L · (W − 1) positions, and a full layer everything.

In the model the window is one more mask (``window_mask``, AND-ed with the causal one): the cache
keeps every key, and generation past W tokens is exact. The engine attends to the last W keys of
a sliding layer only (``window_start``), so a decode step costs the same at any length.

subtle: the window counts cache slots, not positions. They differ only by a row's left padding
(``decoding/batch.py``), which is the same for all of a row's real tokens, so the distance p − s
is the same in both; the padded keys are masked anyway.

Soft-capping (Gemma 2): ``softcap(x, cap) = cap · tanh(x / cap)``, ≈ x for |x| ≪ cap and never
beyond ±cap: applied to the attention scores before the mask (``attn_softcap``, 50) and to the
final logits (``final_softcap``, 30), it keeps one huge score from taking all the weight.

Example: softcap(np.array([1.0, 30.0, 300.0]), 30.0) ≈ [1.0, 22.8, 30.0].
"""
from __future__ import annotations

import math
import numbers

import numpy as np

LAYER_TYPES = ("sliding", "full")


def softcap(x: np.ndarray, cap: float) -> np.ndarray:
    """[...] -> [...] in (−cap, cap): cap · tanh(x / cap), the order transformers computes it."""
    return np.tanh(x / cap) * cap


def window_mask(T: int, S: int, W: int) -> np.ndarray:
    """[T, S] bool: query t (at slot S − T + t) may see key s iff S − T + t − W < s.

    Example: window_mask(1, 5, 3) = [[0, 0, 1, 1, 1]]; with ``causal_mask`` AND-ed in, the picture
    in the module docstring is ``causal_mask(5, 5) & window_mask(5, 5, 3)``.
    """
    query = np.arange(S - T, S)[:, None]                        # [T, 1] each query's slot
    return np.arange(S)[None, :] > query - W                    # [T, S]


def window_start(S: int, T: int, W: int) -> int:
    """The first of S key slots that any of the last T queries sees in a window of W: the keys
    before it get weight exactly 0, so the engine skips them."""
    return max(0, S - T - W + 1)


def is_sliding(config, layer: int) -> bool:
    """Whether ``layer`` attends through the sliding window."""
    return config.layer_types is not None and config.layer_types[layer] == "sliding"


def sliding_inputs(config, mask: np.ndarray, rope, positions: np.ndarray, angles):
    """(mask, rope) of the sliding layers: the causal ``mask`` [B or 1, T, S] AND the window, and
    the RoPE angles of ``rope_local_theta`` when it is set (Gemma 3; ``angles`` is
    ``model.rope.rope_angles``), else ``rope`` itself."""
    T, S = mask.shape[-2:]
    local = mask & window_mask(T, S, config.sliding_window)     # [B or 1, T, S]
    if config.rope_local_theta is None:
        return local, rope
    cos, sin = angles(positions, config.d_head, config.rope_local_theta)   # [B, T, D/2] each
    return local, (cos[:, None], sin[:, None])                  # [B, 1, T, D/2]


# Sizes and scales a file may ask for, checked before anything is built from them: a per-layer
# list of 10⁹ entries is gigabytes before any weight is read; a window past 2⁶³ overflows the
# int64 mask; a positive number too small or too large for float32 (a query scale of 1e-300, a
# soft-cap of 1e308, a RoPE factor of 1e-310) turns the logits into NaN.
MAX_LAYERS = 1 << 16             # the largest released models have ~130 layers
MAX_WINDOW = 2**32 - 1           # as every size (config.MAX_SIZE): GGUF stores it as a uint32
SCALE_RANGE = (1e-4, 1e8)        # soft-caps, the query scale, RoPE scaling's factors
THETA_RANGE = (1e-30, 1e30)     # a RoPE base: 1/θ and θ^(−2i/D) stay finite in float32
EPS_RANGE = (1e-30, 1e30)       # a norm's ε (released models: 1e-6 to 1e-5; past float32's max: inf)


def check_range(name: str, value: float, bounds: tuple[float, float]) -> None:
    """A ValueError naming ``name`` unless ``bounds[0] <= value <= bounds[1]``."""
    lo, hi = bounds
    if not lo <= value <= hi:
        raise ValueError(f"{name} = {value!r} is out of range: allowed [{lo:g}, {hi:g}] "
                         f"(beyond it float32 scores or angles become inf or NaN)")


def check_layer_count(n_layers, what: str = "n_layers") -> None:
    """A ValueError unless ``n_layers`` is an int in [1, MAX_LAYERS] — checked before a reader
    builds a per-layer list (Gemma's layer types, SmolLM3's no-RoPE layers) from it."""
    if isinstance(n_layers, bool) or not isinstance(n_layers, int):
        raise ValueError(f"{what} must be an integer in [1, {MAX_LAYERS:,}], got "
                         f"{str(n_layers)[:40]!r} ({type(n_layers).__name__})")
    if not 1 <= n_layers <= MAX_LAYERS:
        raise ValueError(f"{what}: {n_layers:,} layers is out of range: allowed [1, "
                         f"{MAX_LAYERS:,}]")


def check_variants(c) -> None:
    """ValueError unless the window, soft-cap and norm fields of ModelConfig ``c`` agree;
    ``layer_types`` becomes a tuple (every layer "sliding" when a window comes without one)."""
    if c.sliding_window is not None or c.layer_types is not None:   # (a list per layer follows)
        check_layer_count(c.n_layers)
    if c.sliding_window is not None and (type(c.sliding_window) is not int
                                         or not 1 <= c.sliding_window <= MAX_WINDOW):
        raise ValueError(f"sliding_window must be an integer >= 1 (at most {MAX_WINDOW:,}) or None, got "
                         f"{c.sliding_window!r}")
    if c.layer_types is not None:
        if isinstance(c.layer_types, str) or len(c.layer_types) != c.n_layers \
                or any(t not in LAYER_TYPES for t in c.layer_types):
            raise ValueError(f"layer_types must name {LAYER_TYPES} once per layer ({c.n_layers}), "
                             f"got {c.layer_types!r}")
        c.layer_types = tuple(c.layer_types)
    if c.sliding_window is None and c.layer_types is not None and "sliding" in c.layer_types:
        raise ValueError("layer_types has sliding layers but sliding_window is None")
    if c.sliding_window is not None and c.layer_types is None:
        c.layer_types = ("sliding",) * c.n_layers
    for name in ("rope_local_theta", "query_pre_attn_scalar", "attn_softcap", "final_softcap"):
        value = getattr(c, name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number > 0 or None, got {value!r}")
            check_range(name, value, THETA_RANGE if name == "rope_local_theta" else SCALE_RANGE)
            setattr(c, name, float(value))          # (a Python float: no float64 promotion)
    check_range("rope_theta", c.rope_theta, THETA_RANGE)
    check_range("norm_eps", c.norm_eps, EPS_RANGE)
    for name, value in (c.rope_scaling or {}).items():
        if name in ("factor", "low_freq_factor", "high_freq_factor"):
            check_range(f"rope_scaling {name}", value, SCALE_RANGE)
    for name in ("sandwich_norms", "embed_scale"):
        if not isinstance(getattr(c, name), bool):
            raise ValueError(f"{name} must be True or False, got {getattr(c, name)!r}")
    if (c.sliding_window is not None or c.sandwich_norms or c.embed_scale or c.ffn == "geglu"
            or c.rope_local_theta is not None) and (c.norm, c.position) != ("rmsnorm", "rope"):
        raise ValueError("sliding_window, sandwich_norms, embed_scale, ffn='geglu' and rope_local_theta "
                         "need norm='rmsnorm' and RoPE")
    if c.ffn == "geglu" and c.mlp_bias:
        raise ValueError("mlp_bias=True with ffn='geglu' is not supported "
                         "(minillm's GeGLU FFN has no bias terms)")
