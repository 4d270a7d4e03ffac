"""config.json's values checked before they are used: each key's JSON type, the variants
minillm refuses by name, and the RoPE settings (theta, scaling) in either transformers layout."""
from __future__ import annotations

import numbers
import reprlib

from minillm.config import check_rope_scaling
from minillm.model.variants import check_layer_count


def _rope(d: dict, default_theta: float = 10000.0) -> tuple[float, dict | None]:
    """config.json's RoPE: (theta, scaling or None). transformers ≥ 5 writes one object,
    ``rope_parameters`` {rope_type, rope_theta, …}; older files ``rope_theta`` and ``rope_scaling``
    {rope_type (or type), factor, …}. Scaling kinds minillm does not implement are refused by
    name (``config.check_rope_scaling``)."""
    rope = {**(d.get("rope_scaling") or {}), **(d.get("rope_parameters") or {})}
    theta = rope.pop("rope_theta", d.get("rope_theta", default_theta))
    kind = rope.pop("rope_type", rope.pop("type", "default"))
    partial = rope.pop("partial_rotary_factor", d.get("partial_rotary_factor", 1.0))
    if partial != 1:                      # (Phi-3 writes 1.0 in rope_parameters)
        raise ValueError(f"partial rotary embeddings (partial_rotary_factor {partial!r}) are "
                         f"not supported: minillm rotates every dimension of a head")
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real) or abs(theta) > 1e300:
        raise ValueError(f"config.json: rope_theta must be a number (within ±1e300), got "
                         f"{reprlib.repr(theta)}")
    if kind == "default":
        if rope:
            raise ValueError(f"config.json's RoPE settings {sorted(rope)} are not supported")
        return float(theta), None
    return float(theta), check_rope_scaling({"rope_type": kind, **rope})

# config.json keys -> the JSON type they must have (checked before any arithmetic with them)
_SIZES = ("vocab_size", "n_positions", "n_embd", "n_head", "n_layer", "hidden_size",
          "num_attention_heads", "num_hidden_layers", "intermediate_size", "num_key_value_heads",
          "max_position_embeddings", "sliding_window", "head_dim", "n_inner")
_NULLABLE = ("n_inner", "sliding_window", "head_dim", "num_key_value_heads")
_NUMBERS = ("layer_norm_epsilon", "rms_norm_eps", "rope_theta", "rope_local_base_freq")
_BOOLS = ("tie_word_embeddings", "attention_bias", "mlp_bias", "use_sliding_window",
          "scale_attn_weights", "scale_attn_by_inverse_layer_idx")


def _check_json_types(d: dict) -> None:
    """A config.json field of the wrong JSON type is a ValueError naming it (not a TypeError or
    ZeroDivisionError deep inside): sizes are ints > 0, epsilons and theta numbers, switches
    true/false, token ids ints >= 0 (or a list of them for eos_token_id)."""
    def bad(key, allowed):
        raise ValueError(f"config.json: {key} must be {allowed}, got {reprlib.repr(d[key])}")
    for key in _SIZES:                 # null means "the default" only where HF writes it so
        if key in d and (d[key] is not None or key not in _NULLABLE) \
                and (type(d[key]) is not int or d[key] <= 0):
            bad(key, "an integer > 0")
    for key in ("num_hidden_layers", "n_layer"):     # (before any per-layer list is built)
        if key in d:
            check_layer_count(d[key], f"config.json: {key}")
    for key in _NUMBERS:
        if key in d and (isinstance(d[key], bool) or not isinstance(d[key], numbers.Real)
                         or not -1e300 < d[key] < 1e300):   # (a huge JSON int: no float has it)
            bad(key, "a number (within ±1e300)")
    for key in _BOOLS:
        if d.get(key) is not None and not isinstance(d[key], bool):
            bad(key, "true or false")
    for key in ("bos_token_id", "eos_token_id"):
        ids = d.get(key) if isinstance(d.get(key), list) and key == "eos_token_id" else [d.get(key)]
        if not all(i is None or (type(i) is int and i >= 0) for i in ids):
            bad(key, "an integer id >= 0" + (" or a list of them" if key[0] == "e" else ""))
    for key in ("rope_parameters", "rope_scaling"):
        if d.get(key) is not None and not isinstance(d[key], dict):
            bad(key, "an object")
    if not isinstance(d.get("model_type", "gpt2"), str):
        bad("model_type", "a string")


def _reject(d: dict, **allowed) -> None:
    """Raise when a config.json setting asks for a variant minillm does not implement."""
    for key, values in allowed.items():
        if key in d and d[key] not in values:
            raise ValueError(f"config.json has {key}={d[key]!r}; minillm supports {values}")
