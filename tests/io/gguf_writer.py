"""A small GGUF writer for the tests (independent of minillm.io.gguf), plus test quantisers.

Metadata values are given with their GGUF type, ``{key: (vtype, value)}``; an array is
``(ARRAY, (element_type, [values]))`` and a nested array's elements are ``(element_type, [...])``
pairs again. Tensors are ``{name: (ggml_type, numpy_shape, raw_uint8_bytes)}``.
The encoders (``header``, ``string``, ``kv``, ``tensor_info``) let malformed-file tests assemble
broken files piece by piece.
"""
import struct

import numpy as np

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = \
    range(13)
FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
           FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}


def header(n_tensors, n_kv, version=3, magic=b"GGUF"):
    return magic + struct.pack("<IQQ", version, n_tensors, n_kv)


def string(s):
    raw = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(raw)) + raw


def value(vtype, v):
    """The bytes of one value of GGUF type ``vtype`` (without the type tag)."""
    if vtype == STRING:
        return string(v)
    if vtype == ARRAY:
        etype, items = v
        body = b"".join(value(etype, item) for item in items)
        return struct.pack("<IQ", etype, len(items)) + body
    return struct.pack(FORMATS[vtype], v)


def kv(key, vtype, v):
    return string(key) + struct.pack("<I", vtype) + value(vtype, v)


def tensor_info(name, ne, ggml_type, offset):
    return string(name) + struct.pack(f"<I{len(ne)}QIQ", len(ne), *ne, ggml_type, offset)


def pad(n, alignment):
    return b"\0" * (-n % alignment)


def gguf_bytes(metadata=None, tensors=None, version=3, alignment=32, offsets=None):
    """A whole GGUF file. ``offsets`` ({name: offset}) overrides the packed tensor offsets."""
    metadata, tensors = metadata or {}, tensors or {}
    out = header(len(tensors), len(metadata), version)
    out += b"".join(kv(k, t, v) for k, (t, v) in metadata.items())
    data, placed = b"", {}
    for name, (_, _, raw) in tensors.items():
        data += pad(len(data), alignment)
        placed[name] = len(data)
        data += bytes(raw)
    placed.update(offsets or {})
    for name, (ggml_type, shape, _) in tensors.items():
        out += tensor_info(name, list(reversed(shape)), ggml_type, placed[name])
    return out + pad(len(out), alignment) + data


def _half(x):  # float32 [...] -> float16 [...] bytes-ready
    return np.asarray(x, dtype=np.float16)


def quantize(x, ggml_type):
    """Round-to-nearest quantisers for Q8_0 (8), Q4_0 (2), Q4_1 (3); x is [..., 32k] float32."""
    blocks = np.asarray(x, np.float32).reshape(-1, 32)                  # [nb, 32]
    if ggml_type == 8:  # Q8_0: d = max|x| / 127, q = round(x / d)
        d = _half(np.abs(blocks).max(axis=1) / 127)                    # [nb]
        inv = np.divide(1, d.astype(np.float32), out=np.zeros(len(d), np.float32), where=d != 0)
        q = np.clip(np.rint(blocks * inv[:, None]), -127, 127).astype(np.int8)  # [nb, 32]
        return np.concatenate([d[:, None].view(np.uint8), q.view(np.uint8)], axis=1).reshape(-1)
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
