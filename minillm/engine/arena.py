"""The parameter arena: every parameter as a view into ONE contiguous float32 block.

    arena = empty_arena(config)           # one block, carved into the named tensors
    arena.params.wte[...] = …             # loaders fill it one tensor at a time
    arena = to_arena(params, config)      # or: copy existing arrays (any dtype) into a new one

Why: this is for speed, not style. Decoding a token streams every weight from memory once; on a
test machine separately allocated matrices streamed at ~4-6 GB/s but views of one allocation at
~12-14 GB/s (the speed of one long read), which made a GPT-2-124M decode step 1.4x faster
(benchmarks/README.md, "Why the arena mattered"). Large separate allocations are each mapped on
their own, and how well the kernel backs them with huge pages varies; one block gets one mapping.

It also keeps loading lean: the loaders (``io/checkpoints.py``, ``io/gguf/model.py``) allocate the
arena from the shapes first and convert each tensor straight into its place, so the peak memory
is the weights plus one tensor, not the weights twice.

An ``Arena`` is ``params`` (a ``GPTParams`` whose every entry is a view into the block: what
``named()``, the loaders, checkpoints and a reader see) and, per layer, the JOINED matrices:

- Matrices that multiply the same input are joined into one: a block's wq | wk | wv as one
  [C, H·D + 2·KV·D] and w_gate | w_up as one [C, 2F]. Each parameter is its own [C, N] view (a
  column slice) of it, and the engine reads it in ONE product. A matrix-vector product pays a
  fixed start-up per call (small ones stream at ~10-15 GB/s where large ones reach ~23); a
  30-layer Llama makes 90 fewer calls.
- The tied embedding is stored as the LM head reads it. With tied embeddings wte [V, C] is both
  the lookup table (one row per token) and the head (logits = x @ wteᵀ, every entry read per
  token). In the "rows" layout every matrix is stored Wᵀ, so the head's Wᵀ is wte [V, C] itself,
  and the lookup ``wte[ids]`` reads contiguous rows. The "decode" layout stores the head [C, V]
  and hands out ``params.wte`` as the transposed view (the lookup then gathers C strided values).

Three layouts. "rows": every matrix a product reads — the joined ones, wo, w_down
and the head — is stored by output row, Wᵀ [N, C] (torch's nn.Linear order), and handed out
as the [C, N] view ``W = Wᵀ.T`` (an ndarray), so that one row streams it in one matrix-vector
product and 2 to 32 rows (a batch, or the positions speculative decoding verifies) read it in
32-row tiles without packing it first (``rows.py``); the tied wte [V, C] is then already the
head's order. "decode": the same joins with [C, N] matrices and the tied head stored [C, V]
(the benchmarks time it beside "rows": the same one row, ~3x slower for 8 rows).
"by_width" (what ``EngineGPT.empty``, and so the loaders, and ``to_engine`` use): each matrix
stored the way ONE row's product streams it best — by output row (as "rows") when it is
narrower than its input (N < C: w_down, and wo when H·D > C), as [C, N] (as "decode") otherwise
(the joined Q|K|V and gate|up, the head — the tied wte then seen transposed). Why: a one-row
product over Wᵀ [N, C] is N dot products of length C, and OpenBLAS's kernels for that run
slower the shorter C is (its Haswell kernels, measured: 15-17 GB/s at C = 576-768, 20 at
1024, 23 at 2048, per CPU second), while the product over [C, N] streams rows of N at one rate
(24-26) whatever C is; on OpenBLAS's SkylakeX kernels the two were within a few per cent.
Rows of 2 to 32 then take the general product for the [C, N] matrices (``rows.py``): on the
Haswell kernels that ran faster than the tiles of Wᵀ at every row count measured (2-32); on the
SkylakeX kernels the tiles ran 8 rows ~3x faster than [C, N] (benchmarks/README.md, "Widths").

subtle: the joined matrices share the parameters' numbers, so writing into wq in place
(``wq[...] = new``) changes ``qkv``; REPLACING ``params.blocks[i].attn.wq`` by another array would
leave the joined matrix behind: the engine's model refuses to run then (``engine/gpt.py``).
"""
from __future__ import annotations

import math

import numpy as np

from dataclasses import dataclass, replace

from minillm.config import ModelConfig
from minillm.model.params import GPTParams, check_names_and_shapes, param_shapes


@dataclass
class Joined:
    """One layer's side-by-side matrices (None where the layer has none)."""
    qkv: object = None          # [C, H·D + 2·KV·D]: wq | wk | wv
    gate_up: object = None      # [C, 2F]: w_gate | w_up (SwiGLU only)


@dataclass
class Arena:
    params: GPTParams           # every parameter a view into one block
    joined: list[Joined]        # per layer

    def first_layers(self, n: int) -> "Arena":
        """The first n blocks' views (no copy)."""
        return Arena(replace(self.params, blocks=self.params.blocks[:n]), self.joined[:n])


# Parameters one product can read together, laid out side by side as the column blocks of one
# [C, N₁ + N₂ + …] matrix, kept in the layer's ``Joined`` under that name.
SIDE_BY_SIDE = {"attn": (("wq", "wk", "wv"), "qkv"), "ffn": (("w_gate", "w_up"), "gate_up")}


