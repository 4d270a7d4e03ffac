"""Weights stored by output row, and ``x @ W`` by the product that suits the number of rows.

    stored   Wᵀ [N, C], C-contiguous (row n = the C weights of output n: torch's nn.Linear order)
    seen as  W = Wᵀ.T [C, N]   (an ndarray view: the model's ``x @ W`` reads it unchanged)

    M = 1          x [1, C] @ W                       ONE matrix-vector product over Wᵀ
    2 ≤ M ≤ 32     x [M, C] @ tile.T  per 32-row tile  many small products, each read in place
    M > 32         x [M, C] @ W                       the BLAS's general product

Why rows: a decode step multiplies a few rows (one stream, a batch, or the k + 1 positions
speculative decoding verifies) by every weight matrix, and reading the weights is the cost.
For ONE row the BLAS's matrix-vector kernel streams W at memory speed in either order. For 2
to 32 rows the general kernel first copies ("packs") W into blocks — for so few rows the copy
dominates: 8 rows cost ~3x one row on the test machine (OpenBLAS 0.3.31), where a step that
reads the weights once should cost barely more. Cut into tiles of 32 outputs, each product
``x [M, C] @ tile.T [C, 32]`` is small enough for the BLAS's small-matrix kernel, which reads
its operands in place, without packing. A tile of 32 ROWS of Wᵀ is 32·C contiguous floats, a
view: so one stored copy serves all three cases (benchmarks/README.md, "Rows"). Stored [C, N]
instead, a tile of 32 COLUMNS is 32 floats out of every row, scattered over C pages; that
layout needed a tiled copy of its own, which ran one row at ~0.6-0.75x of this (same machine).

subtle: OpenBLAS takes its small-matrix kernel only while rows · C · 32 is small (on the test
machine 8 rows x 3072 x 32 still was, 16 rows no longer: it packed again at ~2x the time), so
more rows go through in slices (``rows_at_once``); past 32 rows the product is compute-bound
and the general kernel's packing pays for itself.

Example: w = np.ones((3, 40), np.float32).T (stored [40, 3], seen [3, 40]);
product(np.ones((2, 3), np.float32), w) -> 3s of shape [2, 40]: a [2, 32] tile product and a
[2, 8] rest.
"""
from __future__ import annotations

import numpy as np

# The plan's forms (``plan.use``): (C, N, "cn" | "nc") -> a form function per row bucket
# 1, 2, 4, 8, 16, 32 (M rows take bucket ⌈log₂ M⌉). Empty: the fixed rule below.
CHOSEN: dict = {}

TILE = 32          # outputs per tile: up to 32 rows x C x 32 stays in OpenBLAS's small-matrix kernel
MAX_TILED = 32     # more rows than this: the general product


def rows_at_once(c: int) -> int:
    """Rows per small product: the largest power of two <= 32 with rows · C · TILE <= 2²⁰."""
    rows = 32
    while rows > 1 and rows * c * TILE > 1 << 20:
        rows //= 2
    return rows


def product(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N], the product chosen by M (above). With a plan in use
    (``plan.py``) and w's shape and layout in it, the plan's form for M rows; otherwise ``w``
    stored by rows (``w.T`` C-contiguous) takes the tiles for 2 ≤ M ≤ 32, any other ``x @ w``."""
    M = x.shape[0]
    if CHOSEN and 1 <= M <= MAX_TILED:                                # this machine's measured choice
        layout = "nc" if w.T.flags.c_contiguous else "cn" if w.flags.c_contiguous else None
        forms = CHOSEN.get((w.shape[0], w.shape[1], layout))
        if forms is not None:
            return forms[(M - 1).bit_length()](x, w)
    if M == 1 or M > MAX_TILED or not w.T.flags.c_contiguous:
        return x @ w                                             # [M, C] @ [C, N] -> [M, N]
    return tile_product(x, w.T)


def tile_product(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """x [M, C] @ wtᵀ -> [M, N] for wt = Wᵀ [N, C] C-contiguous: one small product per tile of
    32 rows of wt and slice of rows of x, each written straight into its place in the output;
    the last N mod 32 rows of wt in one more product."""
    M, (N, C) = x.shape[0], wt.shape
    n_full = N - N % TILE                                        # rows of wt in whole tiles
    tiles = wt[:n_full].reshape(-1, TILE, C).transpose(0, 2, 1)  # [nt, C, TILE] views of wt
    y = np.empty((M, N), np.result_type(x, wt))                  # [M, N] (float64 in: the training checks)
    by_tile = y[:, :n_full].reshape(M, -1, TILE).transpose(1, 0, 2)   # [nt, M, TILE] a view of y
    slices = -(-M // rows_at_once(C))                            # ⌈M / rows⌉ products per tile
    step = -(-M // slices)                                       # rows each, as even as can be (34: 17 + 17)
    for r in range(0, M, step):                                  # [m, C] @ [nt, C, TILE] -> [nt, m, TILE]
        np.matmul(x[r:r + step], tiles, out=by_tile[:, r:r + step])
    if n_full < N:
        np.matmul(x, wt[n_full:].T, out=y[:, n_full:])           # [M, C] @ [C, N mod 32]
    return y
