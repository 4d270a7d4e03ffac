"""Mixtral: a Llama whose every FFN is a mixture of experts (``model/moe.py``): a router sends
each token to k of E SwiGLU experts, so the model holds E FFNs' weights but runs k per token.
Its router always renormalises the k weights (``norm_topk_prob``).

HF names: ``model_type`` "mixtral", ``num_local_experts`` (or ``num_experts``, transformers 5),
``num_experts_per_tok``; tensors ``model.layers.{i}.block_sparse_moe.gate.weight`` (the router)
and ``block_sparse_moe.experts.{e}.w1`` (gate) / ``w3`` (up) / ``w2`` (down). GGUF: no
architecture of its own: ``llama`` with ``llama.expert_count`` (llama.py), experts stacked.
"""
from __future__ import annotations

from minillm.families import Family


def hf_switches(d: dict) -> dict:
    """Mixtral's experts with a window are refused (transformers' default is none)."""
    if d.get("sliding_window"):
        raise ValueError("a mixtral config.json with a sliding_window is not supported")
    return {}


def write_hf(c) -> dict:
    return {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
            "num_local_experts": c.n_experts, "num_experts_per_tok": c.n_experts_used,
            "sliding_window": None}


def renormalises(c) -> str | None:
    """Writing: transformers' Mixtral always renormalises (a Qwen3-MoE, with q/k norms, may not)."""
    if c.n_experts and not (c.norm_topk_prob or c.qk_norm):
        return ("Hugging Face's mixtral always renormalises the routing weights: a "
                "config with n_experts, norm_topk_prob=False and no qk_norm cannot be "
                "saved as one (Qwen3-MoE's, with q/k norms, can)")
    return None


def no_expert_biases(c) -> str | None:
    """Writing: neither Mixtral nor Qwen3-MoE has Q, K, V biases."""
    if c.n_experts and c.attn_bias:
        return ("Hugging Face's mixtral and qwen3_moe have no Q, K, V biases: this "
                "config cannot be saved as one")
    return None


FAMILY = Family(
    name="mixtral", base="llama",
    hf_refusals=((10, renormalises), (20, no_expert_biases)),
    summary="Llama with a mixture of experts on every FFN (routing weights renormalised)",
    hf_model_types=("mixtral",), hf_architecture="MixtralForCausalLM",
    hf_keys=("num_local_experts", "num_experts", "num_experts_per_tok"),
    hf_switches=hf_switches, hf_marks=lambda c: not c.qk_norm, write_hf=write_hf,
    experts={"d_ff": None, "always_renormalise": True,
             "hf_prefix": "model.layers.{i}.block_sparse_moe.",
             "hf_names": {"w_gate": "w1", "w_up": "w3", "w_down": "w2"}},
    chat_formats=("mistral",),
    refuses=("a sliding_window", "norm_topk_prob=false (when written: Mixtral always renormalises)",
             "decoder_sparse_step > 1 or mlp_only_layers (dense layers among the experts)"))
