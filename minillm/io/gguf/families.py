"""Phi-3, OLMo 2, SmolLM3 and OLMoE in GGUF, both directions, as llama.cpp's converter writes
them (``convert_hf_to_gguf.py``: Phi3MiniModel, Olmo2Model, SmolLM3Model, OlmoeModel) and
``src/llama-model.cpp`` loads them:

    phi3     Llama's names, but Q, K, V as ONE ``attn_qkv`` [H·D + 2·KV·D, C] (rows [Q; K; V])
             and gate, up as ONE ``ffn_up`` [2F, C] (rows [gate; up]: llama.cpp's SwiGLU takes
             the first half through SiLU); rotate-half RoPE (rows not permuted); the converter's
             ``phi3.rope.scaling.original_context_length`` and ``phi3.attention.sliding_window``
             (0: none). llama.cpp needs H·D = C (``attn_output`` [C, C]).
    olmo2    ``post_attention_norm`` / ``post_ffw_norm`` (minillm's norm1 / norm2, after the
             sub-layers; no attn_norm / ffn_norm), ``attn_q_norm`` [H·D] and ``attn_k_norm``
             [KV·D]; rotate-half RoPE; ``output.weight`` always (llama.cpp requires it, so a tied
             OLMo 2 is not written).
    smollm3  Llama's names, Q/K rows permuted as for ``llama``. The layers without RoPE are not
             in the file: llama.cpp fixes them to every 4th ((il + 1) % 4 == 0, transformers'
             default no_rope_layer_interval), so only that pattern is written, and read back.
    olmoe    Llama's names (attn_norm, ffn_norm: pre-norms), ``attn_q_norm`` [H·D] and
             ``attn_k_norm`` [KV·D] as olmo2's, the experts as qwen3moe's (``ffn_gate_inp``,
             ``ffn_{gate,up,down}_exps``; ``expert_count``, ``expert_used_count``, the experts'
             F as ``feed_forward_length``); rotate-half RoPE; ``output.weight`` always; no
             grouped-query attention (llama.cpp loads ``attn_k_norm`` [C] only). subtle:
             llama.cpp's olmoe graph never renormalises the k routing weights (transformers
             does when config.json says norm_topk_prob; OLMoE's releases say false): a file reads
             as norm_topk_prob=False, and a config with True is not written.

Each family's names, keys and switches are declared in its module (minillm/families/phi3.py,
olmo2.py, smollm3.py, olmoe.py), which ``gguf/model.py`` reads; what stays here is machinery:
Phi-3's fused rows split and joined (families/phi3.py's ``gguf_split`` / ``gguf_fuse`` call them),
``marked_family``, the family a config is exported as (each declares ``gguf_marks`` and
``gguf_rank``), and ``family_arch``, what llama.cpp's four cannot run (``gguf/export.py`` asks
both). Example: a 4-layer SmolLM3 file reads as ``nope_layers = (3,)``.
"""
from __future__ import annotations

import numpy as np

from minillm.config import ModelConfig
from minillm.families import Family, families, family, family_of_gguf
from minillm.families.smollm3 import NOPE_STEP, gguf_nope_layers as smollm3_nope_layers  # noqa: F401

# ("phi3", "olmo2", "smollm3", "olmoe"): the families declaring what llama.cpp cannot run of them
FAMILIES = tuple(f.name for f in sorted(families().values(), key=lambda f: f.gguf_rank)
                 if f.gguf_problems)
# (their homes: minillm/families/olmo2.py, smollm3.py; re-exported for old imports)
OLMO2_NORMS = family("olmo2").gguf_tensors


def marked_family(config: ModelConfig) -> Family:
    """The family whose llama.cpp architecture a Llama-shaped config is written as: of those
    whose ``gguf_marks`` the config has, the lowest ``gguf_rank`` (families/: phi3 10, olmo2 20,
    smollm3 30, olmoe 40, qwen3 50, qwen2 60, llama 70, which marks every config)."""
    marked = [f for f in families().values() if f.gguf_marks and f.gguf_marks(config)]
    if not marked:
        raise ValueError("no model family's GGUF architecture marks this config")
    return min(marked, key=lambda f: f.gguf_rank)


def family_arch(config: ModelConfig) -> str | None:
    """"phi3", "olmo2", "smollm3" or "olmoe" (a family declaring ``gguf_problems``) for a config
    of one of them (None: none), or a ValueError when llama.cpp's architecture cannot run it."""
    own = marked_family(config)
    if own.gguf_problems is None:
        return None
    arch = own.gguf_architectures[0]
    # the two every one of them refuses, then what its module declares (families/<arch>.py)
    problems = [why for why, bad in [("Q, K, V biases", config.attn_bias),
                                     ("RoPE scaling", config.rope_scaling is not None),
                                     *own.gguf_problems(config)] if bad]
    if problems:
        raise ValueError(f"llama.cpp's {arch} does not run {problems[0]}: this config cannot be "
                         f"exported")
    return arch


