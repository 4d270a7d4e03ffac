"""What training refuses before it starts: a config with a switch no backward is written for
(``check_trainable``), and a batch that is not [B, T] ids in range with a well-formed loss mask
and segments (``check_batch``). Each refusal is a ValueError saying what is allowed.

Example: ``check_trainable(ModelConfig(..., n_experts=8))`` raises ValueError (no backward for a
mixture of experts yet); ``check_batch(ids, targets, config)`` returns None for a good batch.
"""
from __future__ import annotations

import numpy as np

# the settings of ModelConfig's switches whose backward train/ writes (config.py's choices)
TRAINABLE = {"norm": ("layernorm", "rmsnorm"), "ffn": ("gelu_mlp", "swiglu"),
             "position": ("learned", "rope"),
             "qk_norm": (False,),       # Qwen3's q/k norms: not differentiated (yet)
             # a sliding window and Gemma's switches: not differentiated (yet)
             "sliding_window": (None,), "sandwich_norms": (False,), "embed_scale": (False,),
             "query_pre_attn_scalar": (None,), "attn_softcap": (None,), "final_softcap": (None,),
             "n_experts": (0,)}                # (no mixture of experts yet)


def check_trainable(config) -> None:
    """ValueError unless every switch of the config has a hand-written backward (``TRAINABLE``).

    Both families and their mixtures pass today; a config carrying a switch setting added to
    model/ later (and not yet differentiated here) is refused rather than trained wrongly."""
    wrong = {k: getattr(config, k) for k, allowed in TRAINABLE.items()
             if getattr(config, k) not in allowed}
    # (OLMo 2's and SmolLM3's forward; Phi-3's fused files train as Llama)
    wrong |= {k: getattr(config, k) for k in ("post_norms", "qk_norm_whole", "nope_layers")
              if getattr(config, k)}
    if wrong:
        raise ValueError(f"training has no backward for {wrong}: it supports {TRAINABLE}")


def check_batch(ids: np.ndarray, targets: np.ndarray, config, loss_mask=None, segments=None
                 ) -> None:
    """ValueError unless ids and targets are [B, T] integer arrays of ids in [0, V), T <= n_ctx,
    the loss mask [B, T] of 0/1 counting at least one target, the segments [B, T] non-decreasing.
    subtle: NumPy indexing would read a negative id as a row from the end of wte, silently."""
    for name, a in (("ids", ids), ("targets", targets)):
        if not isinstance(a, np.ndarray) or a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name} must be a [B, T] integer array, got "
                             f"{getattr(a, 'dtype', type(a).__name__)} {getattr(a, 'shape', '')}")
        if a.size and (a.min() < 0 or a.max() >= config.vocab_size):
            raise ValueError(f"{name} must be in [0, {config.vocab_size}), got range "
                             f"[{a.min()}, {a.max()}]")
    if ids.shape != targets.shape or not 1 <= ids.shape[1] <= config.n_ctx:
        raise ValueError(f"ids and targets must share one shape [B, T] with 1 <= T <= n_ctx = "
                         f"{config.n_ctx}, got {ids.shape} and {targets.shape}")
    if loss_mask is not None and (not isinstance(loss_mask, np.ndarray) or loss_mask.shape != ids.shape
                                  or not np.isin(loss_mask, (0, 1)).all() or not loss_mask.any()):
        raise ValueError(f"loss_mask must be a [B, T] = {ids.shape} array of 0/1 counting at least "
                         f"one target, got {getattr(loss_mask, 'shape', type(loss_mask).__name__)}")
    if segments is not None and (not isinstance(segments, np.ndarray) or segments.shape != ids.shape
                                 or not np.issubdtype(segments.dtype, np.integer)
                                 or (np.diff(segments, axis=1) < 0).any()):
        raise ValueError(f"segments must be a [B, T] = {ids.shape} integer array, non-decreasing "
                         f"along each row (one packed sequence after the other)")
