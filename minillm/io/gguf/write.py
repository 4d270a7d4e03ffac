"""GGUF out: write llama.cpp's file format (version 3), the inverse of ``read.py``.

The layout is drawn in ``read.py``; writing it is four encoders and a padding rule::

    header(n_tensors, n_kv)            b"GGUF" | version u32 | n_tensors u64 | n_kv u64
    kv(key, vtype, value)              key string | value type u32 | value
    tensor_info(name, ne, type, off)   name string | n_dims u32 | ne[...] u64 | type u32 | offset u64
    pad(n, alignment)                  zeros up to the next multiple of the alignment

Metadata is given with its GGUF type, ``{key: (vtype, value)}``; an array is
``(ARRAY, (element_type, [values]))``. Tensors are ``{name: (ggml_type, numpy_shape, raw_uint8)}``
with the shape in NumPy order (slowest first): ``ne`` is that shape reversed (``read.py``).

    >>> raw = np.zeros(4, np.float32).view(np.uint8)
    >>> write_gguf("t.gguf", {"general.architecture": (STRING, "llama")}, {"w": (F32, (2, 2), raw)})

``quantize_q8_0`` is llama.cpp's Q8_0 (round to nearest): blocks of 32 values, one float16 scale
``d = max|x| / 127`` and 32 int8 ``q = round(x / d)``; ``dequant.py`` reads it back as ``d · q``.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from minillm.io.atomic import atomic_open
# metadata value types: their numbers and ranges live in gguf/limits.py (checked before writing)
from minillm.io.gguf.limits import (  # noqa: F401  (the types, importable from here too)
    ARRAY, BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, STRING, UINT8, UINT16, UINT32,
    UINT64, check_header)

FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
           FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
F32, F16, Q8_0 = 0, 1, 8          # the ggml tensor types this writer produces
ALIGNMENT = 32                    # GGUF's default `general.alignment`


def header(n_tensors: int, n_kv: int, version: int = 3, magic: bytes = b"GGUF") -> bytes:
    return magic + struct.pack("<IQQ", version, n_tensors, n_kv)


def string(s: str | bytes) -> bytes:
    """A GGUF string: u64 byte length + UTF-8 bytes (bytes are written as given)."""
    raw = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(raw)) + raw


def value(vtype: int, v) -> bytes:
    """The bytes of one value of GGUF type ``vtype`` (without the type tag)."""
    if vtype == STRING:
        return string(v)
    if vtype == ARRAY:
        etype, items = v
        body = b"".join(value(etype, item) for item in items)
        return struct.pack("<IQ", etype, len(items)) + body
    if vtype not in FORMATS:
        raise ValueError(f"unknown GGUF value type {vtype}; known: 0-12")
    return struct.pack(FORMATS[vtype], v)


def kv(key: str, vtype: int, v) -> bytes:
    return string(key) + struct.pack("<I", vtype) + value(vtype, v)


def tensor_info(name: str, ne, ggml_type: int, offset: int) -> bytes:
    return string(name) + struct.pack(f"<I{len(ne)}QIQ", len(ne), *ne, ggml_type, offset)


def pad(n: int, alignment: int) -> bytes:
    return b"\0" * (-n % alignment)


def _head_and_offsets(metadata, tensors, version, alignment, offsets):
    """Everything before the data section, and where each tensor sits inside it."""
    placed, end = {}, 0
    for name, (_, _, raw) in tensors.items():
        end += -end % alignment                     # each tensor starts on the alignment
        placed[name] = end
        end += len(raw)
    placed.update(offsets or {})
    head = header(len(tensors), len(metadata), version)
    head += b"".join(kv(k, t, v) for k, (t, v) in metadata.items())
    for name, (ggml_type, shape, _) in tensors.items():
        head += tensor_info(name, list(reversed(shape)), ggml_type, placed[name])
    return head + pad(len(head), alignment), placed


def gguf_bytes(metadata=None, tensors=None, version: int = 3, alignment: int = ALIGNMENT,
               offsets=None) -> bytes:
    """A whole GGUF file in memory. ``offsets`` ({name: offset}) overrides the packed offsets
    (tests use it to build broken files)."""
    metadata, tensors = metadata or {}, tensors or {}
    head, _ = _head_and_offsets(metadata, tensors, version, alignment, offsets)
    data = bytearray()
    for name, (_, _, raw) in tensors.items():
        data += pad(len(data), alignment) + bytes(raw)
    return head + bytes(data)


def write_gguf(path: str | Path, metadata: dict, tensors: dict, alignment: int = ALIGNMENT) -> None:
    """Write a GGUF file, streaming each tensor's bytes (no copy of the whole file in memory)."""
    if alignment & (alignment - 1) or alignment <= 0:
        raise ValueError(f"alignment must be a power of two, got {alignment}")
    if alignment != ALIGNMENT:
        metadata = {**metadata, "general.alignment": (UINT32, alignment)}
    check_header(metadata, tensors)                 # every value in range, before opening
    head, placed = _head_and_offsets(metadata, tensors, 3, alignment, None)
    with atomic_open(path, "wb") as f:     # a crash or a full disk leaves the old file (atomic.py)
        f.write(head)
        written = 0
        for name, (_, _, raw) in tensors.items():
            f.write(pad(written, alignment))
            f.write(memoryview(np.ascontiguousarray(raw)).cast("B"))
            written = placed[name] + len(raw)


