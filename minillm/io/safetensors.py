"""safetensors: read and write the Hugging Face tensor file format, in NumPy.

The whole format, byte by byte::

    [ N : uint64 little-endian ][ N bytes of JSON header ][ data buffer ...................... ]
                                 {"__metadata__": {"format": "np"},                 (optional)
                                  "wte": {"dtype": "F32", "shape": [50257, 768],
                                          "data_offsets": [0, 154389504]}, ...}

``data_offsets = [begin, end]`` are byte positions *inside the data buffer* (which starts at 8 + N).
Each tensor is C-order, little-endian, ``end - begin == prod(shape) * itemsize``; the tensors tile
the buffer exactly (no holes, no overlaps), so a file cannot hide anything between them. There is
no pickle anywhere: a malicious file can at worst be rejected.

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
import math
import os

import numpy as np

from minillm.io.atomic import atomic_open

MAX_HEADER_BYTES = 100_000_000  # the reference's bound: a header larger than this is rejected
# safetensors dtype -> NumPy dtype of the stored bytes (BF16 read as raw uint16 bits)
DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2"),
          "I32": np.dtype("<i4"), "I64": np.dtype("<i8")}
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


def no_duplicate_keys(pairs):
    """JSON object hook: json.loads would silently keep the last of two equal keys."""
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the JSON object repeats the key {key!r}")
        result[key] = value
    return result


def _read_header(f, file_size):
    """Parse and validate the length prefix and JSON header; return (header dict, data start)."""
    prefix = f.read(8)
    if len(prefix) < 8:
        raise ValueError(f"not a safetensors file: {file_size} bytes, need at least 8")
    n = int.from_bytes(prefix, "little")
    if n > MAX_HEADER_BYTES:
        raise ValueError(f"safetensors header length {n} exceeds the bound {MAX_HEADER_BYTES}")
    if 8 + n > file_size:
        raise ValueError(f"truncated safetensors file: header of {n} bytes but the file has "
                         f"{file_size - 8} bytes after the length prefix")
    try:
        header = json.loads(f.read(n).decode("utf-8"), object_pairs_hook=no_duplicate_keys)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"safetensors header is not valid UTF-8 JSON: {e}") from None
    except RecursionError:
        raise ValueError("safetensors header nests JSON too deeply") from None
    except ValueError as e:                     # a repeated key (no_duplicate_keys)
        raise ValueError(f"safetensors header: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"safetensors header must be a JSON object, got {type(header).__name__}")
    return header, 8 + n


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_entries(header, data_size):
    """Validate every tensor entry; return [(name, dtype, shape, begin, end)] sorted by begin."""
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in meta.items()):
        raise ValueError("safetensors __metadata__ must be an object of string -> string")
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"tensor {name!r}: entry must be an object with exactly the keys "
                             f"dtype, shape, data_offsets; got {info!r}")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in DTYPES:
            raise ValueError(f"tensor {name!r}: unknown dtype {dtype!r}; allowed: {sorted(DTYPES)}")
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise ValueError(f"tensor {name!r}: shape must be a list of ints >= 0, got {shape!r}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(map(_is_int, offsets))
                or not 0 <= offsets[0] <= offsets[1]):
            raise ValueError(f"tensor {name!r}: data_offsets must be [begin, end] with "
                             f"0 <= begin <= end, got {offsets!r}")
        begin, end = offsets
        nbytes = math.prod(shape) * DTYPES[dtype].itemsize
        if end - begin != nbytes:
            raise ValueError(f"tensor {name!r}: {end - begin} bytes at {offsets} but shape {shape} "
                             f"of {dtype} needs {nbytes}")
        entries.append((name, dtype, tuple(shape), begin, end))
    entries.sort(key=lambda e: (e[3], e[4]))
    position = 0  # subtle: tensors must tile [0, data_size) exactly: a gap or overlap is an error
    for name, _, _, begin, end in entries:
        if begin != position:
            what = "overlaps the previous tensor" if begin < position else "leaves a gap"
            raise ValueError(f"tensor {name!r}: data_offsets begin {begin} {what} "
                             f"(expected {position}); tensors must tile the data buffer")
        position = end
    if position != data_size:
        raise ValueError(f"safetensors data buffer is {data_size} bytes but the tensors cover "
                         f"{position}" + (" (truncated file?)" if position > data_size else ""))
    return entries


def load_safetensors(path, mmap=True):
    """Read a .safetensors file -> {name: ndarray} (F16/BF16 -> float32; F32/I32/I64 as stored).

    ``mmap=True`` memory-maps the file: F32/I32/I64 tensors are read-only views (no copy). With
    ``mmap=False`` the data buffer is read into memory once and the tensors are writable views
    of it (one allocation; a tensor kept alive keeps the whole buffer alive).
    Raises ValueError for any malformed file. Example::

        save_safetensors("t.safetensors", {"w": np.ones((2, 3), np.float32)})
        load_safetensors("t.safetensors")["w"].shape   # (2, 3)
    """
    file_size = os.path.getsize(path)
    with open(path, "rb") as f:
        header, start = _read_header(f, file_size)
        entries = _check_entries(header, file_size - start)
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
    return tensors


def load_safetensors_metadata(path):
    """The ``__metadata__`` dict of string -> string of a .safetensors file ({} when absent)."""
    with open(path, "rb") as f:
        header, start = _read_header(f, os.path.getsize(path))
    _check_entries(header, os.path.getsize(path) - start)
    return dict(header.get("__metadata__", {}))


def read_safetensors_shapes(path):
    """{name: shape} of every tensor, from the header alone (no tensor data is read)."""
    with open(path, "rb") as f:
        header, start = _read_header(f, os.path.getsize(path))
    return {name: shape for name, _, shape, _, _ in _check_entries(header, os.path.getsize(path) - start)}


def save_safetensors(path, tensors, metadata=None, bf16=False):
    """Write {name: ndarray} as .safetensors (float32, float16, int32, int64; BF16 if ``bf16``).

    ``bf16=True`` stores every float32 tensor as BF16 (round to nearest even); a set of names
    stores just those float32 tensors as BF16. ``metadata`` is an optional dict of str -> str,
    stored under ``__metadata__``.
    """
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
    with atomic_open(path, "wb") as f:      # a temp file renamed at the end: never half-written
        f.write(len(text).to_bytes(8, "little") + text)
        for *_, stored in items:
            f.write(np.ascontiguousarray(stored).tobytes())
