"""What ``ModelConfig`` refuses, and how it normalises what it accepts (``config.py`` holds the
concept; this module the checks its ``__post_init__`` runs after ``arch`` has filled the defaults).

Every size is a positive integer at most 2³² − 1 (GGUF stores them as uint32); every switch one of
its choices; the shapes fit together (C divisible by H unless ``head_dim`` is given, H a multiple of
KV, D even under RoPE); ``norm_eps``, ``rope_theta`` finite and > 0, stored as Python floats; EOS
ids in the vocabulary, ``eos_id`` first. A ValueError names the field, what it got and what is
allowed (tests/test_config_refusals.py).
"""
from __future__ import annotations

import math
import numbers

# the sizes, with their names in Hugging Face's config.json (for messages), and their bound
_SIZES = {"vocab_size": "config.json: vocab_size",
          "n_ctx": "config.json: max_position_embeddings or n_positions",
          "d_model": "config.json: hidden_size or n_embd",
          "n_heads": "config.json: num_attention_heads or n_head",
          "n_layers": "config.json: num_hidden_layers or n_layer",
          "d_ff": "config.json: intermediate_size or n_inner",
          "n_kv_heads": "config.json: num_key_value_heads"}
MAX_SIZE = 2**32 - 1
_CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "ffn": ("gelu_mlp", "swiglu", "geglu"),
    "position": ("learned", "rope"),
}


