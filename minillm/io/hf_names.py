"""Hugging Face checkpoint names <-> minillm names: one table per architecture.

This module only renames, splits and transposes; it never changes a value. Reading the file is
``checkpoints.py``; ``named_to_hf`` is the writing direction.

GPT-2 (``GPT2LMHeadModel``; names may carry a ``transformer.`` prefix):
    wte.weight [V, C] · wpe.weight [n_ctx, C] · ln_f.{weight,bias}
    h.{i}.ln_1 / ln_2.{weight,bias}
    h.{i}.attn.c_attn.{weight [C, 3C], bias [3C]}   Q, K and V fused (Conv1D: stored [in, out])
    h.{i}.attn.c_proj · h.{i}.mlp.c_fc [C, F] · h.{i}.mlp.c_proj [F, C]
    lm_head.weight [V, C] only when not tied (HF omits a tied one)
Llama / Qwen2 (``LlamaForCausalLM``; ``nn.Linear`` weights are stored [out, in]: transposed here):
    model.embed_tokens.weight · model.norm.weight · lm_head.weight (untied)
    model.layers.{i}.input_layernorm / post_attention_layernorm.weight
    model.layers.{i}.self_attn.{q,k,v,o}_proj.{weight,bias} · mlp.{gate,up,down}_proj.weight
Qwen3 (``Qwen3ForCausalLM``): Llama's names and model.layers.{i}.self_attn.{q,k}_norm.weight [D]
Phi-3 (``Phi3ForCausalLM``): Llama's names, but Q, K, V and gate, up fused (``fused_projections``):
    model.layers.{i}.self_attn.qkv_proj.weight [H·D + 2·KV·D, C]   rows [Q; K; V]
    model.layers.{i}.mlp.gate_up_proj.weight [2F, C]                rows [gate; up]
OLMo 2 (``Olmo2ForCausalLM``): the norms after the sub-layers, q/k norms over the whole width:
    model.layers.{i}.post_attention_layernorm -> norm1 · post_feedforward_layernorm -> norm2
    model.layers.{i}.self_attn.q_norm.weight [H·D] · k_norm.weight [KV·D]
SmolLM3 (``SmolLM3ForCausalLM``): Llama's names (its layers without RoPE are config.json's)
Gemma 2 / 3 (``Gemma2ForCausalLM``, ``Gemma3ForCausalLM``): Llama's names (Gemma 3 with q_norm,
    k_norm), four norms a block: input_layernorm (norm1), post_attention_layernorm
    (post_attn_norm), pre_feedforward_layernorm (norm2), post_feedforward_layernorm
    (post_ffn_norm). Gemma's RMSNorm multiplies by 1 + w: minillm keeps the gain 1 + w (as
    llama.cpp's converter stores it), so these are the one place a value changes on the way:
    + 1 when read, − 1 when written (``GAIN_SHIFT``, ``shifted_gains``).
Qwen3-MoE (``Qwen3MoeForCausalLM``): Qwen3's, the FFN as model.layers.{i}.mlp.gate.weight [E, C]
    (the router) and mlp.experts.{e}.{gate,up,down}_proj.weight, one file tensor per expert
OLMoE (``OlmoeForCausalLM``): Llama's pre-norms, OLMo 2's q_norm [H·D] / k_norm [KV·D], the
    FFN named as Qwen3-MoE's (mlp.gate.weight, mlp.experts.{e}.{gate,up,down}_proj.weight)
Mixtral (``MixtralForCausalLM``): Llama's attention, model.layers.{i}.block_sparse_moe.gate.weight
    and block_sparse_moe.experts.{e}.w1 (gate) / w3 (up) / w2 (down).weight
minillm stacks the experts ([E, C, F]: ``model/moe.py``); here expert e of ``blocks.0.ffn.w_up`` is
``blocks.0.ffn.w_up.{e}`` (``expert_views``).
"""
from __future__ import annotations