LAYOUTS = ("rows", "decode", "by_width")
# The matrices a product multiplies by (``x @ W``): the ones the "rows" layout stores as Wᵀ.
PRODUCTS = ("wq", "wk", "wv", "wo", "w_up", "w_gate", "w_down", "lm_head")


def empty_arena(config: ModelConfig, layout: str = "by_width") -> Arena:
    """Parameters whose every tensor is a view into one new, uninitialised float32 block
    (layout "by_width", "rows" or "decode", as below, or a measured plan: ``plan.py``)."""
    if not hasattr(layout, "stored_by_rows") and layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS} or a plan (plan.py), got {layout!r}")
    shapes = param_shapes(config)
    block = np.empty(sum(math.prod(s) for s in shapes.values()), dtype=np.float32)   # [N] all weights
    views, joined, start = {}, {}, 0
    for name, shape in shapes.items():
        if name in views:                                      # carved with its side-by-side group
            continue
        n = math.prod(shape)
        flat = block[start:start + n]                          # [n] this tensor's numbers
        group = _side_by_side_group(name, shapes)
        if group:                                              # [C, N₁] [C, N₂] … as one [C, ΣN]
            prefix, members = group
            width = sum(shapes[m][1] for m in members)
            whole = block[start:start + shape[0] * width]      # [C·ΣN]
            if stored_by_rows(layout, (shape[0], width)):
                whole = whole.reshape(width, shape[0]).T       # stored [ΣN, C], seen [C, ΣN]
            else:
                whole = whole.reshape(shape[0], width)         # stored [C, ΣN]
            n, col = whole.size, 0
            for m in members:
                views[m] = whole[:, col:col + shapes[m][1]]    # [C, N_m] columns (a view)
                col += shapes[m][1]
            joined[prefix] = whole
        elif (name == "wte" and config.tie_embeddings
              and not stored_by_rows(layout, shape[::-1])):    # stored as the head reads it
            views[name] = flat.reshape(shape[::-1]).T          # [C, V] -> transposed view [V, C]
        elif (name.rpartition(".")[2] in PRODUCTS
              and stored_by_rows(layout, shape)):              # stored Wᵀ [N, C], seen [C, N] (experts: each)
            views[name] = flat.reshape(*shape[:-2], shape[-1], shape[-2]).swapaxes(-1, -2)
        else:
            views[name] = flat.reshape(shape)                  # [n] -> the tensor's shape (a view)
        start += n
    return _params_with_joined(views, joined, config)


def stored_by_rows(layout: str, shape: tuple[int, ...]) -> bool:
    """Is a product matrix of ``shape`` [..., C, N] stored by output row (Wᵀ [N, C]) in
    ``layout``? "rows": always; "decode": never; "by_width": when N < C (above).

    Example: stored_by_rows("by_width", (2048, 640)) -> True (a w_down);
    stored_by_rows("by_width", (640, 4096)) -> False (a gate|up). A ``layout`` that is a
    plan (``plan.py``): the plan's measured layout for the shape, "by_width" for one it lacks."""
    if hasattr(layout, "stored_by_rows"):
        by_rows = layout.stored_by_rows(shape)
        return shape[-1] < shape[-2] if by_rows is None else by_rows
    if layout == "by_width":
        return shape[-1] < shape[-2]
    return layout == "rows"


def _params_with_joined(views: dict, joined: dict, config: ModelConfig) -> Arena:
    """The params around ``views`` and each layer's joined matrices ("blocks.3.attn" ->
    ``joined[3].qkv``)."""
    layers = [Joined() for _ in range(config.n_layers)]
    for prefix, whole in joined.items():
        _, layer, sub = prefix.split(".")
        setattr(layers[int(layer)], SIDE_BY_SIDE[sub][1], whole)
    return Arena(GPTParams.from_named(views, config), layers)


def _side_by_side_group(name: str, shapes: dict) -> tuple[str, list[str]] | None:
    """("blocks.3.attn", [its wq, wk, wv names]) when ``name`` is one of a SIDE_BY_SIDE group
    whose members this config all has (GPT-2 has no w_gate: its w_up stands alone), else None."""
    prefix, _, leaf = name.rpartition(".")
    group = SIDE_BY_SIDE.get(prefix.rpartition(".")[2]) if prefix.startswith("blocks.") else None
    if group is None or leaf not in group[0] or len(shapes[name]) != 2:   # (experts: apart)
        return None
    members = [f"{prefix}.{m}" for m in group[0]]
    return (prefix, members) if all(m in shapes for m in members) else None


def to_arena(params: GPTParams | dict[str, np.ndarray], config: ModelConfig,
             layout: str = "by_width") -> Arena:
    """Float32 copies of ``params`` (a GPTParams or its ``named()`` dict) in one new arena
    (``layout`` as for ``empty_arena``). Wrong names or shapes raise ValueError. Editing the
    originals afterwards changes nothing."""
    named = params.named() if isinstance(params, GPTParams) else params
    check_names_and_shapes(named, config)
    packed = empty_arena(config, layout)
    for name, view in packed.params.named().items():
        view[...] = named[name]                               # copy (and cast to float32)
    return packed


def in_arena(params: GPTParams) -> bool:
    """Are all tensors views into one block (as ``empty_arena`` makes them)?"""
    return len({id(a.base) if a.base is not None else id(a) for a in params.named().values()}) == 1
