"""OLMoE: Llama's pre-norms, OLMo 2's q/k norms over the whole width (``qk_norm_whole``: one
RMSNorm over all H·D of q, KV·D of k), and a mixture of experts on every FFN whose routing
weights are not renormalised by default (``norm_topk_prob`` false).

HF names: ``model_type`` "olmoe", ``num_experts``, ``num_experts_per_tok``, ``norm_topk_prob``,
the experts' F as ``intermediate_size``, tensors named as Qwen3-MoE's; transformers' OlmoeConfig
defaults (``rms_norm_eps`` 1e-5, ``max_position_embeddings`` 4096). GGUF:
``general.architecture`` "olmoe" (io/gguf/families.py: llama.cpp never renormalises, needs
output.weight and KV = H). Refused: ``clip_qkv``, ``attention_bias``, H·D != C.
"""
from __future__ import annotations

from minillm.families import Family
from minillm.families.qwen3_moe import EXPERTS


def hf_switches(d: dict) -> dict:
    """OLMoE's refusals: clipped q, k, v and a q_norm that is not hidden_size wide."""
    if d.get("clip_qkv") is not None:
        raise ValueError(f"config.json clip_qkv {d['clip_qkv']!r} (OLMoE's q, k, v clipped "
                         f"to ±clip_qkv) is not supported: minillm reads clip_qkv null only")
    if (d.get("head_dim") or d["hidden_size"] // d["num_attention_heads"]) * \
            d["num_attention_heads"] != d["hidden_size"]:
        raise ValueError("an olmoe config.json with head_dim · num_attention_heads != "
                         "hidden_size is not supported (its q_norm is hidden_size wide)")
    return {}


def write_hf(c) -> dict:
    return {"model_type": "olmoe", "architectures": ["OlmoeForCausalLM"],
            "num_experts": c.n_experts, "num_experts_per_tok": c.n_experts_used,
            "norm_topk_prob": c.norm_topk_prob, "clip_qkv": None}


def gguf_problems(c) -> list:
    """What llama.cpp's olmoe cannot run (io/gguf/families.py's family_arch refuses it)."""
    return [("a head width other than C / H", c.head_dim is not None),
            ("tied embeddings (llama.cpp's olmoe needs output.weight)", c.tie_embeddings),
            ("renormalised routing weights (norm_topk_prob)", c.norm_topk_prob),
            ("grouped-query attention (its attn_k_norm is C wide: KV·D = C)",
             c.n_kv_heads != c.n_heads), ("layers without RoPE", bool(c.nope_layers))]

FAMILY = Family(
    name="olmoe", base="llama",
    summary="Llama pre-norms, whole-width q/k norms, mixture of experts (not renormalised)",
    hf_model_types=("olmoe",), hf_architecture="OlmoeForCausalLM",
    switches={"qk_norm": True, "qk_norm_whole": True}, refuses_attention_bias=True,
    hf_keys=("num_experts", "num_experts_per_tok", "norm_topk_prob", "clip_qkv"),
    hf_defaults={"rms_norm_eps": 1e-5, "max_position_embeddings": 4096, "norm_topk_prob": False},
    hf_switches=hf_switches, experts={**EXPERTS, "d_ff": None},
    hf_marks=lambda c: c.qk_norm_whole, write_hf=write_hf,
    gguf_architectures=("olmoe",), gguf_problems=gguf_problems,
    gguf_marks=lambda c: bool(c.n_experts) and c.qk_norm_whole, gguf_rank=40, gguf_experts=False,
    gguf_keys=("expert_count", "expert_used_count"),
    chat_formats=(),
    refuses=("clip_qkv", "attention_bias=true", "head_dim · num_attention_heads != hidden_size",
             "in GGUF: tied embeddings, grouped-query attention, norm_topk_prob=true"))
