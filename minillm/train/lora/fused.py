"""Phi-3's adapters in PEFT's layout: one LoRA per *fused* module, split into minillm's
per-projection adapters on load and fused again on save (files.py calls these).

Phi-3's Hugging Face model holds Q, K, V as one ``qkv_proj`` [H·D + 2·KV·D, C] (rows [Q; K; V])
and gate, up as one ``gate_up_proj`` [2F, C] (rows [gate; up]); PEFT adapts those modules, so
its adapter has one A and one B for the whole group (stored [out, in], files.py):

    qkv_proj.lora_A.weight  [r, C]                   one A for Q, K and V
    qkv_proj.lora_B.weight  [H·D + 2·KV·D, r]        rows [B_q; B_k; B_v]

**Load (exact).** A fused update is A·B with B's rows stacked, so each projection's own update is
A times its block of rows: Δq = s · A B_q, Δk = s · A B_k, Δv = s · A B_v. minillm stores each
as its own adapter (A shared, B the block): the merged weights are PEFT's, to rounding.

**Save.** minillm's adapters of one group usually have *different* A's (``init_lora`` draws each
at random), and a fused LoRA has one A, so in general they cannot be written exactly at rank r.
They are written at rank k·r (k the group's adapted projections) with a block-diagonal B:

    A = [A_q | A_k | A_v]ᵀ  [3r, C]      B = | B_q  0    0   |  [H·D + 2·KV·D, 3r]
                                             | 0    B_k  0   |   ((A B)'s Q rows: A_q B_q, …)
                                             | 0    0    B_v |

which is exactly the three updates. A group whose A's are one array (an adapter minillm loaded
from a fused file) is written at rank r, B stacked. PEFT's adapter has one rank r for every
module (minillm reads no ``rank_pattern``), so every module is written at the largest rank R
needed, padded with zero rows of A and zero columns of B (adding nothing), and ``lora_alpha``
becomes α·R/r so that PEFT's scale α/r is unchanged. A rank-2 minillm LoRA on all seven
projections becomes a rank-6 file; loaded back it is a rank-6 LoRA with the same updates, which
saves at rank 6 again (its fused A's are now shared).

Example: ``fuse(lora, config, stems, "base_model.model.")`` -> ({PEFT stem: (A [R, in],
B [out, R])}, R); ``split(A, B, {"blocks.0.attn.wq": slice(0, 64), …})`` -> {name: (A, B)}.
"""
from __future__ import annotations

import numpy as np

GROUPS = {"self_attn.qkv_proj": ("attn.wq", "attn.wk", "attn.wv"),
          "mlp.gate_up_proj": ("ffn.w_gate", "ffn.w_up")}


def fused_rows(config) -> dict[str, tuple[str, slice]]:
    """minillm matrix name -> (fused module path, its rows of the fused B), every layer."""
    HD, KD, F = config.n_heads * config.d_head, config.n_kv_heads * config.d_head, config.d_ff
    rows = {"attn.wq": slice(0, HD), "attn.wk": slice(HD, HD + KD),
            "attn.wv": slice(HD + KD, HD + 2 * KD), "ffn.w_gate": slice(0, F),
            "ffn.w_up": slice(F, 2 * F)}
    return {f"blocks.{i}.{name}": (f"model.layers.{i}.{module}", rows[name])
            for i in range(config.n_layers) for module, names in GROUPS.items() for name in names}


def fused_height(config, module: str) -> int:
    """Rows of a fused module's B: H·D + 2·KV·D for qkv_proj, 2F for gate_up_proj."""
    if module.endswith("qkv_proj"):
        return (config.n_heads + 2 * config.n_kv_heads) * config.d_head
    return 2 * config.d_ff


def split(A: np.ndarray, B: np.ndarray, names: dict[str, slice]) -> dict[str, tuple]:
    """One fused adapter (PEFT's stored A [r, C], B [out, r]) -> {name: (A [C, r], B_name [r, n])}:
    the same A for each projection and its rows of B (minillm's [in, r], [r, out] layout).
    subtle: each projection gets its own copy of A, since training updates arrays in place (one
    array under three names would take three steps each step)."""
    return {name: (np.array(A.T, np.float32, order="C"),                          # [r, C] -> [C, r]
                   np.array(B[rows].T, np.float32, order="C"))                    # [n, r] -> [r, n]
            for name, rows in names.items()}


def fuse(lora, config, stems: dict[str, str], prefix: str) -> tuple[dict[str, tuple], int]:
    """minillm's per-projection adapters -> ({PEFT stem: (A [R, in], B [out, R])}, R) in PEFT's
    stored layout (the module docstring: rank k·r with block-diagonal B unless a group's A's are
    one array; then every module padded with zeros to the largest rank R). ``stems``: minillm
    name -> PEFT stem of the unfused projections (o_proj, down_proj); ``prefix``: the stems'
    ``base_model.model.``."""
    where = fused_rows(config)
    groups: dict[str, list[str]] = {}
    modules = {}
    for name in sorted(lora.adapters):
        if name in where:
            groups.setdefault(prefix + where[name][0], []).append(name)
        else:
            A, B = lora.adapters[name]
            modules[stems[name]] = (A.T, B.T)                          # [r, in], [out, r]
    for stem, names in groups.items():
        As = [lora.adapters[n][0] for n in names]                      # each [in, r]
        shared = all(np.array_equal(As[0], a) for a in As[1:])
        k = 1 if shared else len(names)
        B = np.zeros((fused_height(config, stem), k * lora.rank), np.float32)   # [out, k·r]
        for j, name in enumerate(names):
            cols = slice(0, lora.rank) if shared else slice(j * lora.rank, (j + 1) * lora.rank)
            B[where[name][1], cols] = lora.adapters[name][1].T         # [r, n] -> [n, r]
        modules[stem] = (As[0].T if shared else np.concatenate([a.T for a in As]),  # [k·r, in]
                         B)
    R = max((A.shape[0] for A, _ in modules.values()), default=lora.rank)   # (no adapters: r)
    return {m: (_pad(A, R, axis=0), _pad(B, R, axis=1)) for m, (A, B) in modules.items()}, R


def _pad(x: np.ndarray, R: int, axis: int) -> np.ndarray:
    """``x`` with zeros appended along ``axis`` up to R (a zero rank component adds nothing)."""
    widths = [(0, 0), (0, 0)]
    widths[axis] = (0, R - x.shape[axis])
    return np.ascontiguousarray(np.pad(x, widths), np.float32)
