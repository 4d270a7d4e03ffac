"""GGUF's building blocks: bounds-checked reads of strings, counts and metadata values, and the
limits that keep a hostile file from asking for absurd amounts of memory. io/gguf/read.py reads the
file with them.

A *string* is a uint64 byte length + UTF-8 bytes. A value type is one of UINT8 0, INT8 1,
UINT16 2, INT16 3, UINT32 4, INT32 5, FLOAT32 6, BOOL 7, STRING 8, ARRAY 9 (element type u32 +
count u64 + elements, arrays may nest), UINT64 10, INT64 11, FLOAT64 12; all little-endian. They
come back as Python values: int, float, bool, str, list.

Every read is bounds-checked; a count or length is checked against the bytes left and against a
limit below; a value type must be known; a bool must be 0 or 1. Arrays may nest at most
``MAX_NESTING`` deep (the spec sets no limit; this keeps recursion bounded). Example::

    Cursor(memoryview(b"\\x05\\x00\\x00\\x00")).u32("n")       # 5
"""
import struct

import numpy as np

from minillm.io.gguf.limits import (ARRAY, BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64,
                                    STRING, UINT8, UINT16, UINT32, UINT64)

MAX_NESTING = 8
# Bounds from what real files need (a file may be many GB, so "the bytes left" bounds little):
# the largest vocabularies have ~260k tokens and merges, chat templates ~20 KB, models ~3k tensors.
MAX_STRING_BYTES = 1 << 22        # 4 MiB for one string
MAX_ARRAY_LENGTH = 1 << 24        # 16,777,216 elements in one metadata array
MAX_METADATA = 1 << 16            # 65,536 key/value pairs
MAX_TENSORS = 1 << 16             # 65,536 tensors
# metadata scalar type id -> NumPy dtype (BOOL read as u1, then checked to be 0 or 1)
SCALARS = {UINT8: "<u1", INT8: "<i1", UINT16: "<u2", INT16: "<i2", UINT32: "<u4", INT32: "<i4",
           FLOAT32: "<f4", BOOL: "<u1", UINT64: "<u8", INT64: "<i8", FLOAT64: "<f8"}


def metadata_number(meta: dict, key: str, default=None) -> float:
    """A float from the metadata value ``key`` (an int or float of the file), or a ValueError
    naming the key (``float("abc")`` would say only "could not convert string to float")."""
    value = meta.get(key, default)
    if value is None:
        raise ValueError(f"GGUF metadata lacks {key}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"GGUF metadata {key} must be a number, got {str(value)[:60]!r} "
                         f"({type(value).__name__})")
    return float(value)


class Cursor:
    """Bounds-checked sequential reads from the mapped file."""

    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, n, what):
        if n > len(self.buf) - self.pos:
            raise ValueError(f"truncated GGUF file: {what} needs {n} bytes at offset {self.pos}, "
                             f"only {len(self.buf) - self.pos} left")
        self.pos += n
        return self.buf[self.pos - n:self.pos]

    def u32(self, what):
        return struct.unpack("<I", self.take(4, what))[0]

    def u64(self, what):
        return struct.unpack("<Q", self.take(8, what))[0]

    def count(self, what, min_item_bytes, limit):  # a u64 count: bytes left, and a real bound
        n = self.u64(what)
        if n > limit:
            raise ValueError(f"absurd {what} {n:,}: over minillm's limit of {limit:,} (real GGUF "
                             f"files need far less)")
        if n * min_item_bytes > len(self.buf) - self.pos:
            raise ValueError(f"absurd {what} {n}: {len(self.buf) - self.pos} bytes left in file")
        return n

    def string(self, what):
        raw = bytes(self.take(self.count(f"{what} length", 1, MAX_STRING_BYTES), what))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{what} at offset {self.pos - len(raw)} is not UTF-8: {e}") from None

    def value(self, vtype, what, depth=0):
        """One metadata value of type ``vtype`` as a Python value."""
        return self.typed_value(vtype, what, depth)[0]

    def typed_value(self, vtype, what, depth=0):
        """-> (one metadata value of type ``vtype``, its element type if it is an array, else
        None)."""
        if vtype == STRING:
            return self.string(what), None
        if vtype in SCALARS:
            return self.array(vtype, 1, what)[0], None
        if vtype != ARRAY:
            raise ValueError(f"{what}: unknown value type {vtype}; allowed 0..12")
        if depth >= MAX_NESTING:
            raise ValueError(f"{what}: arrays nested deeper than {MAX_NESTING}")
        etype = self.u32(f"{what} element type")
        if etype not in SCALARS and etype not in (STRING, ARRAY):
            raise ValueError(f"{what}: unknown array element type {etype}; allowed 0..12")
        if etype in SCALARS:
            n = self.count(f"{what} array length", 1, MAX_ARRAY_LENGTH)
            return self.array(etype, n, what), etype
        n = self.count(f"{what} array length", 8 if etype == STRING else 12, MAX_ARRAY_LENGTH)
        return [self.value(etype, f"{what}[{i}]", depth + 1) for i in range(n)], etype

    def array(self, vtype, n, what):  # n numbers at once, vectorised
        dtype = np.dtype(SCALARS[vtype])
        values = np.frombuffer(self.take(n * dtype.itemsize, what), dtype=dtype)  # [n]
        if vtype == BOOL:
            if np.any(values > 1):
                raise ValueError(f"{what}: a bool must be 0 or 1")
            return values.astype(bool).tolist()
        return values.tolist()  # Python ints / floats (float32 widened exactly)
