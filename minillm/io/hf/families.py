"""Each model family's own part of ``config.json`` (``config.py`` reads and writes the rest):
Gemma 2 / 3's keys, a mixture of experts' (Mixtral, Qwen3-MoE, OLMoE), the switches of Phi-3, OLMo 2
and SmolLM3, each read into ModelConfig fields and written back."""
from __future__ import annotations

import reprlib

from minillm.config import ModelConfig, as_ids
from minillm.io.hf.checks import _reject, _rope


GEMMA_LAYER_TYPES = {"sliding_attention": "sliding", "full_attention": "full"}


def _gemma(d: dict, model_type: str) -> ModelConfig:
    """Gemma 2 / 3's config.json (transformers' defaults where a key is absent)."""
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
    if not isinstance(types, list) or any(t not in GEMMA_LAYER_TYPES for t in types):
        raise ValueError(f"config.json layer_types must list {sorted(GEMMA_LAYER_TYPES)}, got "
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
        layer_types=tuple(GEMMA_LAYER_TYPES[t] for t in types), rope_local_theta=local_theta,
        sandwich_norms=True, embed_scale=True,
        query_pre_attn_scalar=d.get("query_pre_attn_scalar", 256), **soft)


def _experts(d: dict, model_type: str) -> dict:
    """A mixture of experts' ModelConfig fields from config.json ({} for a dense family):
    ``num_experts`` (or ``num_local_experts``: Mixtral's name, which transformers 5 writes for
    both), ``num_experts_per_tok``; Mixtral's router always renormalises the k weights;
    Qwen3-MoE's ``moe_intermediate_size`` (the experts' F) and ``norm_topk_prob``. Qwen3-MoE
    layers with a dense FFN (``decoder_sparse_step`` > 1, ``mlp_only_layers``) are refused."""
    if model_type not in ("mixtral", "qwen3_moe", "olmoe"):
        return {}
    mixtral = model_type == "mixtral"
    if "num_experts" not in d and "num_local_experts" in d:   # (either name, in transformers 5)
        d = {**d, "num_experts": d["num_local_experts"]}
    names = ("num_experts", "num_experts_per_tok") + \
        (() if model_type in ("mixtral", "olmoe") else ("moe_intermediate_size",))   # (OLMoE: F)
    for key in names + ("decoder_sparse_step",):
        if key in d and (type(d[key]) is not int or d[key] <= 0):
            raise ValueError(f"config.json: {key} must be an integer > 0, got {reprlib.repr(d[key])}")
    if d.get("norm_topk_prob") is not None and not isinstance(d["norm_topk_prob"], bool):
        raise ValueError(f"config.json: norm_topk_prob must be true or false, got "
                         f"{reprlib.repr(d['norm_topk_prob'])}")
    missing = [k for k in names if k not in d]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    if mixtral and d.get("sliding_window"):
        raise ValueError("a mixtral config.json with a sliding_window is not supported")
    if d.get("decoder_sparse_step", 1) != 1 or d.get("mlp_only_layers"):
        raise ValueError(f"config.json decoder_sparse_step {d.get('decoder_sparse_step')!r}, "
                         f"mlp_only_layers {d.get('mlp_only_layers')!r}: minillm supports a mixture "
                         f"of experts on every layer only (decoder_sparse_step 1, no mlp_only_layers)")
    return {"n_experts": d[names[0]], "n_experts_used": d["num_experts_per_tok"],
            "norm_topk_prob": True if mixtral else d.get("norm_topk_prob", False),
            **({"d_ff": d["moe_intermediate_size"]} if "moe_intermediate_size" in names else {})}


_LATER = {"phi3": 10000.0, "olmo2": 10000.0, "smollm3": 2000000.0, "olmoe": 10000.0}   # (default theta)