def check_config(c) -> None:
    """Check (and normalise, in place) a ``ModelConfig`` whose ``arch`` defaults are filled."""
    for name in _SIZES:
        value = getattr(c, name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if value > MAX_SIZE:        # no model is this large, and GGUF could not store it
            raise ValueError(f"{name} ({_SIZES[name]}) = {value:,} is out of range: allowed "
                             f"[1, {MAX_SIZE:,}] (GGUF stores it as a uint32)")
    for name in ("norm", "ffn", "position"):
        if getattr(c, name) not in _CHOICES[name]:
            raise ValueError(f"{name} must be one of {_CHOICES[name]}, got {getattr(c, name)!r}")
    if c.head_dim is not None and (type(c.head_dim) is not int
                                  or not 0 < c.head_dim <= MAX_SIZE):
        raise ValueError(f"head_dim must be an integer in [1, {MAX_SIZE:,}] or None, got "
                         f"{c.head_dim!r}")
    if c.head_dim is not None and c.head_dim * c.n_heads == c.d_model:
        c.head_dim = None            # subtle: one spelling of C / H, so equal configs compare equal
    if c.head_dim is None and c.d_model % c.n_heads:
        raise ValueError(f"d_model ({c.d_model}) must be divisible by n_heads ({c.n_heads})")
    if c.n_heads % c.n_kv_heads:
        raise ValueError(f"n_heads ({c.n_heads}) must be a multiple of n_kv_heads ({c.n_kv_heads})")
    if c.position == "rope" and c.d_head % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions: d_head ({c.d_head}) must be even")
    if c.ffn == "swiglu" and c.mlp_bias:
        raise ValueError("mlp_bias=True with a SwiGLU FFN is not supported (no published "
                         "Llama-family checkpoint uses it)")
    if (c.qk_norm or c.head_dim is not None) and (c.norm, c.position) != ("rmsnorm", "rope"):
        raise ValueError("qk_norm and head_dim (Qwen3's) need norm='rmsnorm' and RoPE")
    if c.rope_scaling is not None:
        if c.position != "rope":
            raise ValueError("rope_scaling needs position='rope'")
        c.rope_scaling = check_rope_scaling(c.rope_scaling)
    if (c.n_experts or c.n_experts_used) and not (type(c.n_experts) is type(
            c.n_experts_used) is int and 0 < c.n_experts_used <= c.n_experts <= MAX_SIZE
            and c.ffn == "swiglu"):
        raise ValueError(f"a mixture of experts needs ints 1 <= n_experts_used <= n_experts and "
                         f"ffn='swiglu', got {c.n_experts_used!r}, {c.n_experts!r}, "
                         f"{c.ffn!r}")
    for name in ("attn_bias", "mlp_bias", "tie_embeddings", "qk_norm", "norm_topk_prob"):
        if not isinstance(getattr(c, name), bool):
            raise ValueError(f"{name} must be True or False, got {getattr(c, name)!r}")
    for name in ("bos_id", "eos_id"):
        value = getattr(c, name)
        if value is not None and (type(value) is not int or value < 0):
            raise ValueError(f"{name} must be an integer id >= 0 or None, got {value!r}")
    if c.bos_id is not None and c.bos_id >= c.vocab_size:
        raise ValueError(f"bos_id (config.json: bos_token_id) = {c.bos_id:,} is not a token "
                         f"id of the {c.vocab_size:,}-token vocabulary: allowed "
                         f"[0, {c.vocab_size:,}) or None")
    for name in ("norm_eps", "rope_theta"):
        value = getattr(c, name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        # subtle: stored as a Python float: a NumPy float64 eps would promote every float32
        # activation it meets to float64 (``x / np.sqrt(var + eps)`` in the norms).
        setattr(c, name, float(value))
    c.eos_ids = _eos_ids(c.eos_id, c.eos_ids, c.vocab_size)
    c.eos_id = c.eos_ids[0] if c.eos_ids else None
    _check_later_switches(c)
    from minillm.model.variants import check_variants
    check_variants(c)


# RoPE scaling: the parameters of each kind minillm implements, and the kinds it refuses by name
ROPE_SCALING = {"llama3": ("factor", "low_freq_factor", "high_freq_factor",
                           "original_max_position_embeddings")}
ROPE_SCALING_REFUSED = ("linear", "dynamic", "yarn", "longrope", "su", "ntk")


def check_rope_scaling(scaling) -> dict:
    """``{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192}`` -> the same dict, numbers as Python floats (the
    last an int), checked: every parameter present, > 0, low_freq_factor < high_freq_factor."""
    if not isinstance(scaling, dict):
        raise ValueError(f"rope_scaling must be a dict or None, got {type(scaling).__name__}")
    kind = scaling.get("rope_type")
    if kind in ROPE_SCALING_REFUSED:
        raise ValueError(f"RoPE scaling {kind!r} is not supported: minillm implements "
                         f"{sorted(ROPE_SCALING)} (Llama 3.1 / 3.2)")
    if kind not in ROPE_SCALING:
        raise ValueError(f"unknown RoPE scaling rope_type {kind!r}: minillm implements "
                         f"{sorted(ROPE_SCALING)}")
    names = ROPE_SCALING[kind]
    if set(scaling) != {"rope_type", *names}:
        raise ValueError(f"rope_scaling {kind!r} takes exactly {list(names)}, got "
                         f"{sorted(set(scaling) - {'rope_type'})}")
    out = {"rope_type": kind}
    for name in names:
        value = scaling[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value) or value <= 0:
            raise ValueError(f"rope_scaling {name} must be a finite number > 0, got {value!r}")
        if name.startswith("original") and value != int(value):
            raise ValueError(f"rope_scaling {name} must be an integer, got {value!r}")
        out[name] = int(value) if name.startswith("original") else float(value)
    if out["low_freq_factor"] >= out["high_freq_factor"]:
        raise ValueError(f"rope_scaling needs low_freq_factor < high_freq_factor, got "
                         f"{out['low_freq_factor']} and {out['high_freq_factor']}")
    return out


def _check_later_switches(c: ModelConfig) -> None:
    """Phi-3's, OLMo 2's and SmolLM3's switches: booleans / distinct layer indices, on Llamas."""
    for name in ("fused_projections", "post_norms", "qk_norm_whole", "nope_layers"):
        value = getattr(c, name)
        if name != "nope_layers" and not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        if value and (c.norm, c.ffn, c.position) != ("rmsnorm", "swiglu", "rope"):
            raise ValueError(f"{name} needs a Llama-family model (RMSNorm, SwiGLU, RoPE)")
    if c.qk_norm_whole and not c.qk_norm:
        raise ValueError("qk_norm_whole (OLMo 2's q, k norms over the whole width) needs qk_norm")
    if not isinstance(c.nope_layers, (tuple, list)) or not all(type(i) is int and 0 <= i <
            c.n_layers for i in c.nope_layers) or len(set(c.nope_layers)) != len(c.nope_layers):
        raise ValueError(f"nope_layers must be distinct layer indices in [0, {c.n_layers}), got "
                         f"{c.nope_layers!r}")
    c.nope_layers = tuple(sorted(c.nope_layers))


def _eos_ids(eos_id, eos_ids, vocab_size: int) -> tuple[int, ...]:
    """``eos_id`` first, then ``eos_ids``, without repeats; each an id in [0, vocab_size)."""
    ids = as_ids(eos_id) + as_ids(eos_ids)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < vocab_size:
            raise ValueError(f"EOS ids must be token ids in [0, {vocab_size}), got {i!r}")
    return tuple(dict.fromkeys(int(i) for i in ids))


def as_ids(value) -> tuple:
    """HF's ``eos_token_id``: None, one id or a list of ids -> a tuple of ids."""
    return () if value is None else tuple(value) if isinstance(value, (list, tuple)) else (value,)

