"""The model's parameters: plain NumPy arrays in small dataclasses whose fields match the formulas.

Every weight matrix is stored ``[in, out]`` and applied as ``x @ W`` (GPT-2's Conv1D layout), so a
reader sees ``q = x @ wq`` exactly as the math is written. Hugging Face ``nn.Linear`` weights
(``[out, in]``) are transposed once, at load time (``minillm/io/checkpoints.py``).

Flat names (``named()`` / ``from_named()``) look like ``blocks.0.attn.wq``; the optimiser, the
checkpoint code and the tests use them.

``from_named`` stores every tensor as a view into ONE contiguous float32 block (the "arena"), in
reading order. subtle: this is for speed, not style. Decoding a token streams every weight from
memory once; on our test machine separately allocated matrices streamed at ~4-6 GB/s but views
of one allocation at ~12-14 GB/s (the speed of one long read), making a GPT-2-124M decode step
1.4x faster (benchmarks/README.md). Large separate allocations are each mapped on their own, and
how well the kernel backs them with huge pages varies; one block gets one mapping.

    wte [V, C]          token embeddings (also the LM head when tied)
    wpe [n_ctx, C]      learned position embeddings (GPT-2 only; Llama uses RoPE)
    blocks[i]           norm1 → attn (wq wk wv wo) → norm2 → ffn (w_up [w_gate] w_down)
    norm_f              the final norm before the LM head
    lm_head [C, V]      only when the embeddings are not tied
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from minillm.config import ModelConfig


@dataclass
class NormParams:
    weight: np.ndarray                   # [C] gain
    bias: np.ndarray | None = None       # [C] (LayerNorm only)


@dataclass
class AttentionParams:
    wq: np.ndarray                       # [C, H·D]
    wk: np.ndarray                       # [C, K·D]  K = n_kv_heads (K < H: grouped-query)
    wv: np.ndarray                       # [C, K·D]
    wo: np.ndarray                       # [H·D, C]
    bq: np.ndarray | None = None         # [H·D]
    bk: np.ndarray | None = None         # [K·D]
    bv: np.ndarray | None = None         # [K·D]
    bo: np.ndarray | None = None         # [C]


@dataclass
class FFNParams:
    w_up: np.ndarray                     # [C, F]
    w_down: np.ndarray                   # [F, C]
    w_gate: np.ndarray | None = None     # [C, F] (SwiGLU only)
    b_up: np.ndarray | None = None       # [F]
    b_down: np.ndarray | None = None     # [C]


@dataclass
class BlockParams:
    norm1: NormParams
    attn: AttentionParams
    norm2: NormParams
    ffn: FFNParams


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

    def in_one_block(self) -> bool:
        """Are all tensors views into one contiguous arena (as ``from_named`` makes them)?"""
        bases = {id(a.base) if a.base is not None else id(a) for a in self.named().values()}
        return len(bases) == 1

    @classmethod
    def from_named(cls, named: dict[str, np.ndarray], config: ModelConfig) -> "GPTParams":
        """The inverse of ``named()``: float32 copies, all views into one contiguous arena.
        Missing or unexpected names, or wrong shapes, raise ValueError."""
        template = init_params(config, np.random.default_rng(0), dtype_only=True).named()
        missing = sorted(set(template) - set(named))
        extra = sorted(set(named) - set(template))
        if missing or extra:
            raise ValueError(f"parameter names do not match the config: missing {missing[:5]}"
                             f"{'…' if len(missing) > 5 else ''}, unexpected {extra[:5]}"
                             f"{'…' if len(extra) > 5 else ''}")
        for name, want in template.items():
            if tuple(named[name].shape) != want.shape:
                raise ValueError(f"{name} has shape {tuple(named[name].shape)}, the config needs {want.shape}")

        arena = np.empty(sum(a.size for a in template.values()), dtype=np.float32)   # [N] all weights
        views, start = {}, 0
        for name, want in template.items():                 # reading order: wte, wpe, blocks.0 …
            views[name] = arena[start:start + want.size].reshape(want.shape)   # [N] -> the tensor's shape
            views[name][...] = named[name]                  # copy (and cast to float32)
            start += want.size

        def get(name):
            return views.get(name)

        def norm(prefix):
            return NormParams(get(f"{prefix}.weight"), get(f"{prefix}.bias"))

        blocks = []
        for i in range(config.n_layers):
            b = f"blocks.{i}"
            attn = AttentionParams(*(get(f"{b}.attn.{f.name}") for f in fields(AttentionParams)))
            ffn = FFNParams(*(get(f"{b}.ffn.{f.name}") for f in fields(FFNParams)))
            blocks.append(BlockParams(norm(f"{b}.norm1"), attn, norm(f"{b}.norm2"), ffn))
        return cls(wte=get("wte"), blocks=blocks, norm_f=norm("norm_f"), wpe=get("wpe"),
                   lm_head=get("lm_head"))


def _flatten(obj, prefix: str, out: dict) -> None:
    if isinstance(obj, np.ndarray):
        out[prefix] = obj
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            _flatten(item, f"{prefix}.{i}", out)
    elif obj is not None:
        for f in fields(obj):
            _flatten(getattr(obj, f.name), f"{prefix}.{f.name}" if prefix else f.name, out)


def init_params(config: ModelConfig, rng: np.random.Generator, std: float = 0.02,
                dtype_only: bool = False) -> GPTParams:
    """Random parameters in GPT-2's scheme: weights ~ N(0, 0.02²), the two projections that write
    into the residual stream (``wo``, ``w_down``) scaled by 1/√(2L) so the stream's variance does
    not grow with depth; biases 0; norm gains 1.

    Example: ``GPT(config, init_params(config, np.random.default_rng(0)))`` — the same seed gives
    the same model. ``dtype_only`` returns zero arrays of the right shapes (cheap templates).
    """
    c = config
    C, F, V, HD, KD = c.d_model, c.d_ff, c.vocab_size, c.n_heads * c.d_head, c.n_kv_heads * c.d_head
    resid_std = std / math.sqrt(2 * c.n_layers)

    def normal(shape, s=std):
        if dtype_only:
            return np.zeros(shape, np.float32)
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(s)   # float32 draws: no float64 copy

    def zeros(n, on=True):
        return np.zeros(n, np.float32) if on else None

    def norm():
        return NormParams(np.ones(C, np.float32), zeros(C, c.norm == "layernorm"))

    blocks = []
    for _ in range(c.n_layers):
        attn = AttentionParams(wq=normal((C, HD)), wk=normal((C, KD)), wv=normal((C, KD)),
                               wo=normal((HD, C), resid_std), bq=zeros(HD, c.attn_bias),
                               bk=zeros(KD, c.attn_bias), bv=zeros(KD, c.attn_bias),
                               bo=zeros(C, c.mlp_bias))
        ffn = FFNParams(w_up=normal((C, F)), w_down=normal((F, C), resid_std),
                        w_gate=normal((C, F)) if c.ffn == "swiglu" else None,
                        b_up=zeros(F, c.mlp_bias), b_down=zeros(C, c.mlp_bias))
        blocks.append(BlockParams(norm(), attn, norm(), ffn))
    return GPTParams(wte=normal((V, C)), blocks=blocks, norm_f=norm(),
                     wpe=normal((c.n_ctx, C), 0.01) if c.position == "learned" else None,
                     lm_head=None if c.tie_embeddings else normal((C, V)))
