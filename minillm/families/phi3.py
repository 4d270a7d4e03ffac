"""Phi-3: a Llama whose files fuse Q, K, V into one ``qkv_proj`` and gate, up into one
``gate_up_proj`` (``fused_projections``): the same model, split on reading and fused again on
writing (io/hf_names.py's and io/gguf/families.py's rows [Q; K; V], [gate; up]).

HF names: ``model_type`` "phi3", ``model.layers.{i}.self_attn.qkv_proj.weight`` [H·D + 2·KV·D, C],
``mlp.gate_up_proj.weight`` [2F, C]; ``sliding_window``: transformers attends to the last W
positions, llama.cpp to all of them; the two agree while n_ctx <= W, so W caps n_ctx.
GGUF: ``general.architecture`` "phi3", ``attn_qkv``, ``ffn_up`` [2F, C],
``phi3.rope.scaling.original_context_length``, ``phi3.attention.sliding_window``.
Refused: H·D != C, ``partial_rotary_factor`` other than 1, ``attention_bias``.
"""
from __future__ import annotations

from minillm.families import Family


def hf_switches(d: dict) -> dict:
    """Phi-3's heads must tile C; its window caps the context (module docstring)."""
    if d.get("head_dim", d["hidden_size"] // d["num_attention_heads"]) * \
            d["num_attention_heads"] != d["hidden_size"]:
        raise ValueError("a phi3 config.json with head_dim · num_attention_heads != "
                         "hidden_size is not supported")
    n_ctx = d.get("max_position_embeddings", 2048)
    # subtle: transformers' Phi-3 attends only to the last ``sliding_window`` positions,
    # llama.cpp's phi3 to all of them; the two agree while n_ctx <= the window: cap n_ctx.
    return {"n_ctx": min(n_ctx, d["sliding_window"]) if d.get("sliding_window") else n_ctx}


def gguf_switches(meta: dict, n_layers: int, d_model: int, n_heads: int) -> dict:
    """A Phi-3 file's window caps its context, as config.json's does (hf_switches)."""
    from minillm.io.gguf.families import context_limit
    return {"n_ctx": context_limit(meta, "phi3", meta.get("phi3.context_length"))}


def write_gguf(config) -> dict:
    """The keys llama.cpp's converter adds for phi3 (no window: 0)."""
    return {"phi3.rope.scaling.original_context_length": config.n_ctx,
            "phi3.attention.sliding_window": 0}


def gguf_problems(c) -> list:
    """What llama.cpp's phi3 cannot run (io/gguf/families.py's family_arch refuses it)."""
    return [("a head width other than C / H", c.head_dim is not None), ("q/k norms", c.qk_norm),
            ("layers without RoPE", bool(c.nope_layers)),
            ("norms after the sub-layers", c.post_norms)]

def _fuse(tensors: dict, config) -> dict:
    """Writing: Q, K, V as one ``attn_qkv``, gate and up as one ``ffn_up`` (io/gguf/families.py)."""
    from minillm.io.gguf.families import fuse_phi3
    return fuse_phi3(tensors, config)


def plain_fused(c) -> str | None:
    """Writing: transformers' Phi-3 has no biases, q/k norms or norms after the sub-layers."""
    if c.fused_projections and (c.attn_bias or c.qk_norm or c.post_norms):
        return ("Hugging Face's phi3 models have no Q, K, V biases, q/k norms or norms "
                "after the sub-layers: this config cannot be saved as one")
    return None



def _split(g, config) -> tuple:
    """Reading: each fused tensor seen as its parts (io/gguf/families.py's split_phi3)."""
    from minillm.io.gguf.families import is_split, split_phi3
    names, get = split_phi3(g, config)
    return names, get, {n for n in names if is_split(n)}   # (ffn_up: a part, and in the file)


FAMILY = Family(
    name="phi3", base="llama",
    hf_refusals=((90, plain_fused),),
    summary="Llama with fused qkv_proj and gate_up_proj files",
    hf_model_types=("phi3",), hf_architecture="Phi3ForCausalLM",
    switches={"fused_projections": True}, refuses_attention_bias=True,
    hf_keys=("sliding_window", "partial_rotary_factor"), hf_switches=hf_switches,
    hf_marks=lambda c: c.fused_projections, write_gguf=write_gguf,
    gguf_problems=gguf_problems, gguf_marks=lambda c: c.fused_projections, gguf_rank=10,
    gguf_fuse=lambda tensors, config: _fuse(tensors, config), gguf_split=lambda g, c: _split(g, c),
    gguf_architectures=("phi3",), gguf_switches=gguf_switches,
    gguf_keys=("rope.scaling.original_context_length", "attention.sliding_window"),
    chat_formats=("phi3", "phi3.5"),
    refuses=("head_dim · num_attention_heads != hidden_size", "partial_rotary_factor != 1",
             "attention_bias=true", "in GGUF: RoPE scaling, q/k norms, a head width apart"))
