"""The safetensors header: the length prefix and the JSON table of tensors, read and checked.

    [ N : uint64 little-endian ][ N bytes of JSON header ][ data buffer ... ]

Every entry must be ``{"dtype", "shape", "data_offsets"}`` with a known dtype, a shape of ints
>= 0 and ``end - begin == prod(shape) * itemsize``; sorted by offset, the tensors must tile the
data buffer exactly (a gap or an overlap is an error). ``__metadata__`` is string -> string, and
a repeated JSON key is an error (json.loads would keep the last one). The reference is the Rust
``safetensors`` crate, 0.8. Reading the tensors themselves: safetensors.py. Example::

    size = os.path.getsize("model.safetensors")
    with open("model.safetensors", "rb") as f:
        header, data_start = read_header(f, size)
    check_entries(header, size - data_start)   # [("wte", "F32", (50257, 768), 0, 154389504), ...]
"""
import json
import math

import numpy as np

MAX_HEADER_BYTES = 100_000_000  # the reference's bound: a header larger than this is rejected
# safetensors dtype -> NumPy dtype of the stored bytes (BF16 read as raw uint16 bits)
DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2"),
          "I32": np.dtype("<i4"), "I64": np.dtype("<i8")}


def no_duplicate_keys(pairs):
    """JSON object hook: json.loads would silently keep the last of two equal keys."""
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the JSON object repeats the key {key!r}")
        result[key] = value
    return result


def read_header(f, file_size):
    """Parse and validate the length prefix and JSON header; return (header dict, data start)."""
    # subtle: the size first: a /proc file says 0 and then reads more, or fails (EIO)
    prefix = f.read(8) if file_size >= 8 else b""
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


def check_entries(header, data_size):
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
