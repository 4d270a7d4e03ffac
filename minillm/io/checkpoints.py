"""A Hugging Face checkpoint directory: ``config.json`` + ``model.safetensors``, read and written
(a sharded one, ``model.safetensors.index.json`` + its shards, too: ``hf/shards.py`` reads it,
``hf/shard_write.py`` splits the weights).

Loading reads the file one tensor (in slices of rows) at a time straight into its place in the
model's parameters (plain arrays, or the engine's arena: ``minillm/engine/arena.py``), renamed,
split and transposed by the tables of ``hf_names.py``: the peak memory is the weights plus one
slice, not the weights twice. The file is read, not memory-mapped, so its pages are the OS's page
cache and never count against the process. Saving writes both files as one (``commit.py``): a
crash leaves the old pair or the new one, and a load holds the folder while it reads both
(``commit.reading``), so a save running meanwhile is seen whole or not at all.
"""
from __future__ import annotations

import math
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.io.atomic import write_new_text
from minillm.io.commit import atomic_files, reading
from minillm.io.hf.config import json_text, read_config
from minillm.io.hf.shard_write import index_text, plan_shards, shard_limit
from minillm.io.hf.shards import INDEX, MAX_SHARDS, shard_names, weight_entries, weight_shapes, weights_file
from minillm.io.hf_names import (GAIN_SHIFT, GPT2_BUFFERS, LM_HEAD, expert_views, hf_sources,
                               named_to_hf, shifted_gains)
from minillm.io.bounded import probe
from minillm.io.safetensors import DTYPES, bf16_to_float32, write_safetensors
from minillm.io.sizes import check_sizes
from minillm.model.params import GPTParams, empty_params

ROWS_AT_ONCE = 1 << 20   # values read per slice: 4 MB of float32, whatever the tensor's size


