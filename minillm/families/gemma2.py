"""Gemma 2: RMSNorm before AND after each sub-layer (``sandwich_norms``; gains stored 1 + w),
GeGLU, embeddings × √C, sliding-window attention on every other layer (0, 2, 4, …), scores
scaled by ``query_pre_attn_scalar``^−½, and the scores (50) and logits (30) soft-capped.

HF names: ``model_type`` "gemma2"; ``head_dim``, ``query_pre_attn_scalar``, ``sliding_window``,
``layer_types``, ``attn_logit_softcapping``, ``final_logit_softcapping``,
``hidden_activation``; four norms a block: input_layernorm (norm1), post_attention_layernorm
(post_attn_norm), pre_feedforward_layernorm (norm2), post_feedforward_layernorm (post_ffn_norm).
GGUF: ``general.architecture`` "gemma2" (io/gguf/gemma.py: llama.cpp's fixed numbers and keys).
Refused: another activation than gelu_pytorch_tanh, biases, bidirectional attention.
"""
from __future__ import annotations

import reprlib

from minillm.config import ModelConfig, as_ids
from minillm.families import Family

LAYER_TYPES = {"sliding_attention": "sliding", "full_attention": "full"}


def read_hf(d: dict) -> ModelConfig:
    """Gemma 2 / 3's config.json (transformers' defaults where a key is absent)."""
    from minillm.io.hf.checks import _reject, _rope
    model_type = d.get("model_type")
    missing = [k for k in ("vocab_size", "hidden_size", "num_attention_heads", "num_hidden_layers",
                           "intermediate_size") if k not in d]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    _reject(d, hidden_activation=("gelu_pytorch_tanh",), hidden_act=("gelu_pytorch_tanh",),
            attention_bias=(False,), use_bidirectional_attention=(None, False))
    gemma3, L = model_type == "gemma3_text", d["num_hidden_layers"]
    types = d.get("layer_types")
    if types is None:               # Gemma 2: every other layer; Gemma 3: all but every 6th
        pattern = d.get("sliding_window_pattern", 6) if gemma3 else 2
        if type(pattern) is not int or pattern < 1:     # (0 would divide by zero below)
            raise ValueError(f"config.json: sliding_window_pattern must be an integer >= 1 "
                             f"(every n-th layer full), got {reprlib.repr(pattern)}")
        types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(L)]
    if not isinstance(types, list) or any(t not in LAYER_TYPES for t in types):
        raise ValueError(f"config.json layer_types must list {sorted(LAYER_TYPES)}, got "
                         f"{reprlib.repr(types)}")
    rope = d.get("rope_parameters") or {}
    local_theta = None
    if gemma3 and "full_attention" in rope:          # transformers 5: one RoPE per layer type
        local = rope.get("sliding_attention") or {}
        if local.get("rope_type", "default") != "default":
            raise ValueError(f"RoPE scaling {local!r} on Gemma 3's sliding layers is not supported")
        local_theta = local.get("rope_theta", 10000.0)
        theta, scaling = _rope({"rope_parameters": {"rope_theta": 1e6, **rope["full_attention"]}})
    else:
        theta, scaling = _rope({"rope_theta": 1e6 if gemma3 else 10000.0, **d})
        local_theta = d.get("rope_local_base_freq", 10000.0) if gemma3 else None
    soft = {"attn_softcap": d.get("attn_logit_softcapping", None if gemma3 else 50.0),
            "final_softcap": d.get("final_logit_softcapping", None if gemma3 else 30.0)}
    return ModelConfig(
        vocab_size=d["vocab_size"], n_ctx=d.get("max_position_embeddings", 8192),
        d_model=d["hidden_size"], n_heads=d["num_attention_heads"], n_layers=L,
        d_ff=d["intermediate_size"], n_kv_heads=d.get("num_key_value_heads") or d["num_attention_heads"],
        norm_eps=d.get("rms_norm_eps", 1e-6), arch="llama", ffn="geglu", attn_bias=False,
        head_dim=d.get("head_dim", 256), qk_norm=gemma3, rope_theta=theta, rope_scaling=scaling,
        tie_embeddings=d.get("tie_word_embeddings", True), bos_id=d.get("bos_token_id"),
        eos_ids=as_ids(d.get("eos_token_id")), sliding_window=d.get("sliding_window", 4096),
        layer_types=tuple(LAYER_TYPES[t] for t in types), rope_local_theta=local_theta,
        sandwich_norms=True, embed_scale=True,
        query_pre_attn_scalar=d.get("query_pre_attn_scalar", 256), **soft)


