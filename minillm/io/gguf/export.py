"""A minillm model + tokenizer -> one GGUF file that llama.cpp and transformers load.

    model.save_gguf("shakespeare.gguf", tokenizer)                  # float32
    model.save_gguf("shakespeare-f16.gguf", tokenizer, dtype="f16")  # half the size

What is written, and why each choice is the one llama.cpp's own converter makes:

    general.architecture   "gpt2" (LayerNorm, GELU, learned positions), "llama" (RMSNorm,
                           SwiGLU, RoPE; Llama 3's RoPE scaling as the ``rope_freqs.weight``
                           divisors, ``gguf/rope_freqs.py``), "qwen2" (a Llama with Q/K/V biases:
                           llama.cpp runs it with rotate-half RoPE, so its Q/K rows are NOT
                           permuted) or "qwen3" (q/k norms ``attn_q_norm`` / ``attn_k_norm``; not
                           permuted either); a mixture of experts: "qwen3moe" (with q/k norms)
                           or "llama" with ``expert_count`` (Mixtral) or "olmoe" (whole-width q/k
                           norms, never renormalised), experts stacked as
                           ``ffn_{gate,up,down}_exps`` and the router ``ffn_gate_inp``
    {arch}.*               the shapes: context_length, embedding_length, block_count, ...
    tokenizer.ggml.*       the vocabulary, merges and pre-tokeniser name (``gguf/vocab.py``)
    the rest               carried from the source: ``model.gguf_metadata`` (``general.name``,
                           licence, ...) and ``tokenizer.gguf_metadata`` (chat template, padding
                           id, add_bos_token, ...), each with its own GGUF type (``gguf/carry.py``)
    tensors                GGUF names (``gguf/model.py``, ``gpt2_names.py``) in ``[out, in]``
                           row order; for ``llama``, Q and K rows permuted (``permute_qk``: the
                           reader's ``unpermute_qk`` undoes it exactly); 1-D tensors (norms, biases)
                           and GPT-2's ``position_embd`` always F32, the other matrices F32 / F16 /
                           Q8_0 (Q8_0 needs rows of 32k values: a matrix that has none stays F16)

Which tensors stay F32 whatever the dtype is llama.cpp's rule, in its converter
(``convert_hf_to_gguf.py``: 1-D tensors, ``*_norm.weight``, biases, ``POS_EMBD``) and its quantiser
(``llama-quant.cpp``: never quantises ``position_embd``). A GPT-2 file written otherwise loads, but
llama.cpp's logits then differ from its own conversion of the same weights.

Round trip: ``load_model(path)`` gives back the same config and, for F32, bit-identical weights
and logits (tests/io/test_gguf/export.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.io.gguf import gpt2_names
from minillm.io.gguf.carry import checked
from minillm.families import families, family_of_gguf
from minillm.io.gguf.families import family_arch, family_metadata, marked_family
from minillm.io.gguf.gemma import gemma_arch, window_metadata
from minillm.io.gguf.model import gguf_names
from minillm.io.gguf.qk_rows import PERMUTED_QK, permute_qk
from minillm.io.gguf.rope_freqs import freq_divisors
from minillm.io.gguf.vocab import tokenizer_metadata
from minillm.io.gguf.write import F16, F32, FLOAT32, Q8_0, STRING, UINT32, encode_tensor, write_gguf

# dtype -> (ggml type of the matrices, general.file_type: llama.cpp's ALL_F32 0, MOSTLY_F16 1,
# MOSTLY_Q8_0 7)
DTYPES = {"f32": (F32, 0), "f16": (F16, 1), "q8_0": (Q8_0, 7)}
ALWAYS_F32 = ("position_embd.weight",)   # matrices llama.cpp never converts or quantises


def gguf_arch(config: ModelConfig) -> str:
    """The llama.cpp architecture that runs exactly this config, or a ValueError."""
    if gpt2_names.is_gpt2(config):
        return "gpt2"
    if config.sandwich_norms:
        return gemma_arch(config)                  # gemma2 or gemma3 (gemma.py)
    if (config.embed_scale, config.attn_softcap, config.final_softcap, config.rope_local_theta,
            config.query_pre_attn_scalar) != (False, None, None, None, None):
        raise ValueError("embeddings × √C, soft-capping, rope_local_theta and "
                         "query_pre_attn_scalar are Gemma's: llama.cpp's llama, qwen2 and qwen3 "
                         "have none of them")
    if (config.norm, config.ffn, config.position) == ("rmsnorm", "swiglu", "rope") \
            and not config.mlp_bias:
        # the family each config is written as, and its order, are declared (families/:
        # gguf_marks, gguf_rank); Phi-3, OLMo 2, SmolLM3, OLMoE's refusals: gguf/families.py
        own = marked_family(config)
        arch = family_arch(config) or own.gguf_architectures[0]
        if config.qk_norm and config.attn_bias:       # (those four refuse biases: only qwen3 here)
            raise ValueError(f"llama.cpp's {arch} has no Q, K, V biases: a config with qk_norm "
                             f"and attn_bias cannot be exported")
        if config.n_experts and own.experts is None:   # (OLMoE's experts are its own: families.py)
            arch = _experts_arch(config)
        written = family_of_gguf(arch)                # (llama: families/llama.py)
        if config.sliding_window is not None and not written.gguf_window:
            raise ValueError(f"llama.cpp's {arch} has no sliding window: this config cannot be "
                             f"exported")
        if config.rope_scaling is not None and not written.gguf_rope_freqs:
            raise ValueError(f"llama.cpp reads RoPE scaling factors (rope_freqs) for llama files "
                             f"only, not {arch}: this config cannot be exported")
        return arch
    raise ValueError(f"no llama.cpp architecture runs norm={config.norm}, ffn={config.ffn}, "
                     f"position={config.position}, attn_bias={config.attn_bias}, mlp_bias="
                     f"{config.mlp_bias}, n_kv_heads={config.n_kv_heads}: GGUF export takes GPT-2 "
                     f"(layernorm, gelu_mlp, learned, all biases) or Llama (rmsnorm, swiglu, rope)")


def _experts_arch(config: ModelConfig) -> str:
    """The llama.cpp architecture of a mixture of experts: qwen3moe (q/k norms) or llama
    (Mixtral). Both renormalise the k routing weights and have no Q, K, V biases."""
    if not config.norm_topk_prob:
        raise ValueError("llama.cpp's llama and qwen3moe renormalise the routing weights: a "
                         "config with norm_topk_prob=False cannot be exported")
    if config.attn_bias:
        raise ValueError("llama.cpp's llama and qwen3moe experts models have no Q, K, V biases: "
                         "this config cannot be exported")
    # the families whose experts llama.cpp renormalises (gguf_experts): Qwen3-MoE's own
    # architecture when the config is its, else Llama's (Mixtral's files: families/mixtral.py)
    runs = [f for f in families().values() if f.gguf_experts and f.gguf_architectures]
    own = next((f for f in runs if f.experts is not None and f.hf_marks(config)), None) \
        or next(f for f in runs if f.experts is None)
    return own.gguf_architectures[0]


def arch_metadata(config: ModelConfig, arch: str) -> dict:
    """``{arch}.*`` keys: the numbers that fix the model's shape."""
    c, a = config, arch
    meta = {"general.architecture": (STRING, a),
            f"{a}.context_length": (UINT32, c.n_ctx), f"{a}.embedding_length": (UINT32, c.d_model),
            f"{a}.feed_forward_length": (UINT32, c.d_ff), f"{a}.block_count": (UINT32, c.n_layers),
            f"{a}.attention.head_count": (UINT32, c.n_heads)}
    if arch == "gpt2":
        meta[f"{a}.attention.layer_norm_epsilon"] = (FLOAT32, c.norm_eps)
        return meta
    meta.update({f"{a}.attention.head_count_kv": (UINT32, c.n_kv_heads),
                 f"{a}.attention.layer_norm_rms_epsilon": (FLOAT32, c.norm_eps),
                 f"{a}.rope.freq_base": (FLOAT32, c.rope_theta),
                 f"{a}.rope.dimension_count": (UINT32, c.d_head),
                 f"{a}.vocab_size": (UINT32, c.vocab_size)})
    if c.head_dim is not None:                     # heads apart from C / H, as the converter says
        meta.update({f"{a}.attention.key_length": (UINT32, c.d_head),
                     f"{a}.attention.value_length": (UINT32, c.d_head)})
    meta.update({key: (UINT32, value) for key, value in family_metadata(c, a).items()})
    meta |= window_metadata(c, a)                  # a window, Gemma's keys (gemma.py)
    if c.n_experts:                                # a mixture of experts (model/moe.py)
        meta.update({f"{a}.expert_count": (UINT32, c.n_experts),
                     f"{a}.expert_used_count": (UINT32, c.n_experts_used)})
        if arch == "qwen3moe":
            meta[f"{a}.expert_feed_forward_length"] = (UINT32, c.d_ff)
    if c.rope_scaling is not None:                 # the divisors are a tensor (gguf_tensors); L
        meta[f"{a}.rope.scaling.original_context_length"] = (        # for the reader (rope_freqs.py)
            UINT32, c.rope_scaling["original_max_position_embeddings"])
    return meta


