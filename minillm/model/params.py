"""The model's parameters: plain NumPy arrays in small dataclasses whose fields match the formulas.
Where it runs — shared (every loaded model's weights, the engine's arena too): GPTParams.from_named.

Every weight matrix is stored ``[in, out]`` and applied as ``x @ W`` (GPT-2's Conv1D layout), so a
reader sees ``q = x @ wq`` exactly as the math is written. Hugging Face ``nn.Linear`` weights
(``[out, in]``) are transposed once, at load time (``minillm/io/checkpoints.py``).

Flat names (``named()`` / ``from_named()``) look like ``blocks.0.attn.wq``; the optimiser, the
checkpoint code and the tests use them. ``param_shapes(config)`` lists every name with its shape.
Where the engine keeps them (one contiguous block, tiles, for speed) is ``minillm/engine/``'s
business; here every parameter is a plain float32 ndarray.

    wte [V, C]          token embeddings (also the LM head when tied)
    wpe [n_ctx, C]      learned position embeddings (GPT-2 only; Llama uses RoPE)
    blocks[i]           norm1 → attn (wq wk wv wo [q_norm k_norm]) → norm2 → ffn (w_up [w_gate] w_down)
                        [post_attn_norm, post_ffn_norm: a norm after each sub-layer, Gemma]
    norm_f              the final norm before the LM head
    lm_head [C, V]      only when the embeddings are not tied
"""
from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass

import numpy as np

from minillm.config import ModelConfig


@dataclass
class NormParams:
    weight: np.ndarray                   # [C] gain
    bias: np.ndarray | None = None       # [C] (LayerNorm only)


@dataclass
class AttentionParams:
    wq: np.ndarray                       # [C, H·D]
    wk: np.ndarray                       # [C, KV·D]  KV = n_kv_heads (KV < H: grouped-query)
    wv: np.ndarray                       # [C, KV·D]
    wo: np.ndarray                       # [H·D, C]
    bq: np.ndarray | None = None         # [H·D]
    bk: np.ndarray | None = None         # [KV·D]
    bv: np.ndarray | None = None         # [KV·D]
    bo: np.ndarray | None = None         # [C]
    q_norm: np.ndarray | None = None     # [D] RMSNorm gain on each head's q (Qwen3's qk_norm)
    k_norm: np.ndarray | None = None     # [D] … and on each head's k (OLMo 2: [H·D], [KV·D])


@dataclass
class FFNParams:
    w_up: np.ndarray                     # [C, F]
    w_down: np.ndarray                   # [F, C]
    w_gate: np.ndarray | None = None     # [C, F] (SwiGLU only)
    b_up: np.ndarray | None = None       # [F]
    b_down: np.ndarray | None = None     # [C]
    router: np.ndarray | None = None     # [C, E] experts' router (then w_up [E, C, F], …: model/moe.py)


@dataclass
class BlockParams:
    norm1: NormParams
    attn: AttentionParams
    norm2: NormParams
    ffn: FFNParams
    post_attn_norm: NormParams | None = None     # (config.sandwich_norms: Gemma)
    post_ffn_norm: NormParams | None = None


@dataclass
class GPTParams:
    wte: np.ndarray                      # [V, C]
    blocks: list[BlockParams]
    norm_f: NormParams
    wpe: np.ndarray | None = None        # [n_ctx, C]
    lm_head: np.ndarray | None = None    # [C, V]

    def named(self) -> dict[str, np.ndarray]:
        """Flatten to ``{"wte": …, "blocks.0.attn.wq": …}``, skipping absent (None) entries."""
        out: dict[str, np.ndarray] = {}
        _flatten(self, "", out)
        return out

    @classmethod
    def from_named(cls, named: dict[str, np.ndarray], config: ModelConfig) -> "GPTParams":
        """The inverse of ``named()``: the tree around the given arrays, AS GIVEN (no copy, no
        cast). Missing or unexpected names, or wrong shapes, raise ValueError."""
        check_names_and_shapes(named, config)

        def norm(prefix):
            return NormParams(named[f"{prefix}.weight"], named.get(f"{prefix}.bias"))

        blocks = []
        for i in range(config.n_layers):
            b = f"blocks.{i}"
            attn = AttentionParams(**{f: named.get(f"{b}.attn.{f}") for f in field_names(AttentionParams)})
            ffn = FFNParams(**{f: named.get(f"{b}.ffn.{f}") for f in field_names(FFNParams)})
            post = [norm(f"{b}.{n}") if f"{b}.{n}.weight" in named else None
                    for n in ("post_attn_norm", "post_ffn_norm")]
            blocks.append(BlockParams(norm(f"{b}.norm1"), attn, norm(f"{b}.norm2"), ffn, *post))
        return cls(wte=named["wte"], blocks=blocks, norm_f=norm("norm_f"), wpe=named.get("wpe"),
                   lm_head=named.get("lm_head"))


