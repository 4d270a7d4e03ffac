"""A Hugging Face checkpoint directory: ``config.json`` + ``model.safetensors``, read and written.

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
import os
from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.io.atomic import write_new_text
from minillm.io.commit import atomic_files, reading
from minillm.io.config_hf import json_text, read_config
from minillm.io.hf_names import GPT2_BUFFERS, LM_HEAD, expert_views, hf_sources, named_to_hf
from minillm.io.bounded import open_regular, probe
from minillm.io.safetensors import (DTYPES, bf16_to_float32, read_safetensors_shapes,
                                    write_safetensors)
from minillm.io.safetensors_header import check_entries, read_header
from minillm.io.sizes import check_sizes
from minillm.model.params import GPTParams, empty_params

ROWS_AT_ONCE = 1 << 20   # values read per slice: 4 MB of float32, whatever the tensor's size


def _row_slices(f, data_start: int, entry):
    """Yield (r0, r1, rows r0 … r1 − 1 as float32 [r1 − r0, n]) of one stored tensor, seen as
    2-D (a 1-D tensor is one row), read from the file a few MB at a time."""
    _, dtype, shape, begin, _ = entry
    rows, n = (shape[0], math.prod(shape[1:])) if len(shape) >= 2 else (1, math.prod(shape))
    step, size = max(1, ROWS_AT_ONCE // max(n, 1)), DTYPES[dtype].itemsize
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        f.seek(data_start + begin + r0 * n * size)
        stored = np.frombuffer(f.read((r1 - r0) * n * size), DTYPES[dtype])   # [(r1 − r0)·n]
        a = bf16_to_float32(stored) if dtype == "BF16" else stored.astype(np.float32, copy=False)
        yield r0, r1, a.reshape(r1 - r0, n)                                     # [r1 − r0, n]


def load_weights(file: str | Path, config: ModelConfig, params: GPTParams) -> GPTParams:
    """Read ``model.safetensors`` into ``params`` (written through ``w[...] = …``: plain arrays
    or an engine arena's views), one tensor at a time, renamed, split and transposed on the way.
    Missing or unexpected tensors raise ValueError."""
    sources = hf_sources(config)
    with open_regular(file) as f:                   # a device, FIFO or folder: refused
        file_size = os.fstat(f.fileno()).st_size
        header, data_start = read_header(f, file_size)
        entries = {e[0]: e for e in check_entries(header, file_size - data_start)}
        if config.arch == "gpt2":   # the optional prefix of GPT2LMHeadModel; the causal-mask buffers go
            entries = {k.removeprefix("transformer."): e for k, e in entries.items()
                       if not k.endswith(GPT2_BUFFERS)}
        for name, out in expert_views(params.named()).items():    # (experts: one at a time)
            hf, transpose, cols = sources[name]
            if hf not in entries:
                raise ValueError(f"checkpoint is missing tensor {hf!r} (minillm's {name})")
            stored = entries[hf][2]
            want = stored[::-1] if transpose else stored           # the shape once renamed
            if cols is not None:
                want = (*stored[:-1], cols.stop - cols.start)
            if tuple(want) != out.shape:
                raise ValueError(f"{hf!r} has shape {stored}; the config needs {out.shape} for {name}")
            out2 = out if out.ndim == 2 else out.reshape(1, -1)             # [rows, n] (a view)
            for r0, r1, rows in _row_slices(f, data_start, entries[hf]):
                if transpose:                                               # [r, in]ᵀ -> columns of [in, out]
                    out2[:, r0:r1] = rows.T
                else:                                                       # rows of the same layout
                    out2[r0:r1] = rows if cols is None else rows[:, cols]
        used = {hf for hf, _, _ in sources.values()}
        head = entries.get(LM_HEAD[0])
        if config.tie_embeddings and head is not None and (head[2] != params.wte.shape or not all(
                np.array_equal(rows, params.wte[r0:r1])
                for r0, r1, rows in _row_slices(f, data_start, head))):
            raise ValueError(f"the config ties the embeddings but the checkpoint's {LM_HEAD[0]!r} "
                             f"differs from them; set tie_word_embeddings=false in config.json")
    unexpected = sorted(set(entries) - used - {LM_HEAD[0]})   # a tied lm_head copy is allowed
    if unexpected:
        raise ValueError(f"checkpoint has tensors this config does not use: {unexpected[:5]}")
    return params


def load_hf_checkpoint(path: str | Path) -> tuple[ModelConfig, GPTParams]:
    """Read a checkpoint directory -> (config, params of plain float32 arrays). Both files are
    read while the folder is held (``commit.reading``): never one save's config.json beside
    another's weights."""
    with reading(path):
        config = read_checkpoint_config(path)
        return config, load_weights(Path(path) / "model.safetensors", config, empty_params(config))


def read_checkpoint_config(path: str | Path) -> ModelConfig:
    """A checkpoint directory's config, checked against its weights file's header."""
    path = Path(path)
    with reading(path):                               # a save a crash cut short: finished
        return _checked_config(path)


def _checked_config(path: Path) -> ModelConfig:
    # (probe, not is_file: a device or folder under these names is refused by type when read)
    if probe(path / "config.json") is None:
        raise FileNotFoundError(f"{path} is not a checkpoint directory: no config.json")
    if probe(path / "model.safetensors") is None:
        raise FileNotFoundError(f"{path} has no model.safetensors (sharded and .bin checkpoints "
                                f"are not supported; minillm never unpickles)")
    config = read_config(path)                        # path/config.json (+ generation_config.json)
    check_checkpoint_sizes(path, config)              # before anything of the config's size
    return config


def check_checkpoint_sizes(path: Path, config: ModelConfig) -> None:
    """config.json against model.safetensors' header: the same number of parameters (sizes.py)."""
    def not_a_parameter(name):
        name = name.removeprefix("transformer.")
        return (config.arch == "gpt2" and name.endswith(GPT2_BUFFERS)) \
            or (config.tie_embeddings and name == LM_HEAD[0])
    shapes = read_safetensors_shapes(path / "model.safetensors")
    check_sizes(config, shapes, f"{path / 'config.json'} and model.safetensors",
                ignore=not_a_parameter)
    names = {name.removeprefix("transformer.") for name in shapes}
    fused = [f"h.{i}.attn.c_attn.{w}" for i in range(config.n_layers) for w in ("weight", "bias")]
    missing = [name for name in fused if config.arch == "gpt2" and name not in names]
    if missing:        # (the other tensors are named by load_weights)
        raise ValueError(f"{path / 'model.safetensors'} is missing tensor {missing[0]!r}")


def save_hf_checkpoint(path: str | Path, config: ModelConfig, params: GPTParams) -> None:
    """Write ``config.json`` + ``model.safetensors`` into the directory ``path`` (created), both
    at once: a crash leaves the previous pair or the new one (``commit.py``)."""
    tensors = named_to_hf(params.named(), config)     # first: a config HF cannot name writes nothing
    with atomic_files(path, ("model.safetensors", "config.json")) as tmp:
        write_safetensors(tmp["model.safetensors"], tensors,     # plainly: the commit fsyncs
                          metadata={"format": "pt", "written_by": "minillm"})
        write_new_text(tmp["config.json"], json_text(config))
