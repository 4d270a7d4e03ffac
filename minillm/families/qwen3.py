"""Qwen3: a Llama whose attention RMS-normalises each head's q and k before RoPE (``qk_norm``),
which keeps the scores bounded as the model grows; its heads may be wider or narrower than
C / H (config.json ``head_dim``). No biases.

HF names: ``model_type`` "qwen3", Llama's keys and tensors plus
``model.layers.{i}.self_attn.{q,k}_norm.weight`` [D]. GGUF: ``general.architecture`` "qwen3",
``attn_q_norm`` / ``attn_k_norm``, ``qwen3.attention.key_length`` for D; Q/K rows not permuted.
Refused: ``attention_bias`` true (transformers' Qwen3 then biases o_proj too).
"""
from __future__ import annotations

from minillm.families import Family


def o_proj_bias(c) -> str | None:
    """Writing: Qwen3's attention_bias puts an o_proj bias too (minillm has none)."""
    if c.qk_norm and c.attn_bias:
        return ("Hugging Face's qwen3 models with Q, K, V biases have an o_proj bias "
                "too: a config with qk_norm and attn_bias cannot be saved as one")
    return None


FAMILY = Family(
    name="qwen3", base="llama",
    hf_refusals=((110, o_proj_bias),),
    summary="Llama with per-head q/k RMSNorm (qk_norm) and a free head width",
    hf_model_types=("qwen3",), hf_architecture="Qwen3ForCausalLM",
    switches={"qk_norm": True}, hf_keys=("head_dim",), refuses_attention_bias=True,
    hf_marks=lambda c: c.qk_norm and not c.post_norms,
    gguf_marks=lambda c: c.qk_norm, gguf_rank=50,
    gguf_architectures=("qwen3",), gguf_keys=("attention.key_length", "attention.value_length"),
    chat_formats=("qwen3",),
    refuses=("attention_bias=true (an o_proj bias)",))
