"""A llama.cpp GGUF file as a minillm model: metadata -> ModelConfig, tensors -> GPTParams.

    config, params, metadata = load_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")   # or load_model(path)

GGUF keeps the config in ``{arch}.*`` metadata keys and the tokenizer in ``tokenizer.ggml.*``
(read by ``Tokenizer.from_gguf_metadata``). Tensor names (``blk.{i}.`` prefix per layer)::

    token_embd.weight  [V, C]  -> wte               output_norm.weight -> norm_f.weight
    output.weight      [V, C]  -> lm_head (ᵀ)       absent when the embeddings are tied
    attn_norm / ffn_norm       -> norm1 / norm2     attn_q / attn_k / attn_v / attn_output -> wq…wo (ᵀ)
    ffn_gate / ffn_up / ffn_down -> w_gate / w_up / w_down (ᵀ)   attn_{q,k,v}.bias -> bq, bk, bv
    attn_q_norm / attn_k_norm  -> q_norm / k_norm (``qwen3``)    rope_freqs -> rope_scaling (Llama 3)
    ffn_gate_inp [E, C] -> router (ᵀ)   ffn_{gate,up,down}_exps [E, F, C] … -> w_gate … [E, C, F]
    (a mixture of experts: ``llama`` with ``expert_count`` (Mixtral), ``qwen3moe``; llama.cpp
    renormalises the k routing weights of both, so they load with norm_topk_prob=True; and
    ``olmoe``, which it never renormalises: norm_topk_prob=False, ``gguf/families.py``)

``gpt2`` files (fused ``attn_qkv``, learned ``position_embd``, LayerNorm biases) are read through
``gpt2_names.py``; ``gguf/export.py`` writes all three architectures.

Every weight is dequantised ONCE, at load, to float32 (see ``dequant.py``), straight into its
place in the model's parameters (plain arrays, or the engine's arena) one tensor at a time, so
loading peaks at the float32 weights plus one tensor. Why not keep it quantised (97 MB) and decode a matrix each time
it is used? Each token reads every weight, and NumPy's fast path is BLAS on float32: in one run
decoding all of SmolLM2-135M's tensors took 590 ms and a whole float32 decode step 40-60 ms, so
decoding on use would make every token ~10-15x slower (``benchmarks/bench_smollm2.py``; figures
in benchmarks/README.md). The price is memory: 134.5 M parameters x 4 bytes = 538 MB of float32
weights instead of 97 MB of quantised ones.

The one real trap, the Q/K row permutation
------------------------------------------
Hugging Face rotates pairs (j, j + D/2) of each head ("rotate half", ``model/rope.py``). llama.cpp
rotates adjacent pairs (2j, 2j + 1). So that the *same* weights give the *same* scores, llama.cpp's
converter (``convert_hf_to_gguf.py``, for the ``llama`` architecture) reorders the output rows of
``q_proj`` and ``k_proj`` (and of their biases, if any) inside every head, so that the two rows of
each rotated pair sit next to each other::

    one head, D = 8; a_j, b_j = the two rows HF rotates together (pair j)

    HF order    row  0   1   2   3   4   5   6   7       pair j = rows (j, j + 4)
                     a0  a1  a2  a3  b0  b1  b2  b3
    GGUF order  row  0   1   2   3   4   5   6   7       pair j = rows (2j, 2j + 1)
                     a0  b0  a1  b1  a2  b2  a3  b3

    permute:    head rows as [2, D/2] (s, j) -> transpose -> [D/2, 2] (j, s) -> flatten
    unpermute:  head rows as [D/2, 2] (j, s) -> transpose -> [2, D/2] (s, j) -> flatten

``unpermute_qk`` (``gguf/qk_rows.py``) is what the loader applies; ``permute_qk`` the converter's, for tests
that write GGUF files. Q is permuted head by head with H heads, K with its K (fewer, GQA) heads.
Qwen2 GGUF files are NOT permuted (llama.cpp runs them with its rotate-half "NEOX" RoPE), so the
loader undoes the permutation for ``llama`` files only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.io.gguf import gpt2_names
from minillm.io.gguf.dequant import DEQUANTIZERS, dequantize, dequantize_into
from minillm.families import families, family_of_gguf
from minillm.io.gguf.read import GGUF, read_gguf
from minillm.io.gguf.values import metadata_number
from minillm.io.gguf.qk_rows import PERMUTED_QK, unpermute_qk
from minillm.io.gguf.rope_freqs import llama3_scaling, read_divisors
from minillm.io.sizes import check_sizes
from minillm.model.params import GPTParams, empty_params
from minillm.model.variants import check_layer_count

# general.architecture values read here: every family module's (minillm/families/)
ARCHS = tuple(a for f in families().values() for a in f.gguf_architectures)

# minillm block name -> (GGUF name, transpose?). GGUF shapes come back as NumPy [out, in].
_BLOCK = {"norm1.weight": ("attn_norm.weight", False), "norm2.weight": ("ffn_norm.weight", False),
          "attn.wq": ("attn_q.weight", True), "attn.wk": ("attn_k.weight", True),
          "attn.wv": ("attn_v.weight", True), "attn.wo": ("attn_output.weight", True),
          "attn.bq": ("attn_q.bias", False), "attn.bk": ("attn_k.bias", False),
          "attn.bv": ("attn_v.bias", False),
          "attn.q_norm": ("attn_q_norm.weight", False), "attn.k_norm": ("attn_k_norm.weight", False),
          "ffn.w_gate": ("ffn_gate.weight", True), "ffn.w_up": ("ffn_up.weight", True),
          "ffn.w_down": ("ffn_down.weight", True)}   # (+ a family's own: its gguf_tensors)
_EXPERTS = {"ffn.router": ("ffn_gate_inp.weight", True), "ffn.w_gate": ("ffn_gate_exps.weight", True),
            "ffn.w_up": ("ffn_up_exps.weight", True), "ffn.w_down": ("ffn_down_exps.weight", True)}
NOT_WEIGHTS = ("rope_freqs.weight",)   # Llama 3's RoPE scaling: read into the config (rope_freqs.py)
_TOP = {"wte": ("token_embd.weight", False), "norm_f.weight": ("output_norm.weight", False),
        "lm_head": ("output.weight", True)}


def gguf_names(config: ModelConfig) -> dict[str, tuple[str, bool]]:
    """minillm name -> (GGUF tensor name, transpose?) for every tensor this config uses (GPT-2's
    table, with Q, K, V unfused, is in ``gpt2_names.py``)."""
    top, per_block = (gpt2_names.TOP, gpt2_names.BLOCK) if config.arch == "gpt2" else (_TOP, _BLOCK)
    for family in families().values():      # OLMo 2's norms, Gemma's post norms (their modules)
        if family.tensor_switch and getattr(config, family.tensor_switch):
            per_block = {**per_block, **family.gguf_tensors}
    per_block = {**per_block, **_EXPERTS} if config.n_experts else per_block   # (stacked experts)
    table = {k: v for k, v in top.items() if k != "lm_head" or not config.tie_embeddings}
    absent = (() if config.attn_bias else ("bq", "bk", "bv")) + \
             (() if config.qk_norm else ("q_norm", "k_norm"))
    for i in range(config.n_layers):
        for name, (gguf, transpose) in per_block.items():
            if name.split(".")[-1] in absent:
                continue
            table[f"blocks.{i}.{name}"] = (f"blk.{i}.{gguf}", transpose)
    return table


def gguf_config(meta: dict, tensors: dict, tied: bool | None = None,
                rope_freqs: np.ndarray | None = None) -> ModelConfig:
    """GGUF metadata (+ the tensor table, for the vocabulary size and tying) -> ModelConfig.
    ``tied`` (GPT-2 only) says whether ``output.weight`` is a copy of the embeddings;
    ``rope_freqs`` the values of ``rope_freqs.weight`` (Llama 3's RoPE scaling), if any."""
    arch = meta.get("general.architecture")
    family = family_of_gguf(arch) if isinstance(arch, str) else None
    if family is None:
        raise ValueError(f"general.architecture is {arch!r}; minillm reads {ARCHS}")
    if "token_embd.weight" not in tensors:
        raise ValueError("GGUF file has no token_embd.weight tensor")
    if family.base == "gpt2":
        return gpt2_names.gpt2_config(meta, tensors, "output.weight" not in tensors if tied is None
                                     else tied)

    def key(name, default=None):
        value = meta.get(f"{arch}.{name}", default)
        if value is None:
            raise ValueError(f"GGUF metadata lacks {arch}.{name}")
        return value

    scaling = meta.get(f"{arch}.rope.scaling.type", "none")
    if scaling != "none":
        raise ValueError(f"RoPE scaling {scaling!r} is not supported (Llama 3's is: "
                         f"rope_freqs.weight in a llama file)")
    if "rope_freqs.weight" in tensors and not family.gguf_rope_freqs:   # (families/llama.py)
        raise ValueError(f"rope_freqs.weight in a {arch} file is not supported (llama.cpp reads "
                         f"it in llama files only)")
    experts = _experts(meta, arch, family)
    d_model, n_heads = key("embedding_length"), key("attention.head_count")
    if not (type(d_model) is int and type(n_heads) is int and 0 < n_heads <= d_model):
        raise ValueError(f"{arch}.embedding_length ({d_model!r}) and .attention.head_count "
                         f"({n_heads!r}) must be ints with 0 < head_count <= embedding_length")
    head_dim = meta.get(f"{arch}.attention.key_length")           # (Qwen3: apart from C / H)
    if head_dim is not None and (type(head_dim) is not int or head_dim <= 0):
        raise ValueError(f"{arch}.attention.key_length must be an int > 0, got {head_dim!r}")
    d_head = d_model // n_heads if head_dim is None else head_dim
    for name in ("rope.dimension_count", "attention.value_length"):
        if meta.get(f"{arch}.{name}", d_head) != d_head:
            raise ValueError(f"{arch}.{name} = {meta[f'{arch}.{name}']} differs from the head "
                             f"width {d_head} (attention.key_length); not supported")
    theta = metadata_number(meta, f"{arch}.rope.freq_base", 10000.0)
    n_layers = key("block_count")
    check_layer_count(n_layers, f"GGUF metadata {arch}.block_count")   # (before per-layer lists)
    if rope_freqs is not None:
        rope_freqs = llama3_scaling(rope_freqs, d_head, theta,
                                    meta.get(f"{arch}.rope.scaling.original_context_length"))
    n_ctx = key("context_length")
    # the family's own (its module's gguf_switches: a window, Gemma's keys, the experts' F, …)
    own = family.gguf_switches(meta, n_layers, d_model, n_heads) if family.gguf_switches else {}
    d_ff = own["d_ff"] if "d_ff" in own else key("feed_forward_length")
    return ModelConfig(**{
        "vocab_size": tensors["token_embd.weight"].shape[0], "n_ctx": n_ctx,
        "d_model": d_model, "n_heads": n_heads, "n_layers": n_layers, "d_ff": d_ff,
        "n_kv_heads": key("attention.head_count_kv", n_heads),
        # subtle: eps is stored as float32 (SmolLM2: 9.99999975e-06 where HF's config says 1e-5);
        # the two are the same number once they meet float32 activations.
        "norm_eps": metadata_number(meta, f"{arch}.attention.layer_norm_rms_epsilon"),
        "arch": "llama", "attn_bias": "blk.0.attn_q.bias" in tensors, "mlp_bias": False,
        "rope_theta": theta, "rope_scaling": rope_freqs, "head_dim": head_dim,
        "tie_embeddings": "output.weight" not in tensors,
        "bos_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_id": meta.get("tokenizer.ggml.eos_token_id"),
        **experts, **family.switches, **own})


def _experts(meta: dict, arch: str, family) -> dict:
    """A mixture of experts' ModelConfig fields ({} for a dense file): ``{arch}.expert_count``
    and ``.expert_used_count``; whether llama.cpp renormalises the k weights is the family's
    ``gguf_experts`` (llama and qwen3moe always, olmoe never; None: no experts in its files).
    Shared experts (Qwen2-MoE's, DeepSeek's) are refused by name."""
    count, used = meta.get(f"{arch}.expert_count", 0), meta.get(f"{arch}.expert_used_count", 0)
    if meta.get(f"{arch}.expert_shared_count", 0):
        raise ValueError(f"{arch}.expert_shared_count: shared experts are not supported")
    if family.experts is not None and family.gguf_experts is not None and not count:
        raise ValueError(f"a {arch} file needs {arch}.expert_count > 0")
    if not count:
        return {}
    if type(count) is not int or type(used) is not int or not 0 < used <= count:
        raise ValueError(f"{arch}.expert_count ({count!r}) and .expert_used_count ({used!r}) "
                         f"must be ints with 0 < expert_used_count <= expert_count")
    if family.gguf_experts is None:
        readers = [a for f in families().values() if f.gguf_experts is not None
                   for a in f.gguf_architectures]
        raise ValueError(f"experts in a {arch} file are not supported ({', '.join(readers)} are)")
    return {"n_experts": count, "n_experts_used": used, "norm_topk_prob": family.gguf_experts}


def gguf_weights(g: GGUF, config: ModelConfig, params: GPTParams) -> GPTParams:
    """Dequantise every tensor to float32 straight into ``params`` (plain arrays or an engine
    arena's views, written through ``w[...] = …``), renamed (+ Q/K
    unpermuted, transposed) for minillm, reading one tensor's bytes at a time. A tensor stored as
    it is used is decoded in place, a slice at a time; one that is transposed or unpermuted goes
    through one float32 temporary."""
    table = gguf_names(config)
    available, get = set(g.tensors), g.tensor
    own, parts = family_of_gguf(g.metadata.get("general.architecture")), set()
    if own is not None and own.gguf_split:   # gpt2: attn_qkv -> attn_q, _k, _v; phi3: also
        available, get, parts = own.gguf_split(g, config)            # ffn_up [2F, C] (families/)
    missing = [(gguf, name) for name, (gguf, _) in table.items() if gguf not in available]
    if missing:
        raise ValueError(f"GGUF file is missing tensor {missing[0][0]!r} (minillm's {missing[0][1]})")
    unexpected = sorted(available - {gguf for gguf, _ in table.values()} - set(NOT_WEIGHTS))
    if unexpected:
        raise ValueError(f"GGUF file has tensors this config does not use: {unexpected[:5]}")
    permuted = g.metadata.get("general.architecture") in PERMUTED_QK    # (each family declares it)
    with open(g.path, "rb") as f:   # read, not mapped: the file's pages never count against us
        for name, out in params.named().items():
            gguf, transpose = table[name]
            kind = name.rsplit(".", 1)[-1]
            unpermute = permuted and kind in ("wq", "bq", "wk", "bk")
            if gguf not in g.tensors or gguf in parts:      # a part of a fused tensor
                a = get(gguf)                                       # [C, C] or [C] float32
                out[...] = a.T if transpose else a                  # [out, in] -> [in, out]
                continue
            info = g.tensors[gguf]
            stored = (*info.shape[:-2], *info.shape[:-3:-1]) if transpose else info.shape
            if stored != out.shape:             # (transposed: the last two axes, each expert's)
                raise ValueError(f"tensor {gguf!r} has shape {info.shape}; the config needs "
                                 f"{out.shape} for {name}{' (transposed)' if transpose else ''}")
            if info.ggml_type not in DEQUANTIZERS:
                raise ValueError(f"tensor {gguf!r} is {info.type_name}, which minillm cannot "
                                 f"dequantise; supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1")
            f.seek(g.data_offset + info.offset)
            raw = np.frombuffer(f.read(info.nbytes), np.uint8)     # [nbytes] one stored tensor
            if not (unpermute or transpose):
                dequantize_into(raw, info.ggml_type, out)           # in place, a slice at a time
                continue
            a = dequantize(raw, info.ggml_type, info.shape)         # [out, in] or [out] float32
            if unpermute:
                a = unpermute_qk(a, config.n_heads if kind[-1] == "q" else config.n_kv_heads)
            out[...] = a.swapaxes(-1, -2) if transpose else a       # [(E,) out, in] -> [(E,) in, out]
    return params


def read_gguf_config(path: str | Path) -> tuple[GGUF, ModelConfig]:
    """A GGUF file's index and its config, checked against the tensors before any allocation."""
    g = read_gguf(str(path))
    gpt2 = g.metadata.get("general.architecture") == "gpt2" and "token_embd.weight" in g.tensors
    tied = gpt2_names.head_is_tied(g) if gpt2 else None
    config = gguf_config(g.metadata, g.tensors, tied, read_divisors(g))
    check_sizes(config, {n: t.shape for n, t in g.tensors.items()}, str(path),  # before allocating
                ignore=lambda name: bool(tied) and name == "output.weight"  # a tied head's copy
                or name in NOT_WEIGHTS,
                expected_names=lambda: [gguf for gguf, _ in gguf_names(config).values()])
    return g, config


def load_gguf(path: str | Path) -> tuple[ModelConfig, GPTParams, dict]:
    """Read a GGUF file -> (config, float32 params of plain arrays, metadata)."""
    g, config = read_gguf_config(path)
    return config, gguf_weights(g, config, empty_params(config)), g.metadata
