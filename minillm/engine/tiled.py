"""A weight matrix stored in column tiles, so that a product by a few rows reads it once, fast.

    W [C, N]  is kept as  tiles [⌈N/32⌉, C, 32]:   tiles[j] = W[:, 32j : 32j + 32]   (contiguous)
    x [M, C] @ W  =  concat_j ( x @ tiles[j] )        -> [M, N]

This is the engine's layout (beside ``model/linear.py``, whose math is still ``x @ W``). Why: a decode
step multiplies a few rows (the batch, or the k + 1 positions speculative decoding verifies) by
every weight matrix. For ONE row the BLAS runs a matrix-vector kernel that streams W at memory
speed. For 2 to 32 rows it runs its general matrix kernel, which first copies ("packs") W into
blocks and then multiplies — for so few rows the copy dominates: 8 rows cost 4.6x one row on the
test machine (OpenBLAS 0.3.31), where a step that reads the weights once should cost barely more.
Cut into 32-column tiles, each product ``x [M, C] @ tiles[j] [C, 32]`` is small enough for the
BLAS's small-matrix kernel, which reads its operands in place without packing: 8 rows then cost
about 1.2x one row (benchmarks/README.md, "Tiled weights"). The tiles must be contiguous, which a
view of a [C, N] array cannot give, hence a layout of its own.

A ``TiledMatrix`` is NOT an ndarray, and says so rather than pretend: it has ``.shape``,
``.dtype``, ``.ndim``, ``.T``, ``len``; ``w[r0:r1, c0:c1]`` reads (a read-only copy) and
``w[...] = new`` / ``w[r0:r1] = rows`` write in place (the loaders fill it a slice at a time);
``wte[ids]`` gathers rows of the transposed tied embedding. ``w.to_numpy()`` is the plain [C, N]
float32 array (a copy). Anything else — ``np.asarray(w)``, ``x @ w``, ``w.mean()``, ``w.fill(0)``
— raises TypeError or AttributeError naming ``w.to_numpy()`` and ``load_model(path, fast=False)``
(a model of plain ndarrays), so no method call can silently edit a copy.

subtle: columns past N in the last tile are zeros that no product returns; a column that starts
a tile is the only place one TiledMatrix can be cut into views of another (``columns``).

Example: TiledMatrix.empty(3, 40)[...] = np.ones((3, 40)) gives tiles [2, 3, 32], the second
half zeros after column 8; np.ones((2, 3)) @ that -> 3s of shape [2, 40] via ``tiled_product``.
"""
from __future__ import annotations

import numpy as np

TILE = 32   # columns per tile: 8-32 rows x C x 32 stays within OpenBLAS's small-matrix kernel
HOW_TO_GET_AN_ARRAY = ("w.to_numpy() gives a plain float32 copy (writes into the model go through "
                       "w[...] = new), and load_model(path, fast=False) a model whose every "
                       "weight is an ndarray")


