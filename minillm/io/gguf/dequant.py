"""Dequantisation of GGML tensor types: raw bytes -> float32, one vectorised function per type.

The quantised types cut each row into blocks of 32 consecutive values; every block stores its own
scale ``d`` (and, for Q4_1, an offset ``m``) as float16 followed by small integers ``q``. A block
is decoded independently: ``x = d * q`` (Q8_0), ``x = d * (q - 8)`` (Q4_0), ``x = d * q + m``
(Q4_1). We view the bytes as a structured dtype (one record per block), decode all blocks at once
and reshape to the tensor's NumPy shape. All arithmetic is float32: a float16 scale is widened
first, ``q`` is converted to float32, and no float64 value takes part.

Type ids are GGML's (``ggml.h``): F32 0, F16 1, Q4_0 2, Q4_1 3, Q8_0 8, BF16 30.
"""
import math

import numpy as np

F32, F16, Q4_0, Q4_1, Q8_0, BF16 = 0, 1, 2, 3, 8, 30
BLOCK = 32  # values per block in Q4_0, Q4_1, Q8_0

# one block of each quantised type as a NumPy record (itemsize = bytes per block, no padding)
Q8_0_BLOCK = np.dtype([("d", "<f2"), ("q", "i1", (32,))])                   # 34 bytes
Q4_0_BLOCK = np.dtype([("d", "<f2"), ("q", "u1", (16,))])                   # 18 bytes
Q4_1_BLOCK = np.dtype([("d", "<f2"), ("m", "<f2"), ("q", "u1", (16,))])     # 20 bytes


def _blocks(raw, block_dtype, n):  # [nbytes] uint8 -> [n / 32] records
    """View ``raw`` as n/32 block records, checking the byte count."""
    if n % BLOCK:
        raise ValueError(f"{n} values do not fill whole blocks of {BLOCK}")
    expected = n // BLOCK * block_dtype.itemsize
    if raw.size != expected:
        raise ValueError(f"{raw.size} bytes given, {n} values of this type need {expected}")
    return raw.view(block_dtype)  # [nbytes] u8 -> [n_blocks] records (no copy)


def _nibbles(q):  # [n_blocks, 16] uint8 -> [n_blocks, 32] float32
    """Unpack 16 bytes into 32 4-bit values: low nibbles are elements 0..15, high 16..31."""
    low = q & 0x0F                                          # [n_blocks, 16] elements 0..15
    high = q >> 4                                           # [n_blocks, 16] elements 16..31
    return np.concatenate([low, high], axis=1).astype(np.float32)  # [n_blocks, 32]


def dequantize_f32(raw, n):  # [4n] uint8 -> [n] float32
    """F32: four little-endian bytes per value, nothing to decode (a view, no copy)."""
    if raw.size != 4 * n:
        raise ValueError(f"{raw.size} bytes given, {n} F32 values need {4 * n}")
    return raw.view("<f4")


def dequantize_f16(raw, n):  # [2n] uint8 -> [n] float32
    """F16: IEEE half precision (1 sign, 5 exponent, 10 mantissa bits), widened exactly."""
    if raw.size != 2 * n:
        raise ValueError(f"{raw.size} bytes given, {n} F16 values need {2 * n}")
    return raw.view("<f2").astype(np.float32)


def dequantize_bf16(raw, n):  # [2n] uint8 -> [n] float32
    """BF16: the top 16 bits of a float32 (1 sign, 8 exponent, 7 mantissa): ``x = bits << 16``."""
    if raw.size != 2 * n:
        raise ValueError(f"{raw.size} bytes given, {n} BF16 values need {2 * n}")
    return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)  # [n] u16 -> u32 -> f32


def dequantize_q8_0(raw, n):  # [34 n/32] uint8 -> [n] float32
    """Q8_0: 32 values in 34 bytes, ``x[i] = d * q[i]``::

        byte  0      2                                          34
              +------+------------------------------------------+
              | d    | q[0] q[1] ...                      q[31] |
              | f16  | int8 x 32                                |
              +------+------------------------------------------+

    Example: d = 0.5, q = [2, -3, ...] -> x = [1.0, -1.5, ...].
    """
    blocks = _blocks(raw, Q8_0_BLOCK, n)                         # [nb] records
    d = blocks["d"].astype(np.float32)[:, None]                  # [nb, 1]
    return (d * blocks["q"].astype(np.float32)).reshape(n)       # [nb, 32] -> [n]


def dequantize_q4_0(raw, n):  # [18 n/32] uint8 -> [n] float32
    """Q4_0: 32 values in 18 bytes, 4-bit ``q`` in 0..15 centred on 8: ``x[i] = d * (q[i] - 8)``::

        byte  0      2                                   18
              +------+-----------------------------------+
              | d    | b[0]  b[1]  ...            b[15]  |   b[j] = q[j] | q[j+16] << 4
              | f16  | low nibble = q[j], high = q[j+16] |
              +------+-----------------------------------+

    subtle: the two nibbles of a byte are elements j and j + 16, not 2j and 2j + 1.
    Example: d = 2, b[0] = 0x9A -> x[0] = 2 * (0xA - 8) = 4, x[16] = 2 * (0x9 - 8) = 2.
    """
    blocks = _blocks(raw, Q4_0_BLOCK, n)                         # [nb] records
    d = blocks["d"].astype(np.float32)[:, None]                  # [nb, 1]
    return (d * (_nibbles(blocks["q"]) - 8.0)).reshape(n)        # [nb, 32] -> [n]


