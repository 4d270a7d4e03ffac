"""What a GGUF header can hold: every value minillm writes is checked against its type BEFORE
the file is opened (gguf_write.write_gguf calls ``check_header`` first).

    uint8 … int64      integers in the type's range: ``bos_token_id`` 2³² as uint32 is refused
                       (``struct.pack`` would raise mid-header with its own wording)
    float32            magnitude at most 3.4028e38 (a larger one would silently become inf)
    bool, string       True/False; text encodable as UTF-8 (no lone surrogates)
    array              each element by its element type, named ``key[i]``
    tensor shapes      1 to 4 dims, each a uint64

Each refusal is a ValueError naming the field, its value and what is allowed. Example::

    check_value("llama.context_length", UINT32, 10**30)
    # ValueError: GGUF field llama.context_length = 1000000000000000000000000000000 does not
    # fit its type uint32: allowed integers in [0, 4,294,967,295]
"""
from __future__ import annotations

import numpy as np

# metadata value types, as GGUF numbers them (defined here only: gguf/values.py reads them,
# gguf/write.py writes them)
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = \
    range(13)

# the range of every integer type, and float32's largest finite value
RANGES = {UINT8: (0, 2**8 - 1), INT8: (-2**7, 2**7 - 1), UINT16: (0, 2**16 - 1),
          INT16: (-2**15, 2**15 - 1), UINT32: (0, 2**32 - 1), INT32: (-2**31, 2**31 - 1),
          UINT64: (0, 2**64 - 1), INT64: (-2**63, 2**63 - 1)}
TYPE_NAMES = {UINT8: "uint8", INT8: "int8", UINT16: "uint16", INT16: "int16", UINT32: "uint32",
              INT32: "int32", FLOAT32: "float32", BOOL: "bool", STRING: "string",
              ARRAY: "array", UINT64: "uint64", INT64: "int64", FLOAT64: "float64"}
FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_value(key: str, vtype: int, v) -> None:
    """A ValueError naming ``key`` unless ``v`` fits GGUF type ``vtype`` (``struct`` would raise
    its own error half-way through the header, or a float32 would silently become inf)."""
    name = TYPE_NAMES.get(vtype)
    if vtype in RANGES:
        lo, hi = RANGES[vtype]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise ValueError(f"GGUF field {key} = {v!r} does not fit its type {name}: allowed "
                             f"integers in [{lo:,}, {hi:,}]")
    elif vtype in (FLOAT32, FLOAT64):
        limit = FLOAT32_MAX if vtype == FLOAT32 else float("inf")
        number = not isinstance(v, bool) and isinstance(v, (int, np.integer, float, np.floating))
        if not number or not _finite_float(v) or abs(float(v)) > limit:
            raise ValueError(f"GGUF field {key} = {v!r} does not fit its type {name}: allowed "
                             f"numbers of magnitude at most {limit:.4g}")
        if isinstance(v, (int, np.integer)) and _as_float(v, vtype) != v:
            # subtle: an integer the float type cannot hold (2⁵³ + 1 as float64) would be
            # written as its neighbour, silently
            raise ValueError(f"GGUF field {key} = {v!r} is an integer {name} cannot hold exactly "
                             f"(it would be written as {_as_float(v, vtype)!r}): allowed integers "
                             f"up to 2^{24 if vtype == FLOAT32 else 53} in magnitude, or floats")
    elif vtype == BOOL:
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"GGUF field {key} = {v!r} must be True or False")
    elif vtype == STRING:
        if not isinstance(v, (str, bytes)) or (isinstance(v, str) and not _is_utf8(v)):
            raise ValueError(f"GGUF field {key} = {v!r:.60} must be a string encodable as UTF-8")
    elif vtype == ARRAY:
        etype, items = v
        for i, item in enumerate(items):
            check_value(f"{key}[{i}]", etype, item)
    else:
        raise ValueError(f"GGUF field {key}: unknown value type {vtype}; known: 0-12")


def _finite_float(v) -> bool:
    """Does the number ``v`` convert to a float at all (an int past 1.8e308 does not)?"""
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _as_float(v, vtype: int) -> float:
    """``v`` as the file will hold it: a float32 or a float64."""
    return float(np.float32(v)) if vtype == FLOAT32 else float(v)


def check_header(metadata: dict, tensors: dict) -> None:
    """Every value of the header in range for its type, BEFORE the file is opened: a ValueError
    names the field, its value and what is allowed. Tensors: 1 to 4 dims, each < 2⁶⁴."""
    for key, (vtype, v) in metadata.items():
        check_value(key, vtype, v)
    for name, (_, shape, _) in tensors.items():
        if not 1 <= len(shape) <= 4:
            raise ValueError(f"GGUF tensor {name}: {len(shape)} dims; GGUF stores 1 to 4")
        for d in shape:
            check_value(f"a dim of tensor {name}", UINT64, d)


def _is_utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:               # a lone surrogate
        return False
