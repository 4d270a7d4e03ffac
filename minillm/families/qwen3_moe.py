"""Qwen3-MoE: Qwen3's attention (per-head q/k norms) with a mixture of experts on every FFN
(``model/moe.py``); the experts' width is its own key, and whether the k routing weights are
renormalised is config.json's ``norm_topk_prob``.

HF names: ``model_type`` "qwen3_moe", ``num_experts``, ``num_experts_per_tok``,
``moe_intermediate_size`` (the experts' F), ``norm_topk_prob``; tensors
``model.layers.{i}.mlp.gate.weight`` [E, C] and ``mlp.experts.{e}.{gate,up,down}_proj.weight``.
GGUF: ``general.architecture`` "qwen3moe", ``expert_feed_forward_length`` for F, experts stacked
as ``ffn_{gate,up,down}_exps``; llama.cpp always renormalises, so files read with it true.
"""
from __future__ import annotations

from minillm.families import Family

EXPERTS = {"d_ff": "moe_intermediate_size", "always_renormalise": False,
           "hf_prefix": "model.layers.{i}.mlp.",
           "hf_names": {"w_gate": "gate_proj", "w_up": "up_proj", "w_down": "down_proj"}}


def write_hf(c) -> dict:
    return {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"],
            "num_experts": c.n_experts, "num_experts_per_tok": c.n_experts_used,
            "moe_intermediate_size": c.d_ff, "norm_topk_prob": c.norm_topk_prob,
            "decoder_sparse_step": 1, "mlp_only_layers": []}


def gguf_switches(meta: dict, n_layers: int, d_model: int, n_heads: int) -> dict:
    """The experts' F (``qwen3moe.expert_feed_forward_length``)."""
    if meta.get("qwen3moe.expert_feed_forward_length") is None:
        raise ValueError("GGUF metadata lacks qwen3moe.expert_feed_forward_length")
    return {"d_ff": meta["qwen3moe.expert_feed_forward_length"]}


FAMILY = Family(
    name="qwen3_moe", base="llama",
    summary="Qwen3's attention with a mixture of experts on every FFN",
    hf_model_types=("qwen3_moe",), hf_architecture="Qwen3MoeForCausalLM",
    switches={"qk_norm": True}, refuses_attention_bias=True,
    hf_keys=("num_experts", "num_experts_per_tok", "moe_intermediate_size", "norm_topk_prob",
             "decoder_sparse_step", "mlp_only_layers"),
    experts=EXPERTS, hf_marks=lambda c: c.qk_norm and not c.qk_norm_whole, write_hf=write_hf,
    gguf_architectures=("qwen3moe",), gguf_experts=True, gguf_switches=gguf_switches,
    gguf_keys=("expert_count", "expert_used_count", "expert_feed_forward_length"),
    chat_formats=("qwen3",),
    refuses=("attention_bias=true", "decoder_sparse_step > 1 or mlp_only_layers",
             "norm_topk_prob=false in GGUF (llama.cpp renormalises)"))