def _later_switches(d: dict, model_type: str) -> dict:
    """The ModelConfig switches of Phi-3, OLMo 2 and SmolLM3 from their config.json."""
    if model_type == "phi3":
        if d.get("head_dim", d["hidden_size"] // d["num_attention_heads"]) * \
                d["num_attention_heads"] != d["hidden_size"]:
            raise ValueError("a phi3 config.json with head_dim · num_attention_heads != "
                             "hidden_size is not supported")
        return {"fused_projections": True}
    if model_type == "olmo2":
        return {"post_norms": True, "qk_norm_whole": True}
    if model_type == "olmoe":            # pre-norms as Llama's; q/k norms as OLMo 2's
        if d.get("clip_qkv") is not None:
            raise ValueError(f"config.json clip_qkv {d['clip_qkv']!r} (OLMoE's q, k, v clipped "
                             f"to ±clip_qkv) is not supported: minillm reads clip_qkv null only")
        if (d.get("head_dim") or d["hidden_size"] // d["num_attention_heads"]) * \
                d["num_attention_heads"] != d["hidden_size"]:
            raise ValueError("an olmoe config.json with head_dim · num_attention_heads != "
                             "hidden_size is not supported (its q_norm is hidden_size wide)")
        return {"qk_norm_whole": True}
    if model_type != "smollm3":
        return {}
    n, uses_rope = d["num_hidden_layers"], d.get("no_rope_layers")
    if uses_rope is None:                 # transformers' default: every interval-th layer
        interval = d.get("no_rope_layer_interval", 4)
        if type(interval) is not int or interval <= 0:
            raise ValueError(f"config.json: no_rope_layer_interval must be an integer > 0, got "
                             f"{reprlib.repr(interval)}")
        uses_rope = [int((i + 1) % interval != 0) for i in range(n)]
    # subtle: no_rope_layers[i] is 1 where layer i USES RoPE (transformers' SmolLM3Attention)
    if not isinstance(uses_rope, list) or len(uses_rope) < n or \
            any(type(u) is not int or u not in (0, 1) for u in uses_rope):
        raise ValueError(f"config.json: no_rope_layers must be a list of {n} or more 0/1 flags "
                         f"(1: the layer uses RoPE), got {reprlib.repr(uses_rope)}")
    return {"nope_layers": tuple(i for i in range(n) if uses_rope[i] == 0)}


def _olmoe_family(config: ModelConfig) -> tuple[str, str]:
    """OLMoE's names, or a ValueError for what its config.json cannot say (its q_norm is
    hidden_size wide: H·D = C)."""
    if config.d_head * config.n_heads != config.d_model or config.sliding_window is not None \
            or config.fused_projections or config.nope_layers:
        raise ValueError("Hugging Face's olmoe has H·D = C, no sliding window, no fused "
                         "projections and RoPE on every layer: this config cannot be saved as one")
    return "olmoe", "OlmoeForCausalLM"


def _gemma_dict(c: ModelConfig) -> dict:
    """Gemma 2's or (with q/k norms) Gemma 3's config.json keys."""
    gemma3 = c.qk_norm
    names = {v: k for k, v in GEMMA_LAYER_TYPES.items()}
    d = {"model_type": "gemma3_text" if gemma3 else "gemma2",
         "architectures": ["Gemma3ForCausalLM" if gemma3 else "Gemma2ForCausalLM"],
         "vocab_size": c.vocab_size, "max_position_embeddings": c.n_ctx,
         "hidden_size": c.d_model, "num_attention_heads": c.n_heads,
         "num_hidden_layers": c.n_layers, "intermediate_size": c.d_ff,
         "num_key_value_heads": c.n_kv_heads, "head_dim": c.d_head, "rms_norm_eps": c.norm_eps,
         "hidden_activation": "gelu_pytorch_tanh", "attention_bias": False,
         "query_pre_attn_scalar": _int_if_whole(c.query_pre_attn_scalar or c.d_head),
         "sliding_window": c.sliding_window or c.n_ctx,
         "layer_types": [names[t] for t in c.layer_types or ("full",) * c.n_layers],
         "attn_logit_softcapping": c.attn_softcap, "final_logit_softcapping": c.final_softcap,
         "rope_theta": c.rope_theta, "tie_word_embeddings": c.tie_embeddings}
    if gemma3:
        d["rope_local_base_freq"] = c.rope_local_theta or c.rope_theta
    if c.rope_scaling is not None:
        d["rope_scaling"] = dict(c.rope_scaling)
    return d


def _int_if_whole(x):
    """12.0 -> 12 (transformers' Gemma configs take an int), 12.5 stays."""
    return int(x) if x == int(x) else x


def _experts_hf(config: ModelConfig) -> dict:
    """config.json's keys for a mixture of experts: Qwen3-MoE when it has q/k norms, else
    Mixtral (``hf_names.named_to_hf`` refuses what neither can hold)."""
    if config.qk_norm_whole:                    # OLMoE: the experts' F is intermediate_size
        return {"model_type": "olmoe", "architectures": ["OlmoeForCausalLM"],
                "num_experts": config.n_experts, "num_experts_per_tok": config.n_experts_used,
                "norm_topk_prob": config.norm_topk_prob, "clip_qkv": None}
    if config.qk_norm:
        return {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"],
                "num_experts": config.n_experts, "num_experts_per_tok": config.n_experts_used,
                "moe_intermediate_size": config.d_ff, "norm_topk_prob": config.norm_topk_prob,
                "decoder_sparse_step": 1, "mlp_only_layers": []}
    return {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
            "num_local_experts": config.n_experts, "num_experts_per_tok": config.n_experts_used,
            "sliding_window": None}