class TiledMatrix:
    """W [C, N] as tiles [⌈N/TILE⌉, C, TILE]; ``transposed`` = this object stands for Wᵀ [N, C]."""

    __slots__ = ("tiles", "n", "transposed")

    def __init__(self, tiles: np.ndarray, n: int, transposed: bool = False):
        if tiles.ndim != 3 or tiles.shape[2] != TILE or tiles.shape[0] != self.tiles_needed(n):
            raise ValueError(f"tiles must be [⌈{n}/{TILE}⌉, C, {TILE}], got {tiles.shape}")
        self.tiles, self.n, self.transposed = tiles, n, transposed

    @staticmethod
    def tiles_needed(n: int) -> int:
        return -(-n // TILE)                                     # ⌈n / TILE⌉

    @classmethod
    def empty(cls, c: int, n: int) -> "TiledMatrix":
        tiles = np.zeros((cls.tiles_needed(n), c, TILE), np.float32)   # zeros: the padding stays 0
        return cls(tiles, n)

    # ---- what an array offers ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        c = self.tiles.shape[1]
        return (self.n, c) if self.transposed else (c, self.n)

    ndim, dtype = 2, np.dtype(np.float32)

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def nbytes(self) -> int:
        return self.size * 4

    @property
    def base(self):
        """The array the tiles live in (the arena), as ``ndarray.base`` is for a view."""
        return self.tiles if self.tiles.base is None else self.tiles.base

    @property
    def T(self) -> "TiledMatrix":
        return TiledMatrix(self.tiles, self.n, not self.transposed)

    def to_numpy(self) -> np.ndarray:
        """The plain [C, N] (or [N, C]) float32 array: a COPY (the tiles hold no such view), so
        editing it leaves the model as it was; write into the model with ``w[...] = new``."""
        c, n = self.tiles.shape[1], self.n
        plain = self.tiles.transpose(1, 0, 2).reshape(c, -1)[:, :n]   # [C, N] (reshape copies)
        return np.ascontiguousarray(plain.T if self.transposed else plain)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"a TiledMatrix {self.shape} is not an ndarray: {HOW_TO_GET_AN_ARRAY}")

    def __len__(self) -> int:
        return self.shape[0]

    def __getattr__(self, name):
        """Any other ndarray attribute is refused: on a copy, ``w.fill(0)`` or
        ``w.reshape(-1)[i] = x`` would change nothing, silently."""
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"a TiledMatrix {self.shape} has no {name!r}: it is not an ndarray; "
                             f"{HOW_TO_GET_AN_ARRAY}")

    def _refuse(self, *args):
        raise TypeError(f"a TiledMatrix {self.shape} takes no arithmetic: {HOW_TO_GET_AN_ARRAY}")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = \
        __matmul__ = __rmatmul__ = __pow__ = __neg__ = __iadd__ = __isub__ = __imul__ = _refuse

    def __repr__(self) -> str:
        return f"TiledMatrix(shape={self.shape}, tiles={self.tiles.shape})"

    # ---- reading and writing slices ---------------------------------------------------------
    def __getitem__(self, key):
        if self.transposed and np.asarray(key).dtype.kind in "iu":   # wte[ids]: columns of W
            ids = np.asarray(key)
            if ids.size and (ids.min() < -self.n or ids.max() >= self.n):
                raise IndexError(f"ids must be in [-{self.n}, {self.n}), got {ids.min()}…{ids.max()}")
            ids = ids % self.n                                   # (negative ids count from the end)
            return self.tiles[ids // TILE, :, ids % TILE]        # [..., C] (a new array, as in NumPy)
        rows, cols = self._rows_cols(key)
        out = np.empty((rows.stop - rows.start, cols.stop - cols.start), np.float32)
        for j, a, b, at in self._spans(cols):                    # the tiles the columns touch
            out[:, at:at + b - a] = self.tiles[j, rows, a:b]     # [r, b − a]
        out.flags.writeable = False   # subtle: NumPy's slice is a view; this is a copy, so writing
        return out.T if self.transposed else out   # into it must fail, not change nothing

    def __setitem__(self, key, value):
        rows, cols = self._rows_cols(key)
        value = np.asarray(value, dtype=np.float32)
        value = value.T if self.transposed and value.ndim == 2 else value
        value = np.broadcast_to(value, (rows.stop - rows.start, cols.stop - cols.start))
        for j, a, b, at in self._spans(cols):
            self.tiles[j, rows, a:b] = value[:, at:at + b - a]   # [r, b − a] into one tile

    def _rows_cols(self, key) -> tuple[slice, slice]:
        """A key of contiguous slices (or ...) -> (rows, cols) of the stored W [C, N]."""
        key = key if isinstance(key, tuple) else (key,)
        key = tuple(k for k in key if k is not Ellipsis) + (slice(None),) * 2
        first, second = key[0], key[1]
        if len(key) > 4 or not all(isinstance(k, slice) and k.step in (None, 1) for k in (first, second)):
            raise TypeError(f"a TiledMatrix takes contiguous slices (or ids on wte), got {key[:-2]}")
        first, second = (second, first) if self.transposed else (first, second)
        (r0, r1, _), (c0, c1, _) = first.indices(self.tiles.shape[1]), second.indices(self.n)
        return slice(r0, max(r0, r1)), slice(c0, max(c0, c1))

    @staticmethod
    def _spans(cols: slice):
        """(tile j, first column in it, end column in it, where it goes in the output) for each
        tile the columns ``cols`` touch."""
        start = cols.start
        while start < cols.stop:
            j, a = divmod(start, TILE)
            b = min(TILE, a + cols.stop - start)
            yield j, a, b, start - cols.start
            start += b - a

    def columns(self, start: int, stop: int) -> "TiledMatrix":
        """Columns start … stop − 1 as a TiledMatrix that shares these tiles (start on a tile)."""
        if start % TILE or self.transposed:
            raise ValueError(f"columns must start on a tile ({TILE}), got {start}")
        return TiledMatrix(self.tiles[start // TILE:self.tiles_needed(stop)], stop - start)


def rows_at_once(c: int) -> int:
    """Rows per small product: the largest power of two <= 32 with rows · C · TILE <= 2²⁰.

    subtle: OpenBLAS takes its small-matrix kernel only while the product is small (on the test
    machine 8 rows x 3072 x 32 still was, 16 rows no longer: it packed again at ~2x the time), so
    more rows go through in slices of this many. Prefill gains too: 512 rows in slices ran as
    fast as one large product of the untiled matrix, or faster (benchmarks/README.md)."""
    rows = 32
    while rows > 1 and rows * c * TILE > 1 << 20:
        rows //= 2
    return rows


def tiled_product(x: np.ndarray, w: TiledMatrix) -> np.ndarray:
    """x [M, C] @ W [C, N] -> [M, N]: one small product per tile and slice of rows, each written
    straight into its place in the output."""
    if w.transposed:
        raise ValueError("tiled_product multiplies by W [C, N]; this TiledMatrix stands for Wᵀ")
    M, (nt, c) = x.shape[0], w.tiles.shape[:2]
    y = np.empty((M, nt * TILE), np.float32)                     # [M, nt·TILE]
    slices = -(-M // rows_at_once(c))                            # ⌈M / rows⌉ products per tile
    step = -(-M // slices)                                       # rows each, as even as can be (34: 17 + 17)
    for r in range(0, M, step):                                  # [m, C] @ [nt, C, TILE] -> [nt, m, TILE]
        np.matmul(x[r:r + step], w.tiles, out=y[r:r + step].reshape(-1, nt, TILE).transpose(1, 0, 2))
    return y if w.n == nt * TILE else y[:, :w.n]                 # [M, N] (the padding dropped)


def to_numpy(w) -> np.ndarray:
    """Any weight as a plain float32 ndarray: a TiledMatrix's copy, or the array itself."""
    return w.to_numpy() if isinstance(w, TiledMatrix) else np.asarray(w, dtype=np.float32)
