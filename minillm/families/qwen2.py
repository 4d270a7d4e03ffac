"""Qwen2 (2.5): a Llama with biases on Q, K and V (and none on O). That is its one change: the
biases let its attention shift each projection, and transformers' Qwen2 default is
``attention_bias`` true, which this module declares (Llama's default is false).

HF names: ``model_type`` "qwen2", Llama's keys and tensors (plus q/k/v_proj.bias). GGUF:
``general.architecture`` "qwen2", Llama's names; llama.cpp rotates its heads in halves (NEOX
RoPE) so its converter does NOT permute Q/K rows. Refused: ``use_sliding_window`` true.
"""
from __future__ import annotations

from minillm.families import Family

FAMILY = Family(
    name="qwen2", base="llama",
    summary="Llama with Q, K, V biases (attention_bias defaults to true)",
    hf_model_types=("qwen2",), hf_architecture="Qwen2ForCausalLM",
    hf_keys=("use_sliding_window",), hf_defaults={"attention_bias": True},
    gguf_architectures=("qwen2",), gguf_marks=lambda c: c.attn_bias, gguf_rank=60,
    hf_unmarked=lambda c: c.attn_bias,     # (Llama's attention_bias adds an o_proj bias too)
    chat_formats=("qwen2.5", "chatml"),
    refuses=("use_sliding_window=true",))
