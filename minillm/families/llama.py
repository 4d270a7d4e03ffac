"""Llama (2, 3.x; SmolLM2 is one): the base of every RMSNorm / SwiGLU / RoPE family here.
Pre-norm RMSNorm blocks, SwiGLU FFN, rotary positions, grouped-query attention, no biases.
ModelConfig's ``arch="llama"`` defaults are exactly these, so it sets no switch; Llama 3.1 /
3.2's ``rope_scaling`` (rope_type "llama3") is a config.json key every derived family may carry.

HF names: ``model_type`` "llama", the keys io/hf/config.py reads for every Llama-derived family
(``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``, ``num_hidden_layers``,
``intermediate_size``, ``max_position_embeddings``, ``rms_norm_eps``, ``rope_theta``,
``head_dim``, ``rope_scaling`` / ``rope_parameters``), its tensor table in io/hf_names.py.
GGUF: ``general.architecture`` "llama", whose converter permutes Q/K rows for adjacent-pair RoPE
(io/gguf/qk_rows.py). minillm's own sliding-window and Mixtral files are llama files too
(``llama.attention.sliding_window``, ``llama.expert_count``): llama.cpp has no other name.
"""
from __future__ import annotations

from minillm.families import Family


def gguf_switches(meta: dict, n_layers: int, d_model: int, n_heads: int) -> dict:
    """A llama file's window (minillm's own Mistral files: every layer slides)."""
    window = meta.get("llama.attention.sliding_window")
    return {"sliding_window": window} if window else {}


FAMILY = Family(
    name="llama", base="llama",
    summary="RMSNorm, SwiGLU, RoPE, grouped-query attention: ModelConfig's arch='llama' defaults",
    hf_model_types=("llama",), hf_architecture="LlamaForCausalLM",
    hf_keys=("rope_scaling", "rope_parameters", "attention_bias", "mlp_bias"),
    gguf_architectures=("llama",), gguf_permuted_qk=True, gguf_experts=True,
    gguf_marks=lambda c: True, gguf_rank=70,     # (the last resort of every RMSNorm config)
    gguf_rope_freqs=True, gguf_window=True, hf_unmarked=lambda c: not c.attn_bias,      # (llama.cpp reads rope_freqs in llama files only)
    gguf_keys=("rope.scaling.original_context_length", "attention.sliding_window",
               "expert_count", "expert_used_count"),
    gguf_switches=gguf_switches,
    chat_formats=("llama3", "llama3.1", "llama3.2", "smollm2"),
    refuses=("hidden_act other than silu", "layer_types other than full_attention",
             "RoPE scaling other than llama3's (and linear / dynamic ones config.py names)"))