def family_metadata(config: ModelConfig, arch: str) -> dict:
    """The keys the converter adds for ``arch`` beyond the Llama ones: {key: value} (uint32),
    as the family module declares them (``write_gguf``: families/phi3.py)."""
    f = family_of_gguf(arch)
    return f.write_gguf(config) if f is not None and f.write_gguf else {}


def family_switches(meta: dict, arch: str, n_layers: int) -> dict:
    """Deprecated (use ``minillm.families.family_of_gguf(arch)``: its ``switches`` and
    ``gguf_switches``): ModelConfig's switches for a file of ``arch``."""
    f = family_of_gguf(arch)
    if f is None or arch not in FAMILIES:
        return {}
    meta = {f"{arch}.context_length": 1, **meta}     # (the context is not asked for here)
    own = f.gguf_switches(meta, n_layers, 0, 1) if f.gguf_switches else {}
    return {**f.switches, **{k: v for k, v in own.items() if k != "n_ctx"}}


def context_limit(meta: dict, arch: str, n_ctx: int) -> int:
    """The context a file of ``arch`` is read with when its window caps it (the family's
    ``gguf_switches`` asks: families/phi3.py): Phi-3-mini's files carry its sliding window
    (``phi3.attention.sliding_window`` 2047), which transformers applies and llama.cpp ignores;
    the two agree while no query looks further back than the window, so, as for Mistral's
    config.json (io/hf/config.py), the window caps the context."""
    window = meta.get(f"{arch}.attention.sliding_window", 0)    # (asked by families/phi3.py)
    if type(window) is not int or window < 0:
        raise ValueError(f"{arch}.attention.sliding_window must be an int >= 0, got {window!r}")
    return min(n_ctx, window) if window else n_ctx


def fuse_phi3(tensors: dict[str, np.ndarray], config: ModelConfig) -> dict[str, np.ndarray]:
    """Writing: ``blk.i.attn_{q,k,v}.weight`` -> ``attn_qkv`` ([Q; K; V] rows), ``ffn_gate`` and
    ``ffn_up`` -> ``ffn_up`` ([gate; up] rows); every other tensor as it is, in order."""
    out = {}
    for name, a in tensors.items():
        block, _, part = name.rpartition(".")[0].rpartition(".")
        if part in ("attn_q", "attn_k", "attn_v", "ffn_gate", "ffn_up"):
            if part == "attn_q":
                out[f"{block}.attn_qkv.weight"] = np.concatenate(
                    [tensors[f"{block}.attn_{x}.weight"] for x in "qkv"], axis=0)  # [H·D + 2·KV·D, C]
            if part == "ffn_gate":
                out[f"{block}.ffn_up.weight"] = np.concatenate(
                    [tensors[f"{block}.ffn_gate.weight"], tensors[f"{block}.ffn_up.weight"]])  # [2F, C]
            continue
        out[name] = a
    return out


def split_phi3(g, config: ModelConfig):
    """Reading: -> (tensor names, get(name) -> float32 array), every ``attn_qkv`` seen as
    ``attn_q``, ``attn_k``, ``attn_v`` and every ``ffn_up`` [2F, C] as ``ffn_gate``, ``ffn_up``."""
    HD, KD, F = config.n_heads * config.d_head, config.n_kv_heads * config.d_head, config.d_ff
    rows = {"attn_q": ("attn_qkv", 0, HD), "attn_k": ("attn_qkv", HD, HD + KD),
            "attn_v": ("attn_qkv", HD + KD, HD + 2 * KD),
            "ffn_gate": ("ffn_up", 0, F), "ffn_up": ("ffn_up", F, 2 * F)}
    names = set(g.tensors)
    for i in range(config.n_layers):
        for fused, want in (("attn_qkv", HD + 2 * KD), ("ffn_up", 2 * F)):
            name = f"blk.{i}.{fused}.weight"
            if name not in g.tensors:
                continue                                   # (named as missing by the reader)
            if tuple(g.tensors[name].shape) != (want, config.d_model):
                raise ValueError(f"tensor {name!r} has shape {g.tensors[name].shape}; the config "
                                 f"needs {(want, config.d_model)}")
            names.discard(name)
            names |= {f"blk.{i}.{part}.weight" for part, (f, _, _) in rows.items() if f == fused}

    def get(name: str) -> np.ndarray:
        block, _, part = name.rpartition(".")[0].rpartition(".")
        fused, r0, r1 = rows[part]
        return g.tensor(f"{block}.{fused}.weight")[r0:r1]          # [r1 − r0, C] rows of the fused

    return names, get


def is_split(name: str) -> bool:
    """Whether a Phi-3 reader's name is a part of a fused tensor (read through ``split_phi3``)."""
    return name.rsplit(".", 2)[-2] in ("attn_q", "attn_k", "attn_v", "ffn_gate", "ffn_up")
