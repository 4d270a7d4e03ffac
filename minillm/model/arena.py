"""The parameter arena: every parameter as a view into ONE contiguous float32 block.

    params = empty_arena(config)          # one np.empty block, carved into the named tensors
    params.wte[...] = …                   # loaders fill it one tensor at a time
    params = to_arena(params, config)     # or: copy existing arrays (any dtype) into a new one

Why: this is for speed, not style. Decoding a token streams every weight from memory once; on a
test machine separately allocated matrices streamed at ~4-6 GB/s but views of one allocation at
~12-14 GB/s (the speed of one long read), which made a GPT-2-124M decode step 1.4x faster
(benchmarks/README.md, "Why the arena mattered"). Large separate allocations are each mapped on
their own, and how well the kernel backs them with huge pages varies; one block gets one mapping.

It also keeps loading lean: the loaders (``io/checkpoints.py``, ``io/gguf_model.py``) allocate the
arena from the shapes first and convert each tensor straight into its place, so the peak memory
is the weights plus one tensor, not the weights twice.

The layout is ``param_shapes(config)``'s order (wte, then block by block, then the final norm,
wpe and lm_head). ``GPT(config, params)`` uses the arrays it is given AS GIVEN, arena or not;
``GPT(config, seed=…)`` and every loader hand it an arena.

The tied embedding is stored as the LM head reads it. With tied embeddings wte [V, C] is both the
lookup table (one row per token) and the head (logits = x @ wteᵀ, every entry read per token).
The arena keeps its C·V numbers in [C, V] order and hands out ``params.wte`` as the transposed
view ``head.T``: still [V, C] with the same values and name, so loaders, checkpoints, the
optimiser and the tests see no difference, but ``wte.T`` is now a contiguous [C, V] matrix and
``x @ wte.T`` streams it like every block matrix. Stored [V, C], the same product ran at about
half the rate (OpenBLAS's transposed matrix-vector kernel; benchmarks/README.md, "Single
stream"). The lookup ``wte[ids]`` then gathers C strided values per token: negligible.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.config import ModelConfig
from minillm.model.params import GPTParams, check_names_and_shapes, param_shapes


def empty_arena(config: ModelConfig) -> GPTParams:
    """Parameters whose every tensor is a view into one new, uninitialised float32 block."""
    shapes = param_shapes(config)
    block = np.empty(sum(math.prod(s) for s in shapes.values()), dtype=np.float32)   # [N] all weights
    views, start = {}, 0
    for name, shape in shapes.items():
        n = math.prod(shape)
        flat = block[start:start + n]                          # [n] this tensor's numbers
        if name == "wte" and config.tie_embeddings:            # stored as the LM head reads it:
            views[name] = flat.reshape(shape[::-1]).T          # [C, V] -> transposed view [V, C]
        else:
            views[name] = flat.reshape(shape)                  # [n] -> the tensor's shape (a view)
        start += n
    return GPTParams.from_named(views, config)


def to_arena(params: GPTParams | dict[str, np.ndarray], config: ModelConfig) -> GPTParams:
    """Float32 copies of ``params`` (a GPTParams or its ``named()`` dict) in one new arena.
    Wrong names or shapes raise ValueError. Editing the originals afterwards changes nothing."""
    named = params.named() if isinstance(params, GPTParams) else params
    check_names_and_shapes(named, config)
    packed = empty_arena(config)
    for name, view in packed.named().items():
        view[...] = named[name]                               # copy (and cast to float32)
    return packed


def in_arena(params: GPTParams) -> bool:
    """Are all tensors views into one block (as ``empty_arena`` makes them)?"""
    return len({id(a.base) if a.base is not None else id(a) for a in params.named().values()}) == 1
