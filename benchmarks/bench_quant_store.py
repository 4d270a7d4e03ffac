"""Quantised weight stores in NumPy: float16 / int8 weights converted per tile against F32 streaming.

    python benchmarks/bench_quant_store.py                 # ~1 min, 1 thread
    python benchmarks/bench_quant_store.py --tile 64 --rounds 7

NumPy has no float16 or int8 BLAS: a product with a smaller store must convert the weights to
float32 before the sgemm, a tile at a time into a small preallocated buffer that stays in cache.
The question is whether reading 2 or 1 bytes per weight from memory plus converting them beats
reading 4 bytes per weight at the machine's streaming rate. The matrices are one GPT-2-124M decode
step's (12 x [768, 2304], [768, 768], [768, 3072], [3072, 768] and the [768, 50257] head; x @ W with
W stored [C, N]), multiplied by 1 row (decode) and by 8 rows (a batch), one BLAS thread:

  f32          x @ W, W float32 [C, N] contiguous (what the engine streams), the baseline
  f32 tiles    the same weights in [N/t, C, t] column tiles, one product per tile: the loop alone
  f16 tiles    float16 tiles, each converted into a float32 buffer (np.copyto), then the product
  f16 bits     the same conversion by integer ops on the bits (shift, mask, one multiply), exact
  f16 matmul   x16 @ W16 directly in float16: NumPy's own loop, no BLAS (first layer only, scaled)
  q8 scale     int8 tiles with a float32 scale per 32 values along C (Q8_0's blocks): convert,
               multiply the buffer by the scales, product
  q8 blockdot  the same store; the scales applied to the products instead of the weights:
               out[n] = sum_k s[k, n] * (x[k-th 32] @ q[k-th 32, n]) (a batched product over the
               C/32 blocks, then a weighted sum: 1/32 of the multiplies of "q8 scale" for 1 row)
  q8 kblock    int8 [C, N] plain; 32 rows (one block) at a time, all N columns: convert,
               x[:, 32 rows] @ block, scale the [R, N] partial, accumulate
  q8 column    int8 with ONE scale per column (per output channel, coarser than Q8_0): convert,
               product, scale the t outputs: the cheapest any int8 store can be in NumPy
  q8 column cast  the same with np.matmul(x, int8 tile, dtype=float32) converting the tile itself
  q8 convert only  every int8 tile converted into the buffer, no product: the floor of any int8
               store read from memory

Every variant is first checked against the plain formula on one matrix (max relative error
printed). Printed per variant: the median step time over ``--rounds`` rounds (the variants
interleaved within a round), the GB/s of stored weight bytes (and scales) read, and the time
relative to f32. The streaming bound is measured in the same run on the f32 store itself: the
best of ``np.add.reduce`` over it and a dot product of its two halves.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")      # before numpy: no BLAS threads spawned

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_decode import blas_info  # noqa: E402

SHAPES = [(768, 2304), (768, 768), (768, 3072), (3072, 768)] * 12 + [(768, 50257)]   # (C, N)
BLOCK = 32                                                  # int8 values per scale along C


class Arena:
    """Views into one allocation per dtype: on this VM separately allocated matrices stream
    2-3x slower than views of one block (benchmarks/README.md, "Why the arena mattered")."""

    def __init__(self, dtype, sizes):
        self.flat, self.at = np.zeros(sum(sizes), dtype), 0

    def take(self, shape):
        n = int(np.prod(shape))
        view = self.flat[self.at:self.at + n].reshape(shape)
        self.at += n
        return view


class Matrix:
    """One weight matrix [C, N] in every store. The f32 weights ARE the dequantised int8 ones,
    so every product computes the same numbers up to rounding (f16: up to float16's)."""

    def __init__(self, C, N, tile, rng, arenas):
        Np = -(-N // tile) * tile                                    # N padded to whole tiles
        self.C, self.N, self.t = C, N, tile
        q = np.zeros((C, Np), np.int8)                               # [C, Np], pad columns 0
        q[:, :N] = rng.integers(-127, 128, (C, N), dtype=np.int8)
        s = rng.uniform(0.5, 1.5, (C // BLOCK, Np)).astype(np.float32) * (0.02 / 127)  # [C/32, Np]
        w = (q.reshape(C // BLOCK, BLOCK, Np) * s[:, None, :]).reshape(C, Np)  # [C, Np] float32
        a = arenas
        self.f32 = a["f32"].take((C, N))
        self.f32[:] = w[:, :N]                                       # [C, N]
        as_tiles = w.reshape(C, Np // tile, tile).transpose(1, 0, 2)  # [Np/t, C, t] view
        self.t32 = a["t32"].take(as_tiles.shape)
        self.t32[:] = as_tiles
        self.t16 = a["t16"].take(as_tiles.shape)
        self.t16[:] = as_tiles                                       # float16 rounding
        self.q8 = a["q8"].take(as_tiles.shape)
        self.q8[:] = q.reshape(C, Np // tile, tile).transpose(1, 0, 2)   # [Np/t, C, t] int8
        self.s8 = a["s8"].take((Np // tile, C // BLOCK, tile))
        self.s8[:] = s.reshape(C // BLOCK, Np // tile, tile).transpose(1, 0, 2)  # [Np/t, C/32, t]
        self.qk = a["qk"].take((C // BLOCK, BLOCK, Np))
        self.qk[:] = q.reshape(C // BLOCK, BLOCK, Np)                # [C/32, 32, Np] plain int8
        self.sk = a["sk"].take((C // BLOCK, Np))
        self.sk[:] = s                                               # [C/32, Np]
        self.scol = a["scol"].take((Np // tile, tile))
        self.scol[:] = s.mean(0).reshape(-1, tile)                   # [Np/t, t] one per column


# ---- the products: x [R, C] -> out [R, Np] (columns past N are padding) -------------------------
def f32(m, x, out, buf):
    np.matmul(x, m.f32, out=out[:, :m.N])                             # [R, C] @ [C, N]


def f32_tiles(m, x, out, buf):
    for j, tile in enumerate(m.t32):                                  # [C, t]
        np.matmul(x, tile, out=out[:, j * m.t:(j + 1) * m.t])


def f16_tiles(m, x, out, buf):
    w = buf[:m.C * m.t].reshape(m.C, m.t)                             # [C, t] float32, in cache
    for j, tile in enumerate(m.t16):
        np.copyto(w, tile)                                            # float16 -> float32
        np.matmul(x, w, out=out[:, j * m.t:(j + 1) * m.t])


F16_MASK = np.array([0x8FFFE000], np.uint32).view(np.int32)[0]   # sign | exponent | mantissa
F16_SCALE = np.float32(2.0 ** 112)                                 # 2^(127 - 15): the exponent bias


def f16_to_f32_bits(tile, v) -> None:
    """float16 ``tile`` -> float32 into ``v`` (its int32 view) by integer ops: the half's bits
    sign-extended to 32 and shifted left by 13 put its sign, exponent and mantissa where float32
    keeps them; times 2^112 fixes the exponent's bias. Exact for every finite half, subnormals
    included (not inf / NaN)."""
    np.copyto(v, tile.view(np.int16))                                 # sign-extends
    np.left_shift(v, 13, out=v)
    np.bitwise_and(v, F16_MASK, out=v)
    w = v.view(np.float32)
    np.multiply(w, F16_SCALE, out=w)


def f16_bits(m, x, out, buf):
    v = buf[:m.C * m.t].view(np.int32).reshape(m.C, m.t)              # [C, t] int32 = the buffer
    for j, tile in enumerate(m.t16):
        f16_to_f32_bits(tile, v)
        np.matmul(x, v.view(np.float32), out=out[:, j * m.t:(j + 1) * m.t])


def f16_matmul(m, x, out, buf):
    x16 = x.astype(np.float16)                                        # [R, C]
    for j, tile in enumerate(m.t16):
        out[:, j * m.t:(j + 1) * m.t] = x16 @ tile                    # float16 loop, no BLAS


def q8_scale(m, x, out, buf):
    w = buf[:m.C * m.t].reshape(m.C // BLOCK, BLOCK, m.t)             # [C/32, 32, t]
    for j, tile in enumerate(m.q8):
        np.copyto(w, tile.reshape(w.shape), casting="unsafe")         # int8 -> float32
        np.multiply(w, m.s8[j][:, None, :], out=w)                    # x scale of each block
        np.matmul(x, w.reshape(m.C, m.t), out=out[:, j * m.t:(j + 1) * m.t])


def q8_blockdot(m, x, out, buf):
    nb, R = m.C // BLOCK, x.shape[0]
    w = buf[:m.C * m.t].reshape(nb, BLOCK, m.t)                       # [C/32, 32, t]
    part = buf[m.C * m.t:m.C * m.t + nb * R * m.t].reshape(nb, R, m.t)  # [C/32, R, t]
    xb = np.ascontiguousarray(x.reshape(R, nb, BLOCK).transpose(1, 0, 2))  # [C/32, R, 32]
    for j, tile in enumerate(m.q8):
        np.copyto(w, tile.reshape(w.shape), casting="unsafe")
        np.matmul(xb, w, out=part)                                    # [C/32, R, 32] @ [C/32, 32, t]
        np.multiply(part, m.s8[j][:, None, :], out=part)              # x s[k, n]
        np.add.reduce(part, axis=0, out=out[:, j * m.t:(j + 1) * m.t])  # sum over blocks -> [R, t]


def q8_kblock(m, x, out, buf):
    Np, R = m.qk.shape[2], x.shape[0]
    w = buf[:BLOCK * Np].reshape(BLOCK, Np)                           # [32, Np]
    part = buf[BLOCK * Np:BLOCK * Np + R * Np].reshape(R, Np)         # [R, Np]
    out[:] = 0
    for k, rows in enumerate(m.qk):                                   # [32, Np] int8
        np.copyto(w, rows, casting="unsafe")
        np.matmul(x[:, k * BLOCK:(k + 1) * BLOCK], w, out=part)       # [R, 32] @ [32, Np]
        np.multiply(part, m.sk[k], out=part)
        np.add(out, part, out=out)


def q8_column(m, x, out, buf):
    w = buf[:m.C * m.t].reshape(m.C, m.t)
    for j, tile in enumerate(m.q8):
        np.copyto(w, tile, casting="unsafe")
        o = out[:, j * m.t:(j + 1) * m.t]
        np.matmul(x, w, out=o)
        np.multiply(o, m.scol[j], out=o)                              # one scale per column


def q8_column_cast(m, x, out, buf):
    for j, tile in enumerate(m.q8):
        o = out[:, j * m.t:(j + 1) * m.t]
        np.matmul(x, tile, out=o, dtype=np.float32, casting="unsafe")  # NumPy converts the tile
        np.multiply(o, m.scol[j], out=o)


def q8_convert_only(m, x, out, buf):
    w = buf[:m.C * m.t].reshape(m.C, m.t)
    for tile in m.q8:
        np.copyto(w, tile, casting="unsafe")                          # no product: the floor


VARIANTS = {"f32": f32, "f32 tiles": f32_tiles, "f16 tiles": f16_tiles, "f16 bits": f16_bits,
            "f16 matmul": f16_matmul, "q8 scale": q8_scale, "q8 blockdot": q8_blockdot,
            "q8 kblock": q8_kblock, "q8 column": q8_column, "q8 column cast": q8_column_cast,
            "q8 convert only": q8_convert_only}
NO_OUTPUT = {"q8 convert only"}             # times a part of the work: nothing to check
PARTIAL = {"f16 matmul"}                      # too slow for a whole step: first layer, scaled up


def reference(name, m, x):
    """The plain formula each variant computes, from the stored arrays (untiled)."""
    Np = m.q8.shape[0] * m.t
    untile = lambda a: a.transpose(1, 0, 2).reshape(a.shape[1], Np)[:, :m.N]   # noqa: E731
    if name.startswith("f16"):
        return x @ untile(m.t16).astype(np.float32)
    if name.startswith("q8 column"):
        return (x @ untile(m.q8).astype(np.float32)) * untile(m.scol[:, None, :])[0]
    return x @ m.f32


def stored_bytes(name, m) -> int:
    """Bytes a variant reads per product: the weights in its store and their scales."""
    n = m.C * m.q8.shape[0] * m.t                                     # weights incl. padding
    if name.startswith("f16"):
        return 2 * n
    return {"f32": 4 * m.C * m.N, "f32 tiles": 4 * n, "q8 scale": n + m.s8.nbytes,
            "q8 blockdot": n + m.s8.nbytes, "q8 kblock": n + m.sk.nbytes,
            "q8 column": n + m.scol.nbytes, "q8 column cast": n + m.scol.nbytes,
            "q8 convert only": n}[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tile", type=int, default=128, help="columns per tile (a multiple of 1)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
    print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("env: " + " ".join(f"{k}={v}" for k, v in os.environ.items()
                             if k.startswith(("OPENBLAS", "OMP_", "MKL_"))))
    t, rng = args.tile, np.random.default_rng(0)
    padded = [C * -(-N // t) * t for C, N in SHAPES]
    arenas = {"f32": Arena(np.float32, [C * N for C, N in SHAPES]),
              "t32": Arena(np.float32, padded), "t16": Arena(np.float16, padded),
              "q8": Arena(np.int8, padded), "qk": Arena(np.int8, padded),
              **{k: Arena(np.float32, [p // BLOCK for p in padded]) for k in ("s8", "sk")},
              "scol": Arena(np.float32, [p // C for p, (C, _) in zip(padded, SHAPES)])}
    t0 = time.perf_counter()
    mats = [Matrix(C, N, t, rng, arenas) for C, N in SHAPES]
    print(f"{len(mats)} matrices, {sum(C * N for C, N in SHAPES) / 1e6:.1f} M weights "
          f"(F32 {arenas['f32'].flat.nbytes / 1e6:.0f} MB), made in {time.perf_counter() - t0:.1f} s; "
          f"tile {t} columns")
    widest = max(-(-N // t) * t for _, N in SHAPES)
    buf = np.zeros(max(BLOCK * widest + max(args.rows) * widest,
                       3072 * t + 96 * max(args.rows) * t), np.float32)   # every scratch buffer
    for R in args.rows:
        x = {C: rng.standard_normal((R, C), dtype=np.float32) for C in (768, 3072)}   # [R, C]
        out = {N: np.zeros((R, -(-N // t) * t), np.float32) for _, N in SHAPES}
        check = mats[-2]                                              # one [3072, 768] matrix
        errs = {}
        for name, fn in VARIANTS.items():
            if name in NO_OUTPUT:
                continue
            fn(check, x[check.C], out[check.N], buf)
            ref = reference(name, check, x[check.C])
            errs[name] = np.abs(out[check.N][:, :check.N] - ref).max() / np.abs(ref).max()
        print(f"\n== {R} row(s): max |variant - its formula| / max |formula| on a [3072, 768] matrix: "
              + ", ".join(f"{k} {v:.0e}" for k, v in errs.items()))
        times = {name: [] for name in VARIANTS}
        for _ in range(args.rounds):
            for name, fn in VARIANTS.items():
                some = mats[:4] if name in PARTIAL else mats
                t1 = time.perf_counter()
                for m in some:
                    fn(m, x[m.C], out[m.N], buf)
                times[name].append((time.perf_counter() - t1) * len(mats) / len(some)
                                   if name not in PARTIAL else
                                   (time.perf_counter() - t1) * sum(stored_bytes(name, m) for m in mats)
                                   / sum(stored_bytes(name, m) for m in some))
        bw = streaming(arenas["f32"].flat)
        report(mats, times, R, bw)
        costs(mats[0], x[768], buf, bw)


def median_ns_per_weight(fn, weights: int, repeats: int = 200) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) / weights * 1e9


def costs(m, x, buf, bw) -> None:
    """Why: each step of a converted product per weight, on one tile already in cache, against
    the memory time per weight at the streaming bound."""
    w = buf[:m.C * m.t].reshape(m.C, m.t)                             # [C, t]
    parts = {"int8 -> f32": lambda: np.copyto(w, m.q8[0], casting="unsafe"),
             "f16 -> f32": lambda: np.copyto(w, m.t16[0]),
             "f16 -> f32 by bits": lambda: f16_to_f32_bits(m.t16[0], w.view(np.int32)),
             f"[{x.shape[0]}, C] @ tile": lambda: np.matmul(x, w)}
    ns = {k: median_ns_per_weight(f, w.size) for k, f in parts.items()}
    print("per weight, one tile in cache: " + ", ".join(f"{k} {v:.3f} ns" for k, v in ns.items())
          + f"; from memory at the bound: 4 bytes {4e9 / bw:.3f} ns, 2 bytes {2e9 / bw:.3f} ns, "
          f"1 byte {1e9 / bw:.3f} ns")


def streaming(flat) -> float:
    """Bytes/s: the best of a reduction over the f32 store and a dot product of its halves."""
    half = flat.size // 2
    rates = []
    for _ in range(3):
        t = time.perf_counter()
        np.add.reduce(flat)
        rates.append(flat.nbytes / (time.perf_counter() - t))
        t = time.perf_counter()
        np.dot(flat[:half], flat[half:2 * half])
        rates.append(flat.nbytes / (time.perf_counter() - t))
    return max(rates)


def report(mats, times, R, bw) -> None:
    base = statistics.median(times["f32"])
    f32_bytes = sum(stored_bytes("f32", m) for m in mats)
    print(f"streaming bound {bw / 1e9:.1f} GB/s -> the F32 step's {f32_bytes / 1e6:.0f} MB "
          f"in {f32_bytes / bw * 1e3:.1f} ms (load average {os.getloadavg()[0]:.2f}); f32 reads at "
          f"{f32_bytes / base / bw:.0%} of it")
    print(f"| {R} row(s) | ms per step | GB/s of stored bytes | x f32 time | steps/s |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        med, nbytes = statistics.median(ts), sum(stored_bytes(name, m) for m in mats)
        note = " (first layer, scaled)" if name in PARTIAL else ""
        print(f"| {name}{note} | {med * 1e3:.1f} | {nbytes / med / 1e9:.1f} | {med / base:.2f} "
              f"| {1 / med:.1f} |")


if __name__ == "__main__":
    main()