def gguf_tensors(config: ModelConfig, named: dict[str, np.ndarray], arch: str) -> dict[str, np.ndarray]:
    """minillm's named float32 weights -> {GGUF name: [out, in] or [out] array}, in llama.cpp's
    row order (Q/K permuted for ``llama``, Q/K/V fused for ``gpt2``)."""
    out = {}
    for name, (gguf, transpose) in gguf_names(config).items():
        a = np.asarray(named[name], dtype=np.float32)                 # (an arena view: no copy)
        a = a.swapaxes(-1, -2) if transpose else a                   # [(E,) in, out] -> [(E,) out, in]
        kind = name.rsplit(".", 1)[-1]
        if arch in PERMUTED_QK and kind in ("wq", "bq", "wk", "bk"):
            a = permute_qk(a, config.n_heads if kind[-1] == "q" else config.n_kv_heads)
        out[gguf] = a
    if config.rope_scaling is not None:
        out["rope_freqs.weight"] = freq_divisors(config)              # [D/2] Llama 3's scaling
    own = family_of_gguf(arch)              # phi3: attn_qkv, ffn_up [2F, C]; gpt2: attn_qkv
    return own.gguf_fuse(out, config) if own is not None and own.gguf_fuse else out


def check_token_ids(meta: dict, vocab_size: int) -> None:
    """``tokenizer.ggml.*_token_id`` must name a row of the model: minillm (and llama.cpp) refuse
    a file whose BOS or EOS is past the vocabulary, so it is refused before it is written."""
    for key, (_, value) in meta.items():
        if key.startswith("tokenizer.ggml.") and key.endswith("_token_id") \
                and not 0 <= value < vocab_size:
            raise ValueError(f"GGUF field {key} = {value:,} is not a token id of the model's "
                             f"{vocab_size:,}-token vocabulary: allowed [0, {vocab_size:,})")


