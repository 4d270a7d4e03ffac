"""A checkpoint whose weights are split over several safetensors files ("shards"), as
transformers saves a model larger than ``max_shard_size`` (every model over a few GB):

    model.safetensors.index.json       {"metadata": {"total_size": 4943178720},
                                        "weight_map": {"model.embed_tokens.weight":
                                                           "model-00001-of-00002.safetensors",
                                                       "lm_head.weight":
                                                           "model-00002-of-00002.safetensors", …}}
    model-00001-of-00002.safetensors   a plain safetensors file with some of the tensors
    model-00002-of-00002.safetensors   … and the rest

The index says in which shard each tensor is; the shards say what they hold. Reading checks that
the two agree exactly, so a folder assembled from two downloads (or a half-copied one) is refused
by name rather than read wrong: every shard the index names exists; each holds exactly the
tensors the index gives it (a tensor in another shard than listed, listed in no shard, or stored
in two, is refused); a shard name is a plain file name in the folder (never a path out of it).
``total_size`` is not checked (writers disagree on what it counts); the shards' headers are.

``weight_entries(folder, stack)`` gives every tensor's (open file, data start, header entry)
whichever layout the folder has; ``checkpoints.load_weights`` reads them one tensor at a time.
A folder with both ``model.safetensors`` and an index is refused: which one is current is not
for a reader to guess. Writing one: ``shard_write.py`` (its names, ``shard_names``, are here).
"""
from __future__ import annotations

import json
import os
import re
from contextlib import ExitStack
from pathlib import Path

from minillm.io.bounded import open_regular, probe, read_bounded_text, shown
from minillm.io.safetensors_header import check_entries, no_duplicate_keys, read_header

SINGLE, INDEX = "model.safetensors", "model.safetensors.index.json"
MAX_INDEX_BYTES = 1 << 24      # real indexes are 10-500 KB (one line per tensor)
SHARD_NAME = re.compile(r"model-\d{5}-of-\d{5}\.safetensors")     # transformers' shard names
MAX_SHARDS = 99_999                                                   # (five digits)


def shard_names(n: int) -> list[str]:
    """transformers' names for ``n`` shards: ``model-00001-of-0000n.safetensors`` … (one
    shard is not a sharded checkpoint: ``model.safetensors``)."""
    return [SINGLE] if n == 1 else [f"model-{i:05d}-of-{n:05d}.safetensors" for i in range(1, n + 1)]


def is_weights_name(name: str) -> bool:
    """Whether ``name`` is one of a model's weights files: the single file, the index, a shard
    i of n with 1 <= i <= n and n >= 2 (a save never writes "-00001-of-00001" nor shard 7 of 5:
    a file so named is a user's, never deleted as a stale shard)."""
    if SHARD_NAME.fullmatch(name) is not None:
        i, n = int(name[6:11]), int(name[15:20])             # model-IIIII-of-NNNNN.safetensors
        return 1 <= i <= n and n >= 2
    return name in (SINGLE, INDEX)


def is_model_save(names) -> bool:
    """Whether ``names`` are the files of one model save: config.json + model.safetensors, or
    config.json + the index + shards 1 … n of n (n >= 2)."""
    weights = sorted(set(names) - {"config.json", INDEX})
    return len(set(names)) == len(names) and "config.json" in names and \
        (INDEX in names) == (len(weights) > 1) and weights == shard_names(max(len(weights), 1))


def weights_file(folder: str | Path) -> Path | None:
    """The folder's ``model.safetensors`` or ``model.safetensors.index.json`` (None: neither);
    both present is a ValueError."""
    folder = Path(folder)
    single, index = probe(folder / SINGLE) is not None, probe(folder / INDEX) is not None
    if single and index:
        raise ValueError(f"{shown(folder)} has both {SINGLE} and {INDEX}: one checkpoint or the "
                         f"other, not both (remove the stale one)")
    return folder / SINGLE if single else folder / INDEX if index else None


def read_index(path: str | Path) -> dict[str, str]:
    """``model.safetensors.index.json`` -> its weight_map {tensor name: shard file name},
    checked: a JSON object without repeated keys, weight_map a non-empty object of strings, each
    shard a ``.safetensors`` file name without a folder part."""
    text = read_bounded_text(path, MAX_INDEX_BYTES, "a safetensors index")
    try:
        index = json.loads(text, object_pairs_hook=no_duplicate_keys)
    except json.JSONDecodeError as e:
        raise ValueError(f"{shown(path)} is not valid JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{shown(path)} nests JSON too deeply") from None
    except ValueError as e:                        # a repeated key: a tensor listed twice
        raise ValueError(f"{shown(path)}: {e}") from None
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ValueError(f"{shown(path)} needs a non-empty \"weight_map\" object "
                         f"{{tensor name: shard file}}")
    for name, shard in weight_map.items():
        if not isinstance(shard, str) or not shard.endswith(".safetensors") \
                or shard != os.path.basename(shard) or shard in (".", "..") or "\\" in shard:
            raise ValueError(f"{shown(path)}: tensor {name!r} is mapped to {shard!r}; a shard "
                             f"must be a .safetensors file name in the same folder")
    return weight_map


def weight_entries(file: str | Path, stack: ExitStack) -> dict[str, tuple]:
    """{tensor name: (open file, data start, header entry)} of ``model.safetensors`` or of every
    shard an index names (``file`` is either). The files stay open until ``stack`` closes."""
    file = Path(file)
    if file.name != INDEX:
        return _entries(file, stack)
    weight_map = read_index(file)
    found: dict[str, tuple] = {}
    for shard in sorted(set(weight_map.values())):
        if probe(file.parent / shard) is None:
            raise FileNotFoundError(f"{shown(file)} names shard {shard!r}, which is missing "
                                    f"from {shown(file.parent)}")
        for name, entry in _entries(file.parent / shard, stack).items():
            if name in found:
                raise ValueError(f"tensor {name!r} is stored in two shards: {found[name][3]!r} "
                                 f"and {shard!r}")
            if weight_map.get(name) != shard:
                listed = weight_map.get(name)
                raise ValueError(f"shard {shard!r} holds tensor {name!r}, which {INDEX} "
                                 + (f"lists in {listed!r}" if listed else "does not list"))
            found[name] = (*entry, shard)
    absent = sorted(set(weight_map) - set(found))
    if absent:
        raise ValueError(f"{INDEX} lists tensor {absent[0]!r} in shard {weight_map[absent[0]]!r}, "
                         f"which does not hold it ({len(absent)} such tensors)")
    return {name: value[:3] for name, value in found.items()}


def _entries(path: Path, stack: ExitStack) -> dict[str, tuple]:
    f = stack.enter_context(open_regular(path))     # a device, FIFO or folder: refused
    file_size = os.fstat(f.fileno()).st_size
    header, data_start = read_header(f, file_size)
    return {e[0]: (f, data_start, e) for e in check_entries(header, file_size - data_start)}


def weight_shapes(file: str | Path) -> dict[str, tuple[int, ...]]:
    """{name: shape} of every tensor, from the headers alone (the shards checked as above)."""
    with ExitStack() as stack:
        return {name: entry[2] for name, (_, _, entry) in weight_entries(file, stack).items()}
