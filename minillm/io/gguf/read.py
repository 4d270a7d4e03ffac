"""GGUF: read llama.cpp's model file (versions 2 and 3) with NumPy, memory-mapped.

Layout (all integers little-endian; a *string* is a uint64 byte length + UTF-8 bytes)::

    magic "GGUF" | version u32 | n_tensors u64 | n_kv u64
    n_kv x       key string | value type u32 | value          (metadata: config, tokenizer, ...)
    n_tensors x  name string | n_dims u32 | ne[0..n_dims) u64 | ggml type u32 | offset u64
    zero padding up to a multiple of `general.alignment` (default 32)  <- data section starts here
    tensor bytes, each at data start + offset (offset a multiple of the alignment)

Strings, counts and metadata values (int, float, bool, str, list) are read by gguf/values.py,
which also holds the limits on counts and lengths. Each value's GGUF type is kept beside it
(``Metadata.types``), so that a re-export writes it back with the same type (gguf/carry.py).

Shape convention (subtle): GGUF lists dims fastest-first, ``ne[0]`` is the row length. NumPy
lists them slowest-first, so ``TensorInfo.shape = tuple(reversed(ne))``. An HF ``nn.Linear`` weight
``[out, in]`` is stored with ``ne = [in, out]`` and comes back here as NumPy ``[out, in]``.

Validation: every read is bounds-checked (gguf/values.py); known ggml types only; tensor extents
must lie inside the file, be aligned, and not overlap. Choices where references differ:
``general.alignment`` must be a power of two (as in llama.cpp; the spec also says a multiple of
8, which would reject 1, 2, 4); tensors may appear in any order and with gaps (the spec allows it;
llama.cpp demands tight packing).
"""
import math
import os
import struct
from dataclasses import dataclass

import numpy as np

from minillm.io.bounded import open_regular
from minillm.io.gguf.dequant import DEQUANTIZERS, dequantize
from minillm.io.gguf.values import MAX_METADATA, MAX_TENSORS, Cursor

MAGIC = b"GGUF"
VERSIONS = (2, 3)
# ggml type id -> (name, values per block, bytes per block); from ggml.h / gguf-py 0.19
GGML_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
              6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40),
              10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
              13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
              16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
              19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
              22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1),
              25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8),
              29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54),
              35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17)}