def save_gguf(path: str | Path, model, tokenizer, dtype: str = "f32") -> Path:
    """Write ``model`` and ``tokenizer`` to ``path`` as GGUF. dtype: "f32", "f16" or "q8_0"."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    if tokenizer is None:
        raise ValueError("a GGUF file carries its tokenizer: pass the model's Tokenizer")
    config = model.config
    arch = gguf_arch(config)
    matrix_type, file_type = DTYPES[dtype]
    meta = arch_metadata(config, arch)
    meta["general.file_type"] = (UINT32, file_type)
    if matrix_type == Q8_0:
        meta["general.quantization_version"] = (UINT32, 2)           # as ggml's quantisers write
    meta.update(tokenizer_metadata(tokenizer, config.vocab_size, config.bos_id, config.eos_id))
    # carried keys never collide with computed ones, except defaults such as add_bos_token = false
    meta.update(checked(getattr(model, "gguf_metadata", {}), "model"))
    meta.update(checked(getattr(tokenizer, "gguf_metadata", {}), "tokenizer"))
    check_token_ids(meta, config.vocab_size)
    tensors = {}
    for name, a in gguf_tensors(config, model.params.named(), arch).items():
        ggml_type = F32 if a.ndim == 1 or name in ALWAYS_F32 else matrix_type
        if ggml_type == Q8_0 and a.shape[-1] % 32:
            ggml_type = F16                                           # llama.cpp's fallback too
        tensors[name] = (ggml_type, a.shape, encode_tensor(a, ggml_type))
    path = Path(path)
    write_gguf(path, meta, tensors)
    return path