def _row_slices(f, data_start: int, entry, first: int = 0, stop: int | None = None):
    """Yield (r0, r1, rows r0 … r1 − 1 as float32 [r1 − r0, n]) of one stored tensor, seen as
    2-D (a 1-D tensor is one row), read from the file a few MB at a time: rows ``first`` to
    ``stop`` (default all)."""
    _, dtype, shape, begin, _ = entry
    rows, n = (shape[0], math.prod(shape[1:])) if len(shape) >= 2 else (1, math.prod(shape))
    rows = rows if stop is None else stop
    step, size = max(1, ROWS_AT_ONCE // max(n, 1)), DTYPES[dtype].itemsize
    for r0 in range(first, rows, step):
        r1 = min(rows, r0 + step)
        f.seek(data_start + begin + r0 * n * size)
        stored = np.frombuffer(f.read((r1 - r0) * n * size), DTYPES[dtype])   # [(r1 − r0)·n]
        a = bf16_to_float32(stored) if dtype == "BF16" else stored.astype(np.float32, copy=False)
        yield r0, r1, a.reshape(r1 - r0, n)                                     # [r1 − r0, n]


def load_weights(file: str | Path, config: ModelConfig, params: GPTParams) -> GPTParams:
    """Read ``model.safetensors`` into ``params`` (written through ``w[...] = …``: plain arrays
    or an engine arena's views), one tensor at a time, renamed, split and transposed on the way.
    Missing or unexpected tensors raise ValueError. ``file`` may also be a sharded checkpoint's
    ``model.safetensors.index.json`` (its shards checked against it: ``hf/shards.py``)."""
    sources = hf_sources(config)
    with ExitStack() as stack:                      # every shard open until the last is read
        entries = weight_entries(file, stack)       # name -> (file, data start, entry)
        if config.arch == "gpt2":   # the optional prefix of GPT2LMHeadModel; the causal-mask buffers go
            entries = {k.removeprefix("transformer."): e for k, e in entries.items()
                       if not k.endswith(GPT2_BUFFERS)}
        for name, out in expert_views(params.named()).items():    # (experts: one at a time)
            hf, transpose, cols = sources[name]
            if hf not in entries:
                raise ValueError(f"checkpoint is missing tensor {hf!r} (minillm's {name})")
            stored = entries[hf][2][2]
            want = stored[::-1] if transpose else stored           # the shape once renamed
            if cols is not None:                                   # a part of a fused tensor
                want = (*want[:-1], cols.stop - cols.start)
                if cols.stop > (stored[0] if transpose else stored[-1]):
                    raise ValueError(f"{hf!r} has shape {stored}: too small to hold {name}")
            if tuple(want) != out.shape:
                raise ValueError(f"{hf!r} has shape {stored}; the config needs {out.shape} for {name}")
            out2 = out if out.ndim == 2 else out.reshape(1, -1)             # [rows, n] (a view)
            first = cols.start if cols is not None and transpose else 0     # (Phi-3: its rows only)
            stop = cols.stop if cols is not None and transpose else None
            for r0, r1, rows in _row_slices(*entries[hf], first, stop):
                if transpose:                                               # [r, in]ᵀ -> columns of [in, out]
                    out2[:, r0 - first:r1 - first] = rows.T
                else:                                                       # rows of the same layout
                    out2[r0:r1] = rows if cols is None else rows[:, cols]
        used = {hf for hf, _, _ in sources.values()}    # (a fused tensor's rows all used: sizes.py)
        head = entries.get(LM_HEAD[0])
        if config.tie_embeddings and head is not None and (head[2][2] != params.wte.shape or not all(
                np.array_equal(rows, params.wte[r0:r1]) for r0, r1, rows in _row_slices(*head))):
            raise ValueError(f"the config ties the embeddings but the checkpoint's {LM_HEAD[0]!r} "
                             f"differs from them; set tie_word_embeddings=false in config.json")
    unexpected = sorted(set(entries) - used - {LM_HEAD[0]})   # a tied lm_head copy is allowed
    if unexpected:
        raise ValueError(f"checkpoint has tensors this config does not use: {unexpected[:5]}")
    named = params.named()
    for name in shifted_gains(config):               # Gemma: HF stores w, the gain is 1 + w
        named[name] += np.float32(GAIN_SHIFT)
    return params


def load_hf_checkpoint(path: str | Path) -> tuple[ModelConfig, GPTParams]:
    """Read a checkpoint directory -> (config, params of plain float32 arrays). Both files are
    read while the folder is held (``commit.reading``): never one save's config.json beside
    another's weights."""
    with reading(path):
        config = read_checkpoint_config(path)
        return config, load_weights(weights_file(path), config, empty_params(config))


def read_checkpoint_config(path: str | Path) -> ModelConfig:
    """A checkpoint directory's config, checked against its weights file's header."""
    path = Path(path)
    with reading(path):                               # a save a crash cut short: finished
        return _checked_config(path)


def _checked_config(path: Path) -> ModelConfig:
    # (probe, not is_file: a device or folder under these names is refused by type when read)
    if probe(path / "config.json") is None:
        raise FileNotFoundError(f"{path} is not a checkpoint directory: no config.json")
    if weights_file(path) is None:
        raise FileNotFoundError(f"{path} has no model.safetensors nor model.safetensors.index.json "
                                f"(.bin checkpoints are not supported; minillm never unpickles)")
    config = read_config(path)                        # path/config.json (+ generation_config.json)
    check_checkpoint_sizes(path, config)              # before anything of the config's size
    return config


def check_checkpoint_sizes(path: Path, config: ModelConfig) -> None:
    """config.json against the weights' headers: the same number of parameters (sizes.py)."""
    def not_a_parameter(name):
        name = name.removeprefix("transformer.")
        return (config.arch == "gpt2" and name.endswith(GPT2_BUFFERS)) \
            or (config.tie_embeddings and name == LM_HEAD[0])
    weights = weights_file(path)
    shapes = weight_shapes(weights)
    check_sizes(config, shapes, f"{path / 'config.json'} and {weights.name}",
                ignore=not_a_parameter)
    names = {name.removeprefix("transformer.") for name in shapes}
    fused = [f"h.{i}.attn.c_attn.{w}" for i in range(config.n_layers) for w in ("weight", "bias")]
    missing = [name for name in fused if config.arch == "gpt2" and name not in names]
    if missing:        # (the other tensors are named by load_weights)
        raise ValueError(f"{weights} is missing tensor {missing[0]!r}")


def save_hf_checkpoint(path: str | Path, config: ModelConfig, params: GPTParams,
                       max_shard_size: int | str | None = None) -> None:
    """Write ``config.json`` + ``model.safetensors`` into the directory ``path`` (created), all
    at once: a crash leaves the previous files or the new ones (``commit.py``). With
    ``max_shard_size`` (bytes, or "500MB", "2GB": ``hf/shard_write.py``) weights over the limit
    are split into shards + ``model.safetensors.index.json``, as transformers splits them; the
    weights files of an earlier save that this one does not replace are removed in the commit."""
    tensors = named_to_hf(params.named(), config)     # first: a config HF cannot name writes nothing
    shards = [list(tensors)] if max_shard_size is None else \
        plan_shards({k: a.nbytes for k, a in tensors.items()}, shard_limit(max_shard_size))
    if len(shards) > MAX_SHARDS:
        raise ValueError(f"max_shard_size {max_shard_size!r} splits this model into {len(shards):,} "
                         f"shards; transformers' names (model-00001-of-0000n) count {MAX_SHARDS:,}")
    files = dict(zip(shard_names(len(shards)), shards))          # {file: its tensors' names}
    names = (*files, "config.json") + ((INDEX,) if len(files) > 1 else ())
    with atomic_files(path, names) as tmp:
        for file, shard in files.items():                         # plainly: the commit fsyncs
            write_safetensors(tmp[file], {k: tensors[k] for k in shard},
                              metadata={"format": "pt", "written_by": "minillm"})
        if len(files) > 1:
            write_new_text(tmp[INDEX], index_text(tensors, files))
        write_new_text(tmp["config.json"], json_text(config))
