"""Writing a checkpoint as shards, as transformers' ``save_pretrained(max_shard_size=…)`` does:

    limit = shard_limit("2GB")                                   # 2,000,000,000 bytes
    shards = plan_shards({"a": 600e6, "b": 3e9, "c": 900e6, "d": 800e6}, limit)
           = [["b"], ["a", "c"], ["d"]]                          # b alone: larger than the limit

The rule (huggingface_hub's ``split_state_dict_into_shards_factory``, which transformers calls):
take the tensors in order and fill the current shard; a tensor that would take it over the limit
starts a new one; a tensor larger than the limit on its own gets a shard of its own at once (the
current shard stays open, so it comes after). No reordering to pack tighter. One shard is plainly
``model.safetensors``; n > 1 are ``model-00001-of-0000n.safetensors`` … (``shards.shard_names``)
with ``model.safetensors.index.json`` (``index_text``): ``metadata.total_size`` = the bytes of
every tensor's data (headers not counted), ``total_parameters`` = their elements, ``weight_map``
= {tensor name: its shard}, written with sorted keys and two-space indents as transformers does.

Subtle: the split points depend on the tensors' order. minillm takes them in the order its name
map gives them (embeddings first, then layer by layer); transformers takes its modules' order,
which within a layer can differ, so for the same limit a shard boundary may fall elsewhere. Either
split reads back the same weights, in minillm and in transformers.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np

MAX_SHARD_BYTES = 2**63 - 1     # (a file's size is an int64: safetensors, os.stat)
UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}    # decimal, as transformers
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]{2})\s*")


def shard_limit(max_shard_size: int | str) -> int:
    """The most bytes of tensor data per shard: an integer number of bytes (>= 1), or a string
    of a number and a decimal unit, KB, MB, GB or TB (any case: "500MB", "2GB", "1.5gb"), read as
    transformers reads it (int(number × unit)). Anything else is a ValueError (a TypeError for
    another type)."""
    if isinstance(max_shard_size, str):
        match = _SIZE.fullmatch(max_shard_size)
        if match is None or match[2].upper() not in UNITS:
            raise ValueError(f"max_shard_size {max_shard_size!r}: give a number of bytes or a "
                             f"number with a unit KB, MB, GB or TB (decimal: 1 GB = 10^9 bytes), "
                             f"like '500MB' or '2GB'")
        number = float(match[1])                 # (400 nines: inf, which int() cannot take)
        if number * UNITS[match[2].upper()] > MAX_SHARD_BYTES:
            raise ValueError(f"max_shard_size {max_shard_size[:40]!r} is out of range: allowed "
                             f"1 byte to {MAX_SHARD_BYTES:,} bytes")
        limit = int(number * UNITS[match[2].upper()])
    elif isinstance(max_shard_size, (int, np.integer)) and not isinstance(max_shard_size, bool):
        limit = int(max_shard_size)
    else:
        raise TypeError(f"max_shard_size must be an int (bytes) or a string like '2GB', got "
                        f"{type(max_shard_size).__name__}")
    if limit > MAX_SHARD_BYTES:
        raise ValueError(f"max_shard_size {str(max_shard_size)[:40]} is out of range: allowed "
                         f"1 byte to {MAX_SHARD_BYTES:,} bytes")
    if limit < 1:
        raise ValueError(f"max_shard_size {max_shard_size!r} is {limit} bytes: a shard holds at "
                         f"least 1 byte")
    return limit


def plan_shards(sizes: dict[str, int], limit: int) -> list[list[str]]:
    """The tensors' names grouped into shards, in order (the rule above): ``sizes`` is
    {name: bytes} in the order the tensors are taken.

    >>> plan_shards({"a": 4, "b": 4, "c": 4}, 8)
    [['a', 'b'], ['c']]
    >>> plan_shards({"a": 4, "big": 9, "c": 4}, 8)
    [['big'], ['a', 'c']]
    """
    shards, current, filled = [], [], 0
    for name, size in sizes.items():
        if size > limit:                      # alone, at once; the current shard stays open
            shards.append([name])
            continue
        if filled + size > limit:             # (current is never empty here: size <= limit)
            shards.append(current)
            current, filled = [], 0
        current.append(name)
        filled += size
    if current or not shards:
        shards.append(current)
    return shards


def index_text(tensors: dict[str, np.ndarray], files: dict[str, list[str]]) -> str:
    """The text of ``model.safetensors.index.json`` for {shard file: its tensors' names}."""
    weight_map = {name: file for file, names in files.items() for name in names}
    index = {"metadata": {"total_parameters": sum(math.prod(a.shape) for a in tensors.values()),
                          "total_size": sum(a.nbytes for a in tensors.values())},
             "weight_map": weight_map}
    return json.dumps(index, indent=2, sort_keys=True) + "\n"