def param_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's flat name -> shape, in ``named()`` order (the dataclass field order).

    Example: a 1-layer GPT-2 config starts {"wte": (V, C), "blocks.0.norm1.weight": (C,), …}.
    """
    c = config
    C, F, V, HD, KD = c.d_model, c.d_ff, c.vocab_size, c.n_heads * c.d_head, c.n_kv_heads * c.d_head

    def norm(prefix):
        return {f"{prefix}.weight": (C,), **({f"{prefix}.bias": (C,)} if c.norm == "layernorm" else {})}

    shapes = {"wte": (V, C)}
    for i in range(c.n_layers):
        b = f"blocks.{i}"
        shapes |= norm(f"{b}.norm1")
        shapes |= {f"{b}.attn.wq": (C, HD), f"{b}.attn.wk": (C, KD), f"{b}.attn.wv": (C, KD),
                   f"{b}.attn.wo": (HD, C)}
        if c.attn_bias:
            shapes |= {f"{b}.attn.bq": (HD,), f"{b}.attn.bk": (KD,), f"{b}.attn.bv": (KD,)}
        if c.mlp_bias:                                     # the output projection's bias
            shapes[f"{b}.attn.bo"] = (C,)
        if c.qk_norm:                                      # per head, or the whole width (OLMo 2)
            q, k = ((HD,), (KD,)) if c.qk_norm_whole else ((c.d_head,), (c.d_head,))
            shapes |= {f"{b}.attn.q_norm": q, f"{b}.attn.k_norm": k}
        shapes |= norm(f"{b}.norm2")
        E = (c.n_experts,) if c.n_experts else ()         # experts stacked: [E, C, F], …
        shapes |= {f"{b}.ffn.w_up": (*E, C, F), f"{b}.ffn.w_down": (*E, F, C)}
        if c.ffn in ("swiglu", "geglu"):
            shapes[f"{b}.ffn.w_gate"] = (*E, C, F)
        if c.mlp_bias:
            shapes |= {f"{b}.ffn.b_up": (F,), f"{b}.ffn.b_down": (C,)}
        if c.n_experts:
            shapes[f"{b}.ffn.router"] = (C, c.n_experts)
        if c.sandwich_norms:
            shapes |= {f"{b}.post_attn_norm.weight": (C,), f"{b}.post_ffn_norm.weight": (C,)}
    shapes |= norm("norm_f")
    if c.position == "learned":
        shapes["wpe"] = (c.n_ctx, C)
    if not c.tie_embeddings:
        shapes["lm_head"] = (C, V)
    return shapes


def check_names_and_shapes(named: dict, config: ModelConfig) -> None:
    """ValueError unless ``named`` has exactly the config's parameter names, each with its shape."""
    want = param_shapes(config)
    missing, extra = sorted(set(want) - set(named)), sorted(set(named) - set(want))
    if missing or extra:
        raise ValueError(f"parameter names do not match the config: missing {missing[:5]}"
                         f"{'…' if len(missing) > 5 else ''}, unexpected {extra[:5]}"
                         f"{'…' if len(extra) > 5 else ''}")
    for name, shape in want.items():
        if tuple(named[name].shape) != shape:
            raise ValueError(f"{name} has shape {tuple(named[name].shape)}, the config needs {shape}")


def empty_params(config: ModelConfig) -> GPTParams:
    """Every parameter an uninitialised float32 array of its shape: what the loaders fill and
    ``init_params`` draws into."""
    return GPTParams.from_named({name: np.empty(shape, np.float32)
                                 for name, shape in param_shapes(config).items()}, config)


def field_names(cls) -> list[str]:
    """The fields of a params dataclass."""
    return [f.name for f in fields(cls)]


def _flatten(obj, prefix: str, out: dict) -> None:
    if isinstance(obj, list):                                   # blocks
        for i, item in enumerate(obj):
            _flatten(item, f"{prefix}.{i}", out)
    elif is_dataclass(obj):                                     # NormParams, AttentionParams, …
        for name in field_names(type(obj)):
            _flatten(getattr(obj, name), f"{prefix}.{name}" if prefix else name, out)
    elif obj is not None:                                       # a parameter
        out[prefix] = obj
