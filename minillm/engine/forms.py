"""The candidate forms of one product ``x [M, C] @ W [C, N]``: the same numbers, read differently.

A decode step multiplies a few rows (M = 1 for one stream, 2-32 for a batch or the positions
speculative decoding verifies) by every weight matrix, and reading the weights is the cost. How
fast a form reads W depends on the CPU and the BLAS build (issue 44: on one machine ``x @ W``
with W stored [C, N] streamed 25 GB/s for one row and ``x @ Wᵀ`` over [N, C] 13.6; for 8 rows
the general kernel, packing the whole matrix each call, read the head at 3.5 GB/s). So the
engine does not fix a form: ``plan.py`` times these on the machine and picks one per product
and row count. The forms (``FORMS``: name -> function(x, w)):

    matmul     x @ W                      the BLAS's choice (one row: its matrix-vector kernel)
    matmul_t   (Wᵀ @ xᵀ)ᵀ                 the same product asked the other way round: W becomes
                                          the BLAS's first operand, which it blocks and packs
                                          differently (for few rows, sometimes much faster)
    rows       [x₀ @ W; x₁ @ W; …]        one matrix-vector product per row (W read M times,
                                          each read at the one-row rate)
    einsum     Σ_c x[m, c] W[c, n]        NumPy's own sum-of-products loop, no BLAS: it walks W
                                          in the order it is stored, one long read, where the
                                          BLAS's matrix-vector kernels read 4-8 rows at once
                                          (on one machine: 27-30 GB/s for SmolLM2's narrow
                                          matrices where the BLAS read 15-19; one thread only)
    tiles:T    x @ W[:, j:j+T] for each   small products the BLAS's small-matrix kernel reads in
               tile of T outputs          place, without packing W (``rows.py``'s tiles, either
                                          stored layout: a tile of [C, N] is T floats of every
                                          row, a tile of Wᵀ [N, C] T·C contiguous floats)
    warm:T[:K] row 0 by einsum, the rest  per column block of K KiB of W (or all of it): one
               by tiles:T, per block      long read, then the tiles from the cache
    rowblocks:K[:n]  Σ_b x[:, b] @ W[b]   blocks of K inputs: for W stored [C, N], K whole rows
               (per chunk of n outputs)   of it, contiguous; y's chunk stays in the cache

Every form accepts W seen [C, N] whichever way it is stored (C-contiguous [C, N], or the
transposed view of a C-contiguous Wᵀ [N, C]); every form's output equals ``x @ W`` up to float32
summation order (tests/engine/test_plan_forms.py).

Example: tiles(np.ones((2, 3), np.float32), np.ones((3, 40), np.float32), 32) -> 3s, [2, 40]:
one [2, 32] tile product and a [2, 8] rest; warm(…, 32) the same 3s, row 0 by einsum.
"""
from __future__ import annotations

import numpy as np

SMALL_KERNEL = 1 << 20   # rows · C · T at most this: OpenBLAS's small-matrix kernel (rows.py)


def matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N] by the BLAS's general (or, M = 1, matrix-vector) kernel."""
    return x @ w


def matmul_t(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N] (C-contiguous) computed as wᵀ [N, C] @ xᵀ [C, M]."""
    return np.ascontiguousarray((w.T @ np.ascontiguousarray(x.T)).T)   # [N, M] -> [M, N]


def einsum(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N] by ``np.einsum`` (no BLAS; for M > 1 it reads W M times)."""
    return np.einsum("mc,cn->mn", x, w)                               # Σ_c x[m, c] · W[c, n]


def row_loop(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N], one matrix-vector product per row of x."""
    y = np.empty((x.shape[0], w.shape[1]), np.result_type(x, w))     # [M, N]
    for m in range(x.shape[0]):
        np.matmul(x[m], w, out=y[m])                                  # [C] @ [C, N] -> [N]
    return y


def tile_views(w: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(the whole tiles [nt, C, size] as ONE view of w, the rest [C, N mod size]) of w [C, N],
    stored either way. Raises ValueError for a w that is neither layout."""
    C, N = w.shape
    n_full = N - N % size                                             # outputs in whole tiles
    if w.strides[1] == w.itemsize:                                    # stored [C, N] (or its columns)
        tiles = w[:, :n_full].reshape(C, -1, size).transpose(1, 0, 2)   # [nt, C, size], strided
    elif w.strides[0] == w.itemsize and w.T[:n_full].flags.c_contiguous:   # stored Wᵀ [N, C]
        tiles = w.T[:n_full].reshape(-1, size, C).transpose(0, 2, 1)  # [nt, C, size], contiguous
    else:
        raise ValueError("tiles need w stored [C, N] or Wᵀ [N, C] (C-contiguous), got strides "
                         f"{w.strides}")
    return tiles, w[:, n_full:]


