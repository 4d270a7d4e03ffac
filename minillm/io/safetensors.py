"""safetensors: read and write the Hugging Face tensor file format, in NumPy.

The whole format, byte by byte::

    [ N : uint64 little-endian ][ N bytes of JSON header ][ data buffer ...................... ]
                                 {"__metadata__": {"format": "np"},                 (optional)
                                  "wte": {"dtype": "F32", "shape": [50257, 768],
                                          "data_offsets": [0, 154389504]}, ...}

``data_offsets = [begin, end]`` are byte positions *inside the data buffer* (which starts at 8 + N).
Each tensor is C-order, little-endian, ``end - begin == prod(shape) * itemsize``; the tensors tile
the buffer exactly (no holes, no overlaps), so a file cannot hide anything between them
(safetensors_header.py reads and checks the header). There is no pickle anywhere: a malicious
file can at worst be rejected.

Choices (the reference is the Rust ``safetensors`` crate, 0.8):
- Reading: F16 and BF16 become float32 (BF16 is the top 16 bits of a float32, so a shift suffices);
  with ``mmap=True`` F32/I32/I64 tensors are read-only views of a memory map (no copy, pages load on
  use). The ``__metadata__`` strings are read by :func:`load_safetensors_metadata`, a second
  function, so :func:`load_safetensors` always returns one plain dict.
- Writing: tensors sorted as the reference sorts them (larger dtype first, then by name) and the
  header padded with spaces to a multiple of 8, so our files are byte-identical to
  ``safetensors.numpy.save_file`` for at most one metadata key (the reference orders several keys
  by a hash map: not deterministic). BF16 is written only when asked (``bf16=True`` for every
  float32 tensor, or a set of names), rounding to nearest-even like ``torch``'s ``.bfloat16()``.
"""
import json
import os

import numpy as np

from minillm.io.atomic import atomic_open, open_new
from minillm.io.bounded import open_regular
from minillm.io.safetensors_header import DTYPES, check_entries, read_header


# order of dtypes in the data buffer when writing (the reference's: larger first)
_WRITE_ORDER = {"I64": 0, "F32": 1, "I32": 2, "BF16": 3, "F16": 4}
_FROM_NUMPY = {np.dtype("float32"): "F32", np.dtype("float16"): "F16",
               np.dtype("int32"): "I32", np.dtype("int64"): "I64"}


def bf16_to_float32(bits):  # [...] uint16 -> [...] float32
    """BF16 -> float32: a bfloat16 is the top half of a float32, so ``x = bits << 16``.

    Example: 0x3F80 -> 0x3F800000 = 1.0; 0xC000 -> 0xC0000000 = -2.0.
    """
    return (bits.astype(np.uint32) << 16).view(np.float32)  # [...] u16 -> u32 -> f32 (same bits)


def float32_to_bf16(x):  # [...] float32 -> [...] uint16
    """float32 -> BF16 bits, rounding to nearest, ties to even (NaN kept a quiet NaN).

    Rounding adds 0x7FFF plus the lowest kept bit, then drops the low 16 bits.
    Example: 1.0 (0x3F800000) -> 0x3F80; 1 + 2**-8 (0x3F808000, a tie) -> 0x3F80 (even).
    """
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)  # [...] u32 (subtle: not
    # ascontiguousarray, which turns a 0-d array into shape (1,))
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16               # [...] u32, top half
    return np.where(np.isnan(x), np.uint32(0x7FC0), rounded).astype(np.uint16)  # [...] u16


def load_safetensors(path, mmap=True):
    """Read a .safetensors file -> {name: ndarray} (F16/BF16 -> float32; F32/I32/I64 as stored).

    ``mmap=True`` memory-maps the file: F32/I32/I64 tensors are read-only views (no copy). With
    ``mmap=False`` the data buffer is read into memory once and the tensors are writable views
    of it (one allocation; a tensor kept alive keeps the whole buffer alive).
    Raises ValueError for any malformed file. Example::

        save_safetensors("t.safetensors", {"w": np.ones((2, 3), np.float32)})
        load_safetensors("t.safetensors")["w"].shape   # (2, 3)
    """
    return read_safetensors(path, mmap)[1]