import numpy as np

from minillm.config import ModelConfig
from minillm.families import families
from minillm.io.hf.families import _experts_family

# minillm block name -> (HF name, transpose?) ; "{i}" is the layer.
_GPT2_BLOCK = {"norm1.weight": ("h.{i}.ln_1.weight", False), "norm1.bias": ("h.{i}.ln_1.bias", False),
               "attn.wo": ("h.{i}.attn.c_proj.weight", False), "attn.bo": ("h.{i}.attn.c_proj.bias", False),
               "norm2.weight": ("h.{i}.ln_2.weight", False), "norm2.bias": ("h.{i}.ln_2.bias", False),
               "ffn.w_up": ("h.{i}.mlp.c_fc.weight", False), "ffn.b_up": ("h.{i}.mlp.c_fc.bias", False),
               "ffn.w_down": ("h.{i}.mlp.c_proj.weight", False), "ffn.b_down": ("h.{i}.mlp.c_proj.bias", False)}
_GPT2_TOP = {"wte": ("wte.weight", False), "wpe": ("wpe.weight", False),
             "norm_f.weight": ("ln_f.weight", False), "norm_f.bias": ("ln_f.bias", False)}
_LLAMA_BLOCK = {"norm1.weight": ("model.layers.{i}.input_layernorm.weight", False),
                "attn.wq": ("model.layers.{i}.self_attn.q_proj.weight", True),
                "attn.wk": ("model.layers.{i}.self_attn.k_proj.weight", True),
                "attn.wv": ("model.layers.{i}.self_attn.v_proj.weight", True),
                "attn.wo": ("model.layers.{i}.self_attn.o_proj.weight", True),
                "attn.bq": ("model.layers.{i}.self_attn.q_proj.bias", False),
                "attn.bk": ("model.layers.{i}.self_attn.k_proj.bias", False),
                "attn.bv": ("model.layers.{i}.self_attn.v_proj.bias", False),
                "attn.q_norm": ("model.layers.{i}.self_attn.q_norm.weight", False),
                "attn.k_norm": ("model.layers.{i}.self_attn.k_norm.weight", False),
                "norm2.weight": ("model.layers.{i}.post_attention_layernorm.weight", False),
                "ffn.w_gate": ("model.layers.{i}.mlp.gate_proj.weight", True),
                "ffn.w_up": ("model.layers.{i}.mlp.up_proj.weight", True),
                "ffn.w_down": ("model.layers.{i}.mlp.down_proj.weight", True)}
_LLAMA_TOP = {"wte": ("model.embed_tokens.weight", False), "norm_f.weight": ("model.norm.weight", False)}
GAIN_SHIFT = 1.0        # Gemma: HF stores w, the norm multiplies by 1 + w
LM_HEAD = ("lm_head.weight", True)          # [V, C] in both formats; minillm keeps [C, V]
GPT2_BUFFERS = (".attn.bias", ".attn.masked_bias")   # older GPT-2 files' causal masks: not weights


def hf_table(config: ModelConfig) -> dict[str, tuple[str, bool]]:
    """The full minillm-name -> (HF name, transpose) table for this config."""
    top, per_block = (_GPT2_TOP, _GPT2_BLOCK) if config.arch == "gpt2" else (_LLAMA_TOP, _LLAMA_BLOCK)
    for fam in families().values():     # Gemma's four norms, OLMo 2's norms after (their modules)
        if fam.tensor_switch and getattr(config, fam.tensor_switch) and config.arch != "gpt2":
            per_block = {**per_block, **fam.hf_tensors}
    table = dict(top)
    for i in range(config.n_layers):
        table.update({f"blocks.{i}.{k}": (hf.format(i=i), t) for k, (hf, t) in per_block.items()})
    if not config.tie_embeddings:
        table["lm_head"] = LM_HEAD
    if config.n_experts:
        # a mixture of experts' names: (prefix, minillm -> HF names), as its family declares
        # them (families/mixtral.py, qwen3_moe.py; OLMoE's are Qwen3-MoE's)
        experts = _experts_family(config).experts
        prefix, names = experts["hf_prefix"], experts["hf_names"]
        for i in range(config.n_layers):
            p = prefix.format(i=i)
            table[f"blocks.{i}.ffn.router"] = (p + "gate.weight", True)     # [E, C] -> [C, E]
            for w, hf in names.items():
                del table[f"blocks.{i}.ffn.{w}"]
                table.update({f"blocks.{i}.ffn.{w}.{e}": (f"{p}experts.{e}.{hf}.weight", True)
                              for e in range(config.n_experts)})
    return table


