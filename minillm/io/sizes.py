"""Does a config agree with a weights file? Checked from the file's header, BEFORE allocating.

A config.json with ``n_layer: 1000000000`` or a GGUF file whose ``block_count`` is 2³² − 1 is a
few bytes; believing it means building a billion-entry name table, or an arena of petabytes,
before the first "missing tensor" error. The weights file already says how many numbers it
holds, so the config must add up to exactly that:

    count(config) = V·C [wte] + n_ctx·C [wpe, GPT-2] + C·V [lm_head, untied] + norm_f
                    + L · ( 2 norms + C·HD + 2·C·KD + HD·C [Q KV V O] + (attention biases)
                            + (2·D: q and k norms, Qwen3)
                            + C·F + F·C [+ C·F gate] + (MLP biases) + (2 more norms, Gemma) )
                            (experts: E × the FFN + C·E)

with HD = H·D (query width) and KD = KV·D (key/value width). Example: GPT-2 small counts
124,439,808, the number of values in its model.safetensors (the fused c_attn included).
"""
from __future__ import annotations

import math

from minillm.config import ModelConfig


def parameter_count(c: ModelConfig) -> int:
    """The number of float parameters a model of config ``c`` holds (formula above)."""
    C, F, V = c.d_model, c.d_ff, c.vocab_size
    HD, KD = c.n_heads * c.d_head, c.n_kv_heads * c.d_head
    norm = C * (2 if c.norm == "layernorm" else 1)
    attn = C * HD + 2 * C * KD + HD * C + (HD + 2 * KD if c.attn_bias else 0) \
        + (C if c.mlp_bias else 0) + (2 * c.d_head if c.qk_norm else 0)    # (Qwen3's q, k norms)
    if c.qk_norm_whole:                 # OLMo 2's q and k norms span every head: H·D + KV·D
        attn += HD + KD - 2 * c.d_head
    ffn = C * F * (2 if c.ffn == "gelu_mlp" else 3) + (F + C if c.mlp_bias else 0)
    if c.n_experts:                                     # E experts and the router [C, E]
        ffn = c.n_experts * ffn + C * c.n_experts
    top = V * C + norm + (c.n_ctx * C if c.position == "learned" else 0) \
        + (0 if c.tie_embeddings else C * V)
    return top + c.n_layers * ((4 if c.sandwich_norms else 2) * norm + attn + ffn)   # (Gemma: 4)


def check_sizes(config: ModelConfig, shapes: dict[str, tuple], source: str,
                ignore=lambda name: False, expected_names=None) -> None:
    """Raise ValueError unless the tensors ``shapes`` (name -> shape, from a file's header) hold
    exactly ``parameter_count(config)`` values. ``ignore(name)`` leaves out buffers that are not
    parameters (GPT-2's causal-mask ``attn.bias``) and a tied LM head's copy. When the counts
    differ, ``expected_names()`` (cheap once the layers are bounded) names what is missing."""
    n_tensors = sum(1 for name in shapes if not ignore(name))
    if config.n_layers > n_tensors:     # each layer has several tensors: cheap first check
        raise ValueError(f"{source}: the config has {config.n_layers:,} layers but the weights "
                         f"file holds only {n_tensors:,} tensors")
    held = sum(math.prod(shape) for name, shape in shapes.items() if not ignore(name))
    wanted = parameter_count(config)
    if held != wanted and expected_names is not None:
        names = set(expected_names())
        missing, extra = sorted(names - set(shapes)), sorted(set(shapes) - names)
        if missing or extra:
            raise ValueError(f"{source}: the weights file is missing tensors {missing[:5]} and "
                             f"has tensors this config does not use {extra[:5]}")
    if held != wanted:
        raise ValueError(f"{source}: the config describes {wanted:,} parameters (n_layers "
                         f"{config.n_layers}, d_model {config.d_model}, vocab {config.vocab_size}, "
                         f"n_ctx {config.n_ctx}) but the weights file holds {held:,}: they do not "
                         f"belong together")