def write_hf(c: ModelConfig) -> dict:
    """Gemma 2's or (with q/k norms) Gemma 3's config.json keys (what ``read_hf`` reads back)."""
    names, scalar = {v: k for k, v in LAYER_TYPES.items()}, c.query_pre_attn_scalar or c.d_head
    d = {"model_type": "gemma3_text" if c.qk_norm else "gemma2",
         "architectures": ["Gemma3ForCausalLM" if c.qk_norm else "Gemma2ForCausalLM"],
         "vocab_size": c.vocab_size, "max_position_embeddings": c.n_ctx,
         "hidden_size": c.d_model, "num_attention_heads": c.n_heads,
         "num_hidden_layers": c.n_layers, "intermediate_size": c.d_ff,
         "num_key_value_heads": c.n_kv_heads, "head_dim": c.d_head, "rms_norm_eps": c.norm_eps,
         "hidden_activation": "gelu_pytorch_tanh", "attention_bias": False,
         "query_pre_attn_scalar": int(scalar) if scalar == int(scalar) else scalar,  # (an int)
         "sliding_window": c.sliding_window or c.n_ctx,
         "layer_types": [names[t] for t in c.layer_types or ("full",) * c.n_layers],
         "attn_logit_softcapping": c.attn_softcap, "final_logit_softcapping": c.final_softcap,
         "rope_theta": c.rope_theta, "tie_word_embeddings": c.tie_embeddings}
    if c.qk_norm:
        d["rope_local_base_freq"] = c.rope_local_theta or c.rope_theta
    if c.rope_scaling is not None:
        d["rope_scaling"] = dict(c.rope_scaling)
    return d


def gguf_switches(meta: dict, n_layers: int, d_model: int, n_heads: int) -> dict:
    """The window, layer types, soft-caps and scales of a gemma2 / gemma3 file (io/gguf/gemma.py)."""
    from minillm.io.gguf.gemma import window_config
    return window_config(meta, meta["general.architecture"], n_layers, d_model, n_heads)


HF_TENSORS = {"post_attn_norm.weight": ("model.layers.{i}.post_attention_layernorm.weight", False),
              "norm2.weight": ("model.layers.{i}.pre_feedforward_layernorm.weight", False),
              "post_ffn_norm.weight": ("model.layers.{i}.post_feedforward_layernorm.weight", False)}
GGUF_TENSORS = {"post_attn_norm.weight": ("post_attention_norm.weight", False),
                "post_ffn_norm.weight": ("post_ffw_norm.weight", False)}


FAMILY = Family(
    name="gemma2", base="llama",
    summary="sandwich norms, GeGLU, embeddings × √C, alternate sliding layers, soft-capping",
    hf_model_types=("gemma2",), hf_architecture="Gemma2ForCausalLM",
    switches={"ffn": "geglu", "sandwich_norms": True, "embed_scale": True},
    hf_keys=("head_dim", "query_pre_attn_scalar", "sliding_window", "layer_types",
             "attn_logit_softcapping", "final_logit_softcapping", "hidden_activation"),
    hf_marks=lambda c: c.arch == "llama" and c.sandwich_norms and not c.qk_norm,
    read_hf=read_hf, write_hf=write_hf, tensor_switch="sandwich_norms", hf_tensors=HF_TENSORS,
    gguf_fixed={"full_every": 2, "big_layers": 46, "caps": (50.0, 30.0), "local_theta": None,
                "needs_window": True},     # llama.cpp's numbers (io/gguf/gemma.py's docstring)
    gguf_architectures=("gemma2",), gguf_switches=gguf_switches, gguf_tensors=GGUF_TENSORS,
    gguf_keys=("attention.sliding_window", "attn_logit_softcapping", "final_logit_softcapping",
               "attention.sliding_window_pattern", "attention.query_pre_attn_scalar"),
    chat_formats=("gemma2",),
    refuses=("hidden_activation other than gelu_pytorch_tanh", "attention_bias=true",
             "use_bidirectional_attention=true", "in GGUF: no soft-caps, untied embeddings"))
