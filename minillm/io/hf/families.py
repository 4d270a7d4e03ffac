"""The parts of ``config.json`` that ``config.py`` reads and writes for several families at once: a
mixture of experts' keys (read as each family's ``experts`` declares them: minillm/families/),
Gemma 2 / 3's keys written back, OLMoE's names. Each family's own reading (its switches, defaults
and refusals) is its module in minillm/families/."""
from __future__ import annotations

import reprlib

from minillm.config import ModelConfig
from minillm.families.gemma2 import LAYER_TYPES, read_hf


GEMMA_LAYER_TYPES = LAYER_TYPES        # (its home: minillm/families/gemma2.py)


def _gemma(d: dict, model_type: str) -> ModelConfig:
    """Deprecated: ``minillm.families.gemma2.read_hf`` reads Gemma 2 / 3's config.json."""
    return read_hf({**d, "model_type": model_type})


def _experts(d: dict, model_type: str, spec: dict | None) -> dict:
    """A mixture of experts' ModelConfig fields from config.json ({} for a dense family), as the
    family's ``experts`` declares them (families/mixtral.py, qwen3_moe.py, olmoe.py):
    ``num_experts`` (or ``num_local_experts``: Mixtral's name, which transformers 5 writes for
    both), ``num_experts_per_tok``, the experts' F (``spec["d_ff"]``, else intermediate_size),
    ``norm_topk_prob`` unless the family always renormalises. Layers with a dense FFN
    (``decoder_sparse_step`` > 1, ``mlp_only_layers``) are refused."""
    if spec is None:
        return {}
    if "num_experts" not in d and "num_local_experts" in d:   # (either name, in transformers 5)
        d = {**d, "num_experts": d["num_local_experts"]}
    names = ("num_experts", "num_experts_per_tok") + ((spec["d_ff"],) if spec["d_ff"] else ())
    for key in names + ("decoder_sparse_step",):
        if key in d and (type(d[key]) is not int or d[key] <= 0):
            raise ValueError(f"config.json: {key} must be an integer > 0, got {reprlib.repr(d[key])}")
    if d.get("norm_topk_prob") is not None and not isinstance(d["norm_topk_prob"], bool):
        raise ValueError(f"config.json: norm_topk_prob must be true or false, got "
                         f"{reprlib.repr(d['norm_topk_prob'])}")
    missing = [k for k in names if k not in d]
    if missing:
        raise ValueError(f"a {model_type} config.json needs {missing}, which are missing")
    if d.get("decoder_sparse_step", 1) != 1 or d.get("mlp_only_layers"):
        raise ValueError(f"config.json decoder_sparse_step {d.get('decoder_sparse_step')!r}, "
                         f"mlp_only_layers {d.get('mlp_only_layers')!r}: minillm supports a mixture "
                         f"of experts on every layer only (decoder_sparse_step 1, no mlp_only_layers)")
    return {"n_experts": d[names[0]], "n_experts_used": d["num_experts_per_tok"],
            "norm_topk_prob": True if spec["always_renormalise"] else d.get("norm_topk_prob", False),
            **({"d_ff": d[spec["d_ff"]]} if spec["d_ff"] else {})}


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