def tiles(x: np.ndarray, w: np.ndarray, size: int = 32) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N] one small product per tile of ``size`` outputs, written
    straight into its place in the output; rows of x in slices small enough for the small-matrix
    kernel (rows · C · size <= SMALL_KERNEL), the last N mod size outputs in one more product."""
    M, (C, N) = x.shape[0], w.shape
    tile, rest = tile_views(w, size)                                  # [nt, C, size], [C, r]
    y = np.empty((M, N), np.result_type(x, w))                        # [M, N]
    n_full = N - rest.shape[1]
    by_tile = y[:, :n_full].reshape(M, -1, size).transpose(1, 0, 2)   # [nt, M, size] a view of y
    step = max(1, min(M, SMALL_KERNEL // (C * size)))                 # rows per small product
    slices = -(-M // step)
    step = -(-M // slices)                                            # as even as can be
    for r in range(0, M, step):                                       # [m, C] @ [nt, C, size]
        np.matmul(x[r:r + step], tile, out=by_tile[:, r:r + step])    # -> [nt, m, size]
    if rest.shape[1]:
        np.matmul(x, rest, out=y[:, n_full:])                         # [M, C] @ [C, N mod size]
    return y


def warm(x: np.ndarray, w: np.ndarray, size: int = 64, block: int = 0) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N] a column block of W at a time (``block`` bytes of it; 0: all
    of W): row 0 by ``einsum``, which streams the block from memory at the one-row rate and
    leaves it in the cache, then rows 1 … M − 1 by ``tiles`` of ``size`` outputs, which read it
    from there. Why: from memory the tiles read 8 rows' W at 9-11 GB/s, from the cache at 24-26
    (on one machine): the small products start too many short reads for the prefetcher to keep
    up with; one long read first, then the arithmetic, is faster than either alone."""
    M, (C, N) = x.shape[0], w.shape
    y = np.empty((M, N), np.result_type(x, w))                        # [M, N]
    step = N if block == 0 else max(size, block // (w.itemsize * C) // size * size)   # outputs a block
    for j in range(0, N, step):
        part = w[:, j:j + step]                                       # [C, n] a view
        y[:1, j:j + step] = einsum(x[:1], part)                       # [1, C] @ [C, n]: W read in
        if M > 1:
            y[1:, j:j + step] = tiles(x[1:], part, size)              # [M − 1, C] @ [C, n] from cache
    return y


def row_blocks(x: np.ndarray, w: np.ndarray, rows: int = 16, width: int = 0) -> np.ndarray:
    """x [M, C] @ w [C, N] -> [M, N] as a sum over blocks of ``rows`` inputs, y = Σ_b x[:, b] @
    W[b, :], per chunk of ``width`` outputs (0: all N). For W stored [C, N] a block is ``rows``
    whole rows of W — contiguous, unlike a tile of its columns — and a [M, rows] @ [rows, n]
    product is small enough for the BLAS's small-matrix kernel (on one machine 8 rows read
    SmolLM2's gate|up at 10-11 GB/s this way, against 7-8 in tiles; the head, in chunks of
    4,096 outputs so that y's chunk stays in the L2, 9 against 5)."""
    M, (C, N) = x.shape[0], w.shape
    y = np.empty((M, N), np.result_type(x, w))                        # [M, N]
    width = width or N
    for j in range(0, N, width):
        part, out = w[:, j:j + width], y[:, j:j + width]              # [C, n], [M, n] views
        np.matmul(x[:, :rows], part[:rows], out=out)                  # [M, K] @ [K, n]
        for c in range(rows, C, rows):
            out += x[:, c:c + rows] @ part[c:c + rows]                # + the next block's share
    return y


def form(name: str):
    """The function(x, w) of form ``name`` ("matmul", "matmul_t", "einsum", "rows" or
    "tiles:T" with T >= 1)."""
    if name == "matmul":
        return matmul
    if name == "rows":
        return row_loop
    if name == "matmul_t":
        return matmul_t
    if name == "einsum":
        return einsum
    kind, *numbers = name.split(":")
    if kind == "tiles" and len(numbers) == 1 and numbers[0].isdigit() and int(numbers[0]) >= 1:
        size = int(numbers[0])
        return lambda x, w: tiles(x, w, size)
    if (kind in ("warm", "rowblocks") and 1 <= len(numbers) <= 2
            and all(n.isdigit() for n in numbers) and int(numbers[0]) >= 1):
        size, more = int(numbers[0]), int(numbers[1]) if len(numbers) == 2 else 0
        if kind == "warm":
            return lambda x, w: warm(x, w, size, more << 10)
        return lambda x, w: row_blocks(x, w, size, more)
    raise ValueError(f"unknown product form {name!r}: one of 'matmul', 'matmul_t', 'einsum', "
                     f"'rows', 'tiles:T', 'warm:T', 'warm:T:KiB', 'rowblocks:K' or "
                     f"'rowblocks:K:N' (T, KiB, K, N positive integers)")


def candidates(c: int, m: int, l2_bytes: int) -> list[str]:
    """The forms worth timing for m rows of width c: one row has two (matmul, einsum); 2-32
    rows also matmul_t, the row loop and einsum (up to 8 and 2 rows: past that they read W too
    often to win), tiles of 32 and 128 outputs and of a column block of W sized to half the L2
    cache (shared with x and y), ``warm`` over all of W and over L2-sized column blocks, and
    ``row_blocks`` of 16 inputs over all outputs and over chunks of 4,096."""
    if m == 1:
        return ["matmul", "einsum"]
    block = max(32, (l2_bytes // 2) // (4 * c) // 32 * 32)           # outputs per L2-sized block
    names = ["matmul", "matmul_t", "tiles:32", "tiles:128", f"tiles:{block}", "warm:64",
             f"warm:64:{l2_bytes >> 10}", "rowblocks:16", "rowblocks:16:4096"] + (
        ["rows"] if m <= 8 else []) + (["einsum"] if m <= 2 else [])
    return list(dict.fromkeys(names))                                 # (block may be 32 or 128)