def encode_tensor(x: np.ndarray, ggml_type: int) -> np.ndarray:
    """float32 [..., n] -> the raw bytes [N] uint8 of a tensor of ``ggml_type`` (F32, F16, Q8_0)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if ggml_type == F32:
        return x.reshape(-1).view(np.uint8)
    if ggml_type == F16:
        return x.astype("<f2").reshape(-1).view(np.uint8)
    if ggml_type == Q8_0:
        return quantize_q8_0(x)
    raise ValueError(f"ggml type {ggml_type} cannot be written; allowed: F32 (0), F16 (1), Q8_0 (8)")


_SMALLEST_INVERTIBLE = 1 / float(np.finfo(np.float32).max)   # 1/d stays finite above it


def quantize_q8_0(x: np.ndarray) -> np.ndarray:
    """float32 [..., 32k] -> Q8_0 blocks as raw bytes [nb · 34]: float16 d, then 32 int8 q.

        d = max|x| / 127 (per block of 32)      q = round(x / d), in [-127, 127]
    Byte-identical to llama.cpp's ``quantize_row_q8_0_ref`` and the ``gguf`` package (checked by
    scripts/check_gguf/export.py). subtle: both divide by the float32 d and only then store it as
    float16, and round halves away from zero (C's roundf), not to even as ``np.rint`` does.
    An all-zero block has d = 0 and q = 0.
    """
    if x.shape[-1] % 32:
        raise ValueError(f"Q8_0 needs rows of a multiple of 32 values, got {x.shape[-1]}")
    blocks = np.asarray(x, np.float32).reshape(-1, 32)                          # [nb, 32]
    d = np.abs(blocks).max(axis=1) / np.float32(127)                            # [nb] float32
    # subtle: below ~2.9e-39, 1/d overflows float32 (llama.cpp then casts inf to int8, undefined);
    # such a d is 0 once stored as float16, so q = 0 decodes to the same zeros
    inv = np.divide(1, d, out=np.zeros_like(d), where=d > _SMALLEST_INVERTIBLE)  # [nb]
    q = _round_half_away(blocks * inv[:, None]).astype(np.int8)                 # [nb, 32] in ±127
    half = d.astype(np.float16)                                                 # [nb]
    return np.concatenate([half[:, None].view(np.uint8), q.view(np.uint8)], axis=1).reshape(-1)


def _round_half_away(v: np.ndarray) -> np.ndarray:
    """C's roundf: 2.5 -> 3, -2.5 -> -3 (``np.rint`` gives 2, -2). Written as floor(|v|) plus one
    when the fraction is at least 1/2, which stays exact where floor(|v| + 0.5) would round."""
    a = np.abs(v)
    whole = np.floor(a)
    return np.sign(v) * (whole + np.floor(2 * (a - whole)))
