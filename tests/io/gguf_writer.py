"""The GGUF writer the tests use: minillm's own (``minillm/io/gguf/write.py``), plus the Q4_0 and
Q4_1 quantisers that only the dequantisation tests need.

Metadata values are given with their GGUF type, ``{key: (vtype, value)}``; an array is
``(ARRAY, (element_type, [values]))``. Tensors are ``{name: (ggml_type, numpy_shape, raw_uint8_bytes)}``.
The encoders (``header``, ``string``, ``kv``, ``tensor_info``) let malformed-file tests assemble
broken files piece by piece.
"""
import numpy as np

from minillm.io.gguf.write import (  # noqa: F401  (re-exported for the tests)
    ARRAY, BOOL, FLOAT32, FLOAT64, FORMATS, INT8, INT16, INT32, INT64, STRING, UINT8, UINT16,
    UINT32, UINT64, gguf_bytes, header, kv, pad, quantize_q8_0, string, tensor_info, value)


def _half(x):  # float32 [...] -> float16 [...] bytes-ready
    return np.asarray(x, dtype=np.float16)


def quantize(x, ggml_type):
    """Round-to-nearest quantisers for Q8_0 (8, the library's), Q4_0 (2), Q4_1 (3); x is
    [..., 32k] float32."""
    if ggml_type == 8:
        return quantize_q8_0(x)
    blocks = np.asarray(x, np.float32).reshape(-1, 32)                  # [nb, 32]
    if ggml_type == 2:  # Q4_0: d = (value of max |x|) / -8, q = round(x / d) + 8 in 0..15
        amax = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=1)[:, None], 1)[:, 0]
        d, m = _half(amax / -8), None
        shift = 8.0
    else:               # Q4_1: d = (max - min) / 15, m = min, q = round((x - m) / d)
        lo = blocks.min(axis=1)
        d, m = _half((blocks.max(axis=1) - lo) / 15), _half(lo)
        shift = 0.0
    inv = np.divide(1, d.astype(np.float32), out=np.zeros(len(d), np.float32), where=d != 0)
    base = blocks if m is None else blocks - m.astype(np.float32)[:, None]
    q = np.clip(np.rint(base * inv[:, None]) + shift, 0, 15).astype(np.uint8)  # [nb, 32]
    packed = q[:, :16] | (q[:, 16:] << 4)                                      # [nb, 16]
    scales = [d[:, None].view(np.uint8)] + ([] if m is None else [m[:, None].view(np.uint8)])
    return np.concatenate(scales + [packed], axis=1).reshape(-1)
