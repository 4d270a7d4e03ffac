"""LoRA: train a low-rank correction of chosen weight matrices; the base weights stay frozen.

For an adapted matrix W [in, out] (a projection, applied as x W):

    W' = W + s · A B          A [in, r], B [r, out] trained; r ≪ in, out; s = α / r
    y = x W' = x W + s · (x A) B

Only A and B are trained: r · (in + out) numbers instead of in · out (rank 8 on a 576 × 576
projection: 9,216 instead of 331,776). s = α / r keeps the update's size comparable when r
changes with α held fixed (PEFT's ``lora_alpha``; its LoraConfig defaults to r = 8, α = 8, s = 1);
``init_lora`` defaults to α = 2r instead (s = 2 at every rank: pass ``alpha=`` to hold α fixed).

Initialisation (PEFT's default): A ~ U(−1/√in, 1/√in) (Kaiming-uniform with a = √5), B = 0, so
W' = W before the first step: fine-tuning starts from the base model exactly.

Backward. The loss depends on A and B only through W'. Given G = ∂L/∂W' [in, out] — exactly
what ``loss_and_grads`` computes for that matrix (Σ over positions of xᵀ dy) — a change dA moves
W' by s · dA B, so dL = ⟨G, s · dA B⟩ = ⟨s · G Bᵀ, dA⟩, and likewise for B:

    ∂L/∂A = s · G Bᵀ     [in, out] @ [out, r] -> [in, r]
    ∂L/∂B = s · Aᵀ G     [r, in] @ [in, out] -> [r, out]

``lora_loss_and_grads_merged`` is this, the definition: one forward and backward through W',
then the two products. ``lora_loss_and_grads`` is the form used for training, tested equal: it
never builds W' (the forward computes x W + s · (x A) B, train/frozen.py) and computes no gradient
of a frozen weight — not G [in, out], not the head's or the embedding's [V, C]: the input's
gradient flows through each frozen W, and the adapters' come from [N, r] products. The base
arrays are read, never written or copied.

Names follow ``params.named()``: adapting ``blocks.0.attn.wq`` trains ``blocks.0.attn.wq.lora_A``
and ``….lora_B``. Example: ``lora = init_lora(model.params, rank=8, rng=np.random.default_rng(0))``;
``loss, grads = lora_loss_and_grads(model.params, model.config, lora, x, y)``;
``AdamW(lora.named()).step(grads, lr)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from minillm.train.frozen import Frozen
from minillm.train.grad_model import loss_and_grads

# the projections adapted by default: every matrix of attention and of the FFN
DEFAULT_TARGETS = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down")


@dataclass
class LoRA:
    """Adapters {matrix name: (A [in, r], B [r, out])} of one rank, and α (s = α / r)."""
    rank: int
    alpha: float
    adapters: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def scale(self) -> float:
        """s = α / r, a Python float (keeps float32 arrays float32)."""
        return float(self.alpha) / self.rank

    def named(self) -> dict[str, np.ndarray]:
        """{"blocks.0.attn.wq.lora_A": A, "….lora_B": B, …}: what AdamW updates in place."""
        out = {}
        for name, (A, B) in self.adapters.items():
            out[name + ".lora_A"], out[name + ".lora_B"] = A, B
        return out


def init_lora(params, rank: int, rng: np.random.Generator, alpha: float | None = None,
              targets=None) -> LoRA:
    """Adapters on every block matrix of ``params`` whose last name part is in ``targets``
    (default: those of ``DEFAULT_TARGETS`` the model has): A uniform in ±1/√in, B zero
    (float32). ``alpha`` defaults to 2 · rank (s = 2)."""
    if isinstance(rank, bool) or not isinstance(rank, int) or rank <= 0:
        raise ValueError(f"rank must be a positive integer, got {rank!r}")
    if alpha is None:
        alpha = 2.0 * rank
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) \
            or alpha <= 0:
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    named = params.named()
    kinds = sorted({n.split(".")[-1] for n, w in named.items() if w.ndim == 2 and n.startswith("blocks.")})
    if targets is None:
        targets = [k for k in DEFAULT_TARGETS if k in kinds]          # (GPT-2 has no w_gate)
    if isinstance(targets, str) or not set(targets) or not set(targets) <= set(kinds):
        raise ValueError(f"targets must be a non-empty list of this model's projections "
                         f"{kinds}, got {targets!r}")
    chosen = {name: w for name, w in named.items()
              if name.startswith("blocks.") and name.split(".")[-1] in targets}
    most = max(max(w.shape) for w in chosen.values())
    if rank > most:                       # (refused before any [in, rank] array is allocated)
        raise ValueError(f"rank {rank:,} is out of range: LoRA's rank must be in [1, {most}] "
                         f"(the largest side of the matrices it adapts; a higher rank adds only "
                         f"memory)")
    lora = LoRA(rank, float(alpha))
    for name, w in chosen.items():
        n_in, n_out = w.shape
        bound = 1.0 / math.sqrt(n_in)
        A = rng.uniform(-bound, bound, (n_in, rank)).astype(np.float32)      # [in, r]
        lora.adapters[name] = (A, np.zeros((rank, n_out), np.float32))       # [r, out]
    return lora


def adapted_named(params, lora: LoRA) -> dict[str, np.ndarray]:
    """``params.named()``, after checking that every adapter names one of its matrices."""
    named = params.named()
    missing = sorted(set(lora.adapters) - set(named))
    if missing:
        raise ValueError(f"the adapters name matrices this model does not have: {missing[:3]}")
    return named


def merged_params(params, lora: LoRA):
    """The model with W' = W + s · A B in place of each adapted W: a new GPTParams whose adapted
    matrices are new arrays and every other entry *is* the base's array (nothing else copied;
    the base is not modified). Also how the adapters are merged for export."""
    named = adapted_named(params, lora)
    with np.errstate(over="ignore", invalid="ignore"):     # (an overflow: refused by _finite)
        merged = {name: _finite(name, named[name] + lora.scale * (A @ B))   # [in, r] @ [r, out]
                  for name, (A, B) in lora.adapters.items()}
    return _rebuild(params, merged)


def merge_in_place(params, lora: LoRA) -> None:
    """W += s · A B for every adapted matrix, written into the model's own arrays (what loading
    an adapter for chat does: an engine model's weights live in its arena, and are written in
    place there). After it, ``params`` is the merged model; the adapter is no longer needed."""
    named = adapted_named(params, lora)
    with np.errstate(over="ignore", invalid="ignore"):     # (an overflow: refused by _finite)
        merged = {name: _finite(name, named[name] + lora.scale * (A @ B))   # [in, r] @ [r, out]
                  for name, (A, B) in lora.adapters.items()}   # (all checked, then written)
    for name, w in merged.items():
        named[name][...] = w


def _finite(name: str, w: np.ndarray) -> np.ndarray:
    """``w``, or a ValueError when W + s · A B is not finite (a NaN or overflowing adapter would
    give a model whose every logit is NaN, and an export of it)."""
    if not np.all(np.isfinite(w)):
        raise ValueError(f"merging the adapter into {name} gives values that are not finite "
                         f"(NaN or beyond float32's range): the adapter (its values, its alpha) "
                         f"is broken")
    return w


def frozen_params(params, lora: LoRA):
    """The model with every block matrix marked ``Frozen`` (train/frozen.py), the adapted ones
    carrying their (A, B, s): a new params tree around the very same base arrays (no copy)."""
    named = adapted_named(params, lora)
    marks = {name: Frozen(w) for name, w in named.items()
             if name.startswith("blocks.") and w.ndim == 2}
    marks |= {name: Frozen(named[name], A, B, lora.scale) for name, (A, B) in lora.adapters.items()}
    return _rebuild(params, marks)


def lora_loss_and_grads(params, config, lora: LoRA, ids: np.ndarray, targets: np.ndarray,
                        loss_mask: np.ndarray | None = None, segments: np.ndarray | None = None,
                        recompute: bool = False) -> tuple[float, dict]:
    """ids, targets [B, T] -> (mean next-token loss of the adapted model, {"….lora_A": ∂L/∂A,
    "….lora_B": ∂L/∂B}) with the keys of ``lora.named()``; the base weights frozen and never
    rebuilt (x W + s · (x A) B). Equal to ``lora_loss_and_grads_merged`` (tested). ``loss_mask``
    and ``segments``: as in ``loss_and_grads``. ``recompute``: the same gradients in less memory
    (train/memory/recompute.py: blocks recomputed in the backward, the head in chunks)."""
    if recompute:
        from minillm.train.memory.recompute import loss_and_grads_recompute
        return loss_and_grads_recompute(frozen_params(params, lora), config, ids, targets,
                                        loss_mask, segments, frozen=True)
    return loss_and_grads(frozen_params(params, lora), config, ids, targets, loss_mask, segments,
                          frozen=True)


def lora_loss_and_grads_merged(params, config, lora: LoRA, ids: np.ndarray, targets: np.ndarray,
                               loss_mask: np.ndarray | None = None,
                               segments: np.ndarray | None = None) -> tuple[float, dict]:
    """The definition: ``lora_loss_and_grads`` through the merged W' = W + s · A B, then
    ∂L/∂A = s · G Bᵀ and ∂L/∂B = s · Aᵀ G from the full G = ∂L/∂W'."""
    loss, grads = loss_and_grads(merged_params(params, lora), config, ids, targets, loss_mask,
                                 segments)
    s = lora.scale
    out = {}
    for name, (A, B) in lora.adapters.items():
        G = grads[name]                                                 # [in, out]  ∂L/∂W'
        out[name + ".lora_A"] = s * (G @ B.T)                           # [in, out] @ [out, r] -> [in, r]
        out[name + ".lora_B"] = s * (A.T @ G)                           # [r, in] @ [in, out] -> [r, out]
    return loss, out


def _rebuild(obj, new: dict, prefix: str = ""):
    """A copy of the params tree (dataclasses and lists) with the arrays named in ``new``
    replaced; every other array is shared, not copied."""
    if isinstance(obj, list):
        return [_rebuild(item, new, f"{prefix}.{i}") for i, item in enumerate(obj)]
    changes = {}
    for f in fields(obj):
        value, name = getattr(obj, f.name), f"{prefix}.{f.name}" if prefix else f.name
        if isinstance(value, np.ndarray):
            if name in new:
                changes[f.name] = new[name]
        elif value is not None:
            changes[f.name] = _rebuild(value, new, name)
    return replace(obj, **changes)
