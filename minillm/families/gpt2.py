"""GPT-2: the family every other one departs from. LayerNorm with biases, a GELU MLP, a learned
position table ``wpe``, biases everywhere, Q, K and V fused in one ``c_attn`` (Conv1D: stored
[in, out]). ModelConfig's ``arch="gpt2"`` defaults are exactly these, so it sets no switch.

HF names: ``model_type`` "gpt2", ``n_embd``, ``n_head``, ``n_layer``, ``n_positions``,
``n_inner``, ``layer_norm_epsilon`` (io/hf_names.py holds its tensor table: the one base table
besides Llama's). GGUF: ``general.architecture`` "gpt2", its own table in io/gguf/gpt2_names.py.
Refused: another activation than GELU (tanh), unscaled or per-layer-scaled attention.
"""
from __future__ import annotations

from minillm.config import ModelConfig, as_ids
from minillm.families import Family


def read_hf(d: dict) -> ModelConfig:
    """GPT-2's config.json (transformers' defaults: GPT-2 small) -> ModelConfig."""
    from minillm.io.hf.checks import _reject
    _reject(d, activation_function=("gelu_new", "gelu_pytorch_tanh"),
            scale_attn_weights=(True,), scale_attn_by_inverse_layer_idx=(False,))
    n_embd = d.get("n_embd", 768)
    return ModelConfig(vocab_size=d.get("vocab_size", 50257), n_ctx=d.get("n_positions", 1024),
                       d_model=n_embd, n_heads=d.get("n_head", 12), n_layers=d.get("n_layer", 12),
                       d_ff=d.get("n_inner") or 4 * n_embd,
                       norm_eps=d.get("layer_norm_epsilon", 1e-5), arch="gpt2",
                       tie_embeddings=d.get("tie_word_embeddings", True),
                       bos_id=d.get("bos_token_id"), eos_ids=as_ids(d.get("eos_token_id")))


def write_hf(c: ModelConfig) -> dict:
    """GPT-2's config.json keys for ``c`` (what ``read_hf`` reads back)."""
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
            "vocab_size": c.vocab_size, "n_positions": c.n_ctx, "n_ctx": c.n_ctx,
            "n_embd": c.d_model, "n_head": c.n_heads, "n_layer": c.n_layers, "n_inner": c.d_ff,
            "layer_norm_epsilon": c.norm_eps, "activation_function": "gelu_new",
            "tie_word_embeddings": c.tie_embeddings}


def _fuse(tensors: dict, config: ModelConfig) -> dict:
    """Writing: Q, K, V (and their biases) as one ``attn_qkv`` (io/gguf/gpt2_names.py)."""
    from minillm.io.gguf.gpt2_names import fuse_qkv
    return fuse_qkv(tensors, config)


def fused_biases(c) -> str | None:
    """Writing: GPT-2's c_attn always holds Q, K, V biases."""
    if c.arch == "gpt2" and not c.attn_bias:
        return ("Hugging Face's gpt2 checkpoints always hold Q, K, V biases (c_attn.bias):"
                " a config with attn_bias=False cannot be saved as one")
    return None



def _split(g, config: ModelConfig) -> tuple:
    """Reading: ``attn_qkv`` seen as ``attn_q``, ``attn_k``, ``attn_v`` (io/gguf/gpt2_names.py)."""
    from minillm.io.gguf.gpt2_names import split_qkv
    return (*split_qkv(g, config), set())          # (the parts are not in the file: no others)


FAMILY = Family(
    name="gpt2", base="gpt2",
    hf_refusals=((80, fused_biases),),
    summary="LayerNorm, GELU MLP, learned positions, biases: ModelConfig's arch='gpt2' defaults",
    hf_model_types=("gpt2",), hf_architecture="GPT2LMHeadModel",
    hf_keys=("n_embd", "n_head", "n_layer", "n_positions", "n_inner", "layer_norm_epsilon",
             "activation_function", "scale_attn_weights", "scale_attn_by_inverse_layer_idx"),
    read_hf=read_hf, write_hf=write_hf, hf_marks=lambda c: c.arch == "gpt2",
    gguf_architectures=("gpt2",), gguf_keys=("attention.layer_norm_epsilon",),
    gguf_fuse=lambda tensors, config: _fuse(tensors, config), gguf_split=lambda g, c: _split(g, c),
    chat_formats=(),
    refuses=("activation_function other than gelu_new / gelu_pytorch_tanh",
             "scale_attn_weights=false", "scale_attn_by_inverse_layer_idx=true"))