def read_safetensors(path, mmap=True):
    """-> (header, tensors) from one read of the file: ``load_safetensors``' tensors and the
    checked header they came from (each tensor's stored ``dtype`` and the ``__metadata__``)."""
    with open_regular(path) as f:               # a device, FIFO or folder: refused
        file_size = os.fstat(f.fileno()).st_size
        header, start = read_header(f, file_size)
        entries = check_entries(header, file_size - start)
        if file_size == start:  # np.memmap refuses an empty map
            data = np.zeros(0, np.uint8)
        elif mmap:
            data = np.asarray(np.memmap(f, dtype=np.uint8, mode="r", offset=start))  # read-only
        else:
            data = np.fromfile(f, dtype=np.uint8)                        # [data_size] (f at start)
    tensors = {}
    for name, dtype, shape, begin, end in entries:
        stored = data[begin:end].view(DTYPES[dtype]).reshape(shape)  # [nbytes] u8 -> shape
        if dtype == "BF16":
            stored = bf16_to_float32(stored)
        elif dtype == "F16":
            stored = stored.astype(np.float32)
        tensors[name] = stored
    return header, tensors


def load_safetensors_metadata(path):
    """The ``__metadata__`` dict of string -> string of a .safetensors file ({} when absent)."""
    header, entries = _header(path)
    return dict(header.get("__metadata__", {}))


def read_safetensors_shapes(path):
    """{name: shape} of every tensor, from the header alone (no tensor data is read)."""
    _, entries = _header(path)
    return {name: shape for name, _, shape, _, _ in entries}


def _header(path):
    """(header dict, checked entries) of a .safetensors file, without reading tensor data."""
    with open_regular(path) as f:
        file_size = os.fstat(f.fileno()).st_size
        header, start = read_header(f, file_size)
    return header, check_entries(header, file_size - start)


def save_safetensors(path, tensors, metadata=None, bf16=False):
    """Write {name: ndarray} as .safetensors (float32, float16, int32, int64; BF16 if ``bf16``),
    atomically (atomic.py: a temporary file renamed at the end, never half-written).

    ``bf16=True`` stores every float32 tensor as BF16 (round to nearest even); a set of names
    stores just those float32 tensors as BF16. ``metadata`` is an optional dict of str -> str,
    stored under ``__metadata__``.
    """
    _write(atomic_open(path, "wb"), tensors, metadata, bf16)


def write_safetensors(path, tensors, metadata=None, bf16=False):
    """``save_safetensors``' core: the same bytes into the new file ``path`` (created, so it must
    not exist; no temporary file, no fsync): for an ``atomic_files`` commit's temporary path."""
    _write(open_new(path, "wb"), tensors, metadata, bf16)


def _write(opened, tensors, metadata, bf16):
    """Check the tensors, lay out the header, then write both into ``opened`` (a context manager
    not yet entered: a bad argument creates no file)."""
    if not isinstance(tensors, dict) or not all(isinstance(k, str) for k in tensors):
        raise TypeError("tensors must be a dict of str -> np.ndarray")
    as_bf16 = set(tensors) if bf16 is True else set(bf16 or ())
    if "__metadata__" in tensors:
        raise ValueError("'__metadata__' is reserved and cannot be a tensor name")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError("metadata must be a dict of str -> str or None")
    items = []
    for name, array in tensors.items():
        array = np.asarray(array)
        if array.dtype not in _FROM_NUMPY:
            raise TypeError(f"tensor {name!r}: dtype {array.dtype} cannot be written; allowed: "
                            f"float32, float16, int32, int64 (float32 as BF16 with bf16=True)")
        dtype = _FROM_NUMPY[array.dtype]
        dtype = "BF16" if name in as_bf16 and dtype == "F32" else dtype
        stored = float32_to_bf16(array) if dtype == "BF16" else array.astype(DTYPES[dtype])
        items.append((_WRITE_ORDER[dtype], name, dtype, stored))
    items.sort(key=lambda item: item[:2])  # the reference's order: larger dtype first, then name
    header, position = {}, 0
    if metadata is not None:  # the reference writes "__metadata__":{} for an empty dict too
        header["__metadata__"] = metadata
    for _, name, dtype, stored in items:
        header[name] = {"dtype": dtype, "shape": list(stored.shape),
                        "data_offsets": [position, position + stored.nbytes]}
        position += stored.nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)  # pad with spaces so the data buffer starts 8-byte aligned
    with opened as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for *_, stored in items:
            f.write(np.ascontiguousarray(stored).tobytes())
