"""The GPT-2 architecture in GGUF (``general.architecture = "gpt2"``), both directions.

llama.cpp's names for GPT-2 (``blk.{i}.`` prefix per layer; every weight ``[out, in]`` as NumPy)::

    token_embd.weight  [V, C]     -> wte                position_embd.weight [n_ctx, C] -> wpe
    output_norm.{weight,bias}     -> norm_f             output.weight [V, C] -> lm_head (ᵀ)
    attn_norm / ffn_norm .{weight,bias}                 -> norm1 / norm2
    attn_qkv.{weight [3C, C], bias [3C]}                -> wq | wk | wv (ᵀ), bq | bk | bv
    attn_output / ffn_up / ffn_down .{weight,bias}      -> wo / w_up / w_down (ᵀ), bo / b_up / b_down

Two differences from the Llama table (``gguf/model.py``):

- Q, K and V are ONE fused tensor, rows ``[Q; K; V]`` (HF's ``c_attn`` transposed). Here it is split
  into ``attn_q`` / ``attn_k`` / ``attn_v`` on reading and fused again on writing, so the rest of
  the name table is shared with Llama.
- llama.cpp's converter writes ``output.weight`` even when GPT-2 ties it to ``token_embd`` (a copy).
  The writer does the same (older llama.cpp builds require it); the reader ties the head again
  when the two tensors hold the same bytes, so a tied model comes back tied.
"""
from __future__ import annotations

import numpy as np

from minillm.config import ModelConfig
from minillm.io.gguf.values import metadata_number

BLOCK = {"norm1.weight": ("attn_norm.weight", False), "norm1.bias": ("attn_norm.bias", False),
         "attn.wq": ("attn_q.weight", True), "attn.wk": ("attn_k.weight", True),
         "attn.wv": ("attn_v.weight", True), "attn.bq": ("attn_q.bias", False),
         "attn.bk": ("attn_k.bias", False), "attn.bv": ("attn_v.bias", False),
         "attn.wo": ("attn_output.weight", True), "attn.bo": ("attn_output.bias", False),
         "norm2.weight": ("ffn_norm.weight", False), "norm2.bias": ("ffn_norm.bias", False),
         "ffn.w_up": ("ffn_up.weight", True), "ffn.b_up": ("ffn_up.bias", False),
         "ffn.w_down": ("ffn_down.weight", True), "ffn.b_down": ("ffn_down.bias", False)}
TOP = {"wte": ("token_embd.weight", False), "wpe": ("position_embd.weight", False),
       "norm_f.weight": ("output_norm.weight", False), "norm_f.bias": ("output_norm.bias", False),
       "lm_head": ("output.weight", True)}
_QKV = ("attn_q", "attn_k", "attn_v")


def is_gpt2(config: ModelConfig) -> bool:
    """Is this config exactly what llama.cpp runs as ``gpt2``? (LayerNorm, GELU MLP, learned
    positions, every bias, full attention.)"""
    return (config.norm, config.ffn, config.position) == ("layernorm", "gelu_mlp", "learned") \
        and config.attn_bias and config.mlp_bias and config.n_kv_heads == config.n_heads


def gpt2_config(meta: dict, tensors: dict, tied: bool) -> ModelConfig:
    """``gpt2.*`` metadata (+ the tensor table, for the vocabulary size) -> ModelConfig."""
    def key(name):
        if f"gpt2.{name}" not in meta:
            raise ValueError(f"GGUF metadata lacks gpt2.{name}")
        return meta[f"gpt2.{name}"]

    return ModelConfig(
        vocab_size=tensors["token_embd.weight"].shape[0], n_ctx=key("context_length"),
        d_model=key("embedding_length"), n_heads=key("attention.head_count"),
        n_layers=key("block_count"), d_ff=key("feed_forward_length"),
        norm_eps=metadata_number(meta, "gpt2.attention.layer_norm_epsilon"), arch="gpt2",
        tie_embeddings=tied,
        bos_id=meta.get("tokenizer.ggml.bos_token_id"), eos_id=meta.get("tokenizer.ggml.eos_token_id"))


def head_is_tied(g) -> bool:
    """No ``output.weight``, or one byte-for-byte equal to ``token_embd.weight`` (the converter's
    copy of a tied head)."""
    if "output.weight" not in g.tensors:
        return True
    out, emb = g.tensors["output.weight"], g.tensors["token_embd.weight"]
    return (out.ggml_type, out.shape) == (emb.ggml_type, emb.shape) \
        and np.array_equal(g.raw("output.weight"), g.raw("token_embd.weight"))


def split_qkv(g, config: ModelConfig):
    """-> (tensor names, get(name) -> float32 array) with every ``attn_qkv`` split in three and a
    duplicated tied head left out."""
    names = set(g.tensors) - ({"output.weight"} if config.tie_embeddings else set())
    C = config.d_model
    for i in range(config.n_layers):
        for kind in ("weight", "bias"):
            if f"blk.{i}.attn_qkv.{kind}" in names:
                names.remove(f"blk.{i}.attn_qkv.{kind}")
                names |= {f"blk.{i}.{part}.{kind}" for part in _QKV}

    def get(name: str) -> np.ndarray:
        block, _, rest = name.rpartition(".attn_")
        part, _, kind = rest.partition(".")
        if not block.startswith("blk.") or f"attn_{part}" not in _QKV:
            return g.tensor(name)
        fused = g.tensor(f"{block}.attn_qkv.{kind}")                # [3C, C] or [3C]
        j = _QKV.index(f"attn_{part}")
        return fused[j * C:(j + 1) * C]                             # [C, C] or [C]: rows of Q, K or V

    return names, get


def fuse_qkv(tensors: dict[str, np.ndarray], config: ModelConfig) -> dict[str, np.ndarray]:
    """The writer's direction: ``blk.i.attn_{q,k,v}.*`` -> one ``blk.i.attn_qkv.*`` ([Q; K; V] rows),
    and a tied head written out as a copy of ``token_embd``; the order of the others is kept."""
    out = {}
    for name, a in tensors.items():
        block, _, rest = name.rpartition(".attn_")
        if block.startswith("blk.") and rest.split(".")[0] in ("q", "k", "v"):
            if rest.startswith("q."):
                kind = rest[2:]
                parts = [tensors[f"{block}.attn_{p}.{kind}"] for p in "qkv"]
                out[f"{block}.attn_qkv.{kind}"] = np.concatenate(parts, axis=0)   # [3C, C] / [3C]
            continue
        out[name] = a
    if config.tie_embeddings:
        out["output.weight"] = out["token_embd.weight"]                          # [V, C]
    return out