class Metadata(dict):
    """The metadata as read, ``{key: value}`` (int, float, bool, str, list), plus ``types``:
    ``{key: (GGUF value type, element type of an array or None)}``, e.g. ``(4, None)`` for a
    UINT32, ``(9, 8)`` for an array of strings."""

    def __init__(self):
        super().__init__()
        self.types: dict[str, tuple[int, int | None]] = {}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry: ``shape`` in NumPy order, ``offset`` relative to the data section."""
    name: str
    shape: tuple
    ggml_type: int
    offset: int
    nbytes: int

    @property
    def type_name(self):
        return GGML_TYPES[self.ggml_type][0]


class GGUF:
    """A parsed GGUF file: ``.version``, ``.metadata``, ``.tensors``, ``.raw(name)``, ``.tensor()``.

    Example::

        g = read_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")
        g.metadata["llama.block_count"]            # 30
        g.tensors["blk.0.attn_q.weight"].shape     # (576, 576), type Q4_1
        g.tensor("blk.0.attn_q.weight").dtype      # float32
    """

    def __init__(self, path):
        self.path = path
        with open_regular(path) as f:                   # a device, FIFO or folder: refused
            size = os.fstat(f.fileno()).st_size
            if size < 24:
                raise ValueError(f"{path} is not a GGUF file: {size} bytes, the header alone "
                                 f"takes 24")
            self._map = np.memmap(f, dtype=np.uint8, mode="r")  # [file_size], read-only, lazy
        cur = Cursor(memoryview(self._map))
        if bytes(cur.take(4, "magic")) != MAGIC:
            raise ValueError(f"{path} is not a GGUF file (magic is not b'GGUF')")
        self.version = cur.u32("version")
        if self.version not in VERSIONS:
            endian = " (a big-endian file?)" if self.version > 0xFFFF else ""
            raise ValueError(f"unsupported GGUF version {self.version}{endian}; supported: 2, 3")
        n_tensors = cur.count("tensor count", 24, MAX_TENSORS)  # a tensor info takes >= 24 bytes
        n_kv = cur.count("metadata count", 13, MAX_METADATA)    # a key/value pair takes >= 13
        self.metadata = Metadata()
        for i in range(n_kv):
            key = cur.string(f"metadata key {i}")
            if key in self.metadata:
                raise ValueError(f"duplicate metadata key {key!r}")
            vtype = cur.u32(f"type of {key!r}")
            self.metadata[key], etype = cur.typed_value(vtype, key)
            self.metadata.types[key] = (vtype, etype)
        self.alignment = self.metadata.get("general.alignment", 32)
        if (type(self.alignment) is not int or self.alignment < 1
                or self.alignment & (self.alignment - 1)):
            raise ValueError(f"general.alignment must be a power of two, got {self.alignment!r}")
        infos = [self._tensor_info(cur, i) for i in range(n_tensors)]
        self.data_offset = -(-cur.pos // self.alignment) * self.alignment  # round up
        self.tensors = {}
        for info in infos:
            if info.name in self.tensors:
                raise ValueError(f"duplicate tensor name {info.name!r}")
            self.tensors[info.name] = info
        self._check_extents(infos, len(self._map))

    def _tensor_info(self, cur, i):
        name = cur.string(f"tensor {i} name")
        n_dims = cur.u32(f"n_dims of {name!r}")
        if not 1 <= n_dims <= 4:
            raise ValueError(f"tensor {name!r}: {n_dims} dims, GGML allows 1 to 4")
        ne = struct.unpack(f"<{n_dims}Q", cur.take(8 * n_dims, f"dims of {name!r}"))
        ggml_type = cur.u32(f"type of {name!r}")
        if ggml_type not in GGML_TYPES:
            raise ValueError(f"tensor {name!r}: unknown ggml type {ggml_type}; known: "
                             f"{sorted(GGML_TYPES)}")
        type_name, block, block_bytes = GGML_TYPES[ggml_type]
        if ne[0] % block:
            raise ValueError(f"tensor {name!r}: row length ne[0] = {ne[0]} is not a multiple of "
                             f"the {type_name} block size {block}")
        offset = cur.u64(f"offset of {name!r}")
        if offset % self.alignment:
            raise ValueError(f"tensor {name!r}: offset {offset} is not a multiple of the "
                             f"alignment {self.alignment}")
        nbytes = math.prod(ne) // block * block_bytes
        return TensorInfo(name, tuple(reversed(ne)), ggml_type, offset, nbytes)

    def _check_extents(self, infos, file_size):
        """Every tensor inside the file; sorted by offset, none overlaps the next."""
        end, previous = 0, None
        for info in sorted(infos, key=lambda t: (t.offset, t.nbytes)):
            if self.data_offset + info.offset + info.nbytes > file_size:
                raise ValueError(f"tensor {info.name!r}: bytes [{info.offset}, "
                                 f"{info.offset + info.nbytes}) of the data section run past the "
                                 f"end of the file (truncated?)")
            if info.offset < end:
                raise ValueError(f"tensor {info.name!r} at offset {info.offset} overlaps tensor "
                                 f"{previous!r}, which ends at {end}")
            end, previous = info.offset + info.nbytes, info.name

    def _info(self, name):
        if name not in self.tensors:
            raise KeyError(f"no tensor {name!r} in {self.path}")
        return self.tensors[name]

    def raw(self, name):  # -> [nbytes] uint8, a read-only view of the memory map
        """The tensor's stored bytes, not decoded (no copy: pages load on first touch)."""
        info = self._info(name)
        start = self.data_offset + info.offset
        return np.asarray(self._map[start:start + info.nbytes])  # [nbytes] uint8

    def tensor(self, name):  # -> shape float32
        """The tensor dequantised to float32, in NumPy shape order (see the module docstring)."""
        info = self._info(name)
        if info.ggml_type not in DEQUANTIZERS:
            raise ValueError(f"tensor {name!r} is {info.type_name}, which minillm cannot "
                             f"dequantise; supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1")
        return dequantize(self.raw(name), info.ggml_type, info.shape)


def read_gguf(path):
    """Parse a GGUF file's header, metadata and tensor table; the data stays memory-mapped."""
    return GGUF(path)