def expert_views(named: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``named`` with each stack of experts [E, …] split into its E views: ``blocks.0.ffn.w_up``
    [E, C, F] -> ``blocks.0.ffn.w_up.0`` … [C, F] (what a Hugging Face file stores apart)."""
    out = {}
    for name, a in named.items():
        out.update({f"{name}.{e}": a[e] for e in range(len(a))} if a.ndim == 3 else {name: a})
    return out


def _fused_rows(config: ModelConfig, i: int) -> dict[str, tuple[str, slice]]:
    """Phi-3: minillm name -> (fused HF name, its rows), for layer ``i``: [Q; K; V], [gate; up]."""
    HD, KD, F = config.n_heads * config.d_head, config.n_kv_heads * config.d_head, config.d_ff
    qkv, gate_up = (f"model.layers.{i}.self_attn.qkv_proj.weight",
                    f"model.layers.{i}.mlp.gate_up_proj.weight")
    return {f"blocks.{i}.attn.wq": (qkv, slice(0, HD)), f"blocks.{i}.attn.wk": (qkv, slice(HD, HD + KD)),
            f"blocks.{i}.attn.wv": (qkv, slice(HD + KD, HD + 2 * KD)),
            f"blocks.{i}.ffn.w_gate": (gate_up, slice(0, F)), f"blocks.{i}.ffn.w_up": (gate_up, slice(F, 2 * F))}


def hf_sources(config: ModelConfig) -> dict[str, tuple[str, bool, slice | None]]:
    """minillm name -> (HF name, transpose?, columns or None) for every parameter of ``config``.
    The columns are those of minillm's [in, out] matrix a fused tensor holds (rows of a stored
    [out, in] one: Phi-3's)."""
    sources = {name: (hf, t, None) for name, (hf, t) in hf_table(config).items()}
    if config.arch == "gpt2":   # the fused QKV is split where a reader can see it
        C = config.d_model
        for i in range(config.n_layers):
            for j, x in enumerate("qkv"):
                cols = slice(j * C, (j + 1) * C)                              # [C, 3C] -> [C, C]
                sources[f"blocks.{i}.attn.w{x}"] = (f"h.{i}.attn.c_attn.weight", False, cols)
                sources[f"blocks.{i}.attn.b{x}"] = (f"h.{i}.attn.c_attn.bias", False, cols)
    else:
        absent = (() if config.attn_bias else ("bq", "bk", "bv")) + \
                 (() if config.qk_norm else ("q_norm", "k_norm"))
        sources = {k: v for k, v in sources.items() if k.split(".")[-1] not in absent}
    for i in range(config.n_layers if config.fused_projections else 0):
        sources |= {name: (hf, True, rows) for name, (hf, rows) in _fused_rows(config, i).items()}
    return sources



def shifted_gains(config: ModelConfig) -> list[str]:
    """The minillm names whose value is HF's + ``GAIN_SHIFT``: every RMSNorm gain of a Gemma."""
    if not config.sandwich_norms:
        return []
    return [name for name in hf_sources(config)
            if "norm" in name.split(".")[-2 if name.endswith(".weight") else -1]]


def _unnamed(named: dict[str, np.ndarray]):
    """A check: the parameters no HF name of the config carries (its table: ``hf_sources``)."""
    def check(config: ModelConfig) -> str | None:
        unnamed = sorted(set(named) - set(hf_sources(config)))
        return (f"Hugging Face's {config.arch} checkpoints have no name for {unnamed[:3]}"
                f"{'…' if len(unnamed) > 3 else ''}: this config cannot be saved as one"
                if unnamed else None)
    return check


# the (norm, ffn, position) each base's config.json says (Gemma's, with GeGLU, its own)
BASE_FORMULAS = {"gpt2": ("layernorm", "gelu_mlp", "learned"), "llama": ("rmsnorm", "swiglu", "rope")}
GEMMA_FORMULAS = ("rmsnorm", "geglu", "rope")


def _formulas(config: ModelConfig) -> str | None:
    """A check: the norm, FFN and positions must be those the base's config.json implies."""
    gemma = (config.sandwich_norms, config.embed_scale, config.ffn) == (True, True, "geglu")
    if (config.norm, config.ffn, config.position) != (GEMMA_FORMULAS if gemma
                                                      else BASE_FORMULAS[config.arch]):
        return (f"Hugging Face's {config.arch} models use {'/'.join(BASE_FORMULAS[config.arch])}; "
                f"this config has {config.norm}/{config.ffn}/{config.position}, which its "
                f"config.json cannot say (transformers would run another model)")
    return None


def _refusals(named: dict[str, np.ndarray]) -> list:
    """[(order, config -> why not, or None)]: every family's ``hf_refusals`` (families/) and the
    two of the names themselves, in their declared order (the first that applies is said)."""
    checks = [(30, _unnamed(named)), (70, _formulas)]
    checks += [(order, check) for f in families().values() for order, check in f.hf_refusals]
    return sorted(checks, key=lambda c: c[0])


def named_to_hf(named: dict[str, np.ndarray], config: ModelConfig) -> dict[str, np.ndarray]:
    """minillm flat names -> HF state dict (what ``checkpoints.load_weights`` reads back). A config whose
    parameters HF's names cannot all carry (a Llama with LayerNorm biases or learned positions,
    a GPT-2 without Q, K, V biases) is a ValueError: the file would not load."""
    named = expert_views(named)
    refusal = next((why for _, check in _refusals(named) if (why := check(config))), None)
    if refusal:
        raise ValueError(refusal)
    out, shifted = {}, set(shifted_gains(config))
    for name, (hf, transpose) in hf_table(config).items():
        if name in named:
            a = named[name].T if transpose else named[name]          # [in, out] -> [out, in]
            out[hf] = np.ascontiguousarray(a, dtype=np.float32)      # (arena views: engine/)
            if name in shifted:
                out[hf] = out[hf] - np.float32(GAIN_SHIFT)           # Gemma: the gain is 1 + w
    if config.arch == "gpt2":
        for i in range(config.n_layers):   # fuse Q, K, V back into Conv1D c_attn
            out[f"h.{i}.attn.c_attn.weight"] = np.concatenate(
                [named[f"blocks.{i}.attn.w{x}"] for x in "qkv"], axis=1)   # 3 × [C, C] -> [C, 3C]
            out[f"h.{i}.attn.c_attn.bias"] = np.concatenate(
                [named[f"blocks.{i}.attn.b{x}"] for x in "qkv"])                 # 3 × [C] -> [3C]
        out = {(k if k == LM_HEAD[0] else "transformer." + k): v for k, v in out.items()}
    table = hf_table(config)
    for i in range(config.n_layers if config.fused_projections else 0):   # Phi-3: fused again
        parts = {}
        for name, (fused, _) in _fused_rows(config, i).items():
            parts.setdefault(fused, []).append(out.pop(table[name][0]))   # [out, C] each
        out |= {fused: np.concatenate(rows, axis=0) for fused, rows in parts.items()}
    return out