def dequantize_q4_1(raw, n):  # [20 n/32] uint8 -> [n] float32
    """Q4_1: 32 values in 20 bytes, 4-bit ``q`` in 0..15 with scale and minimum: ``x = d * q + m``::

        byte  0      2      4                                   20
              +------+------+-----------------------------------+
              | d    | m    | b[0]  b[1]  ...            b[15]  |   b[j] = q[j] | q[j+16] << 4
              | f16  | f16  | low nibble = q[j], high = q[j+16] |
              +------+------+-----------------------------------+

    The quantiser sets m = min(block), d = (max - min) / 15, so q = 0 is the minimum, 15 the max.
    Example: d = 0.5, m = -1, b[0] = 0x3F -> x[0] = 0.5 * 15 - 1 = 6.5, x[16] = 0.5 * 3 - 1 = 0.5.
    """
    blocks = _blocks(raw, Q4_1_BLOCK, n)                         # [nb] records
    d = blocks["d"].astype(np.float32)[:, None]                  # [nb, 1]
    m = blocks["m"].astype(np.float32)[:, None]                  # [nb, 1]
    return (d * _nibbles(blocks["q"]) + m).reshape(n)            # [nb, 32] -> [n]


DEQUANTIZERS = {F32: dequantize_f32, F16: dequantize_f16, BF16: dequantize_bf16,
                Q8_0: dequantize_q8_0, Q4_0: dequantize_q4_0, Q4_1: dequantize_q4_1}


def dequantize(raw, ggml_type, shape):  # [nbytes] uint8 -> shape float32
    """Decode the raw bytes of one GGML tensor into a float32 array of NumPy ``shape``.

    ``shape`` is in NumPy order (slowest axis first); blocks run along the last axis, which for
    the quantised types must be a multiple of 32. Supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1.
    """
    if ggml_type not in DEQUANTIZERS:
        raise ValueError(f"cannot dequantise GGML type {ggml_type}; supported: "
                         f"F32 0, F16 1, Q4_0 2, Q4_1 3, Q8_0 8, BF16 30")
    raw = np.asarray(raw)
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise TypeError(f"raw must be a 1-D uint8 array, got {raw.dtype} with shape {raw.shape}")
    shape = tuple(int(s) for s in shape)
    if ggml_type in (Q8_0, Q4_0, Q4_1) and shape and shape[-1] % BLOCK:
        raise ValueError(f"a quantised row must hold a multiple of {BLOCK} values, got {shape[-1]}")
    return DEQUANTIZERS[ggml_type](raw, math.prod(shape)).reshape(shape)  # [n] -> shape


VALUES_AT_ONCE = 1 << 18    # dequantize_into's slice: 1 MB of float32 (a multiple of BLOCK)


def dequantize_into(raw, ggml_type, out):  # [nbytes] uint8 -> out (float32 [..., n])
    """``out[...] = dequantize(raw, ggml_type, out.shape)``, decoded a slice at a time.

    For loading straight into the parameter arena: the temporaries are a few slices of
    ``VALUES_AT_ONCE`` values, never a second copy of the tensor (a [V, C] embedding is 100+ MB).
    The byte count is checked slice by slice, so a wrong total still raises ValueError. ``out``
    that is not one C-contiguous array (the arena's tied wte [C, V]ᵀ, a tiled matrix) is written
    through itself, whole rows at a time.
    """
    if ggml_type in (Q8_0, Q4_0, Q4_1) and len(out.shape) and out.shape[-1] % BLOCK:
        raise ValueError(f"a quantised row must hold a multiple of {BLOCK} values, got {out.shape[-1]}")
    raw = np.asarray(raw)                                          # [nbytes]
    if not (isinstance(out, np.ndarray) and out.flags.c_contiguous):
        rows, width = out.shape                                    # [rows, width] written by rows
        step = max(1, VALUES_AT_ONCE // width)                     # rows per slice
        for r0 in range(0, rows, step):
            r1 = min(rows, r0 + step)
            part = raw[raw.size * r0 // rows:raw.size * r1 // rows]    # whole rows = whole blocks
            out[r0:r1] = dequantize(part, ggml_type, (r1 - r0, width))  # [r1 − r0, width]
        return out
    if out.dtype != np.float32 or not out.flags.writeable:
        raise ValueError("out must be a writable float32 array")
    flat = out.reshape(-1)                                         # [n] (a view of out)
    n = flat.size
    for i in range(0, n, VALUES_AT_ONCE):
        j = min(n, i + VALUES_AT_ONCE)                            # whole blocks: i, j multiples of 32 (or j = n)
        flat[i:j] = dequantize(raw[raw.size * i // n:raw.size * j // n], ggml_type, (j - i,))
    return out
