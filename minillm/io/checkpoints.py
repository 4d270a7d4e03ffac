"""Hugging Face checkpoint names ↔ minillm names: one table per architecture.

A checkpoint directory is ``config.json`` + ``model.safetensors``. This module only renames,
splits and transposes; it never changes a value. Loading reads the file one tensor (in slices of
rows) at a time straight into its place in the model's parameters (plain arrays, or the engine's
arena: ``minillm/engine/arena.py``): the peak memory is the weights plus one slice, not the
weights twice. The file is read, not memory-mapped,
so its pages are the OS's page cache and never count against the process.

GPT-2 (``GPT2LMHeadModel``; names may carry a ``transformer.`` prefix):
    wte.weight [V, C] · wpe.weight [n_ctx, C] · ln_f.{weight,bias}
    h.{i}.ln_1 / ln_2.{weight,bias}
    h.{i}.attn.c_attn.{weight [C, 3C], bias [3C]}   Q, K and V fused (Conv1D: stored [in, out])
    h.{i}.attn.c_proj · h.{i}.mlp.c_fc [C, F] · h.{i}.mlp.c_proj [F, C]
    lm_head.weight [V, C] only when not tied (HF omits a tied one)
Llama / Qwen2 (``LlamaForCausalLM``; ``nn.Linear`` weights are stored [out, in]: transposed here):
    model.embed_tokens.weight · model.norm.weight · lm_head.weight (untied)
    model.layers.{i}.input_layernorm / post_attention_layernorm.weight
    model.layers.{i}.self_attn.{q,k,v,o}_proj.{weight,bias} · mlp.{gate,up,down}_proj.weight
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from minillm.config import ModelConfig
from minillm.io.safetensors import (DTYPES, bf16_to_float32, read_safetensors_shapes,
                                    save_safetensors)
from minillm.io.safetensors_header import check_entries, read_header
from minillm.io.sizes import check_sizes
from minillm.engine.tiled import to_numpy
from minillm.model.params import GPTParams, empty_params

# minillm block name -> (HF name, transpose?) ; "{i}" is the layer.
_GPT2_BLOCK = {"norm1.weight": ("h.{i}.ln_1.weight", False), "norm1.bias": ("h.{i}.ln_1.bias", False),
               "attn.wo": ("h.{i}.attn.c_proj.weight", False), "attn.bo": ("h.{i}.attn.c_proj.bias", False),
               "norm2.weight": ("h.{i}.ln_2.weight", False), "norm2.bias": ("h.{i}.ln_2.bias", False),
               "ffn.w_up": ("h.{i}.mlp.c_fc.weight", False), "ffn.b_up": ("h.{i}.mlp.c_fc.bias", False),
               "ffn.w_down": ("h.{i}.mlp.c_proj.weight", False), "ffn.b_down": ("h.{i}.mlp.c_proj.bias", False)}
_GPT2_TOP = {"wte": ("wte.weight", False), "wpe": ("wpe.weight", False),
             "norm_f.weight": ("ln_f.weight", False), "norm_f.bias": ("ln_f.bias", False)}
_LLAMA_BLOCK = {"norm1.weight": ("model.layers.{i}.input_layernorm.weight", False),
                "attn.wq": ("model.layers.{i}.self_attn.q_proj.weight", True),
                "attn.wk": ("model.layers.{i}.self_attn.k_proj.weight", True),
                "attn.wv": ("model.layers.{i}.self_attn.v_proj.weight", True),
                "attn.wo": ("model.layers.{i}.self_attn.o_proj.weight", True),
                "attn.bq": ("model.layers.{i}.self_attn.q_proj.bias", False),
                "attn.bk": ("model.layers.{i}.self_attn.k_proj.bias", False),
                "attn.bv": ("model.layers.{i}.self_attn.v_proj.bias", False),
                "norm2.weight": ("model.layers.{i}.post_attention_layernorm.weight", False),
                "ffn.w_gate": ("model.layers.{i}.mlp.gate_proj.weight", True),
                "ffn.w_up": ("model.layers.{i}.mlp.up_proj.weight", True),
                "ffn.w_down": ("model.layers.{i}.mlp.down_proj.weight", True)}
_LLAMA_TOP = {"wte": ("model.embed_tokens.weight", False), "norm_f.weight": ("model.norm.weight", False)}
_LM_HEAD = ("lm_head.weight", True)          # [V, C] in both formats; minillm keeps [C, V]
_GPT2_BUFFERS = (".attn.bias", ".attn.masked_bias")   # older GPT-2 files' causal masks: not weights


def _table(config: ModelConfig) -> dict[str, tuple[str, bool]]:
    """The full minillm-name -> (HF name, transpose) table for this config."""
    top, per_block = (_GPT2_TOP, _GPT2_BLOCK) if config.arch == "gpt2" else (_LLAMA_TOP, _LLAMA_BLOCK)
    table = dict(top)
    for i in range(config.n_layers):
        table.update({f"blocks.{i}.{k}": (hf.format(i=i), t) for k, (hf, t) in per_block.items()})
    if not config.tie_embeddings:
        table["lm_head"] = _LM_HEAD
    return table


def _sources(config: ModelConfig) -> dict[str, tuple[str, bool, slice | None]]:
    """minillm name -> (HF name, transpose?, columns or None) for every parameter of ``config``."""
    sources = {name: (hf, t, None) for name, (hf, t) in _table(config).items()}
    if config.arch == "gpt2":   # the fused QKV is split where a reader can see it
        C = config.d_model
        for i in range(config.n_layers):
            for j, x in enumerate("qkv"):
                cols = slice(j * C, (j + 1) * C)                              # [C, 3C] -> [C, C]
                sources[f"blocks.{i}.attn.w{x}"] = (f"h.{i}.attn.c_attn.weight", False, cols)
                sources[f"blocks.{i}.attn.b{x}"] = (f"h.{i}.attn.c_attn.bias", False, cols)
    elif not config.attn_bias:
        sources = {k: v for k, v in sources.items() if k.split(".")[-1] not in ("bq", "bk", "bv")}
    return sources


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
    sources = _sources(config)
    file_size = os.path.getsize(file)
    with open(file, "rb") as f:
        header, data_start = read_header(f, file_size)
        entries = {e[0]: e for e in check_entries(header, file_size - data_start)}
        if config.arch == "gpt2":   # the optional prefix of GPT2LMHeadModel; the causal-mask buffers go
            entries = {k.removeprefix("transformer."): e for k, e in entries.items()
                       if not k.endswith(_GPT2_BUFFERS)}
        for name, out in params.named().items():
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
        head = entries.get(_LM_HEAD[0])
        if config.tie_embeddings and head is not None and (head[2] != params.wte.shape or not all(
                np.array_equal(rows, params.wte[r0:r1])
                for r0, r1, rows in _row_slices(f, data_start, head))):
            raise ValueError(f"the config ties the embeddings but the checkpoint's {_LM_HEAD[0]!r} "
                             f"differs from them; set tie_word_embeddings=false in config.json")
    unexpected = sorted(set(entries) - used - {_LM_HEAD[0]})   # a tied lm_head copy is allowed
    if unexpected:
        raise ValueError(f"checkpoint has tensors this config does not use: {unexpected[:5]}")
    return params


def named_to_hf(named: dict[str, np.ndarray], config: ModelConfig) -> dict[str, np.ndarray]:
    """minillm flat names -> HF state dict (what ``load_weights`` reads back). A config whose
    parameters HF's names cannot all carry (a Llama with LayerNorm biases or learned positions,
    a GPT-2 without Q, K, V biases) is a ValueError: the file would not load."""
    unnamed = sorted(set(named) - set(_sources(config)))
    if unnamed:
        raise ValueError(f"Hugging Face's {config.arch} checkpoints have no name for {unnamed[:3]}"
                         f"{'…' if len(unnamed) > 3 else ''}: this config cannot be saved as one")
    family = {"gpt2": ("layernorm", "gelu_mlp", "learned"), "llama": ("rmsnorm", "swiglu", "rope")}
    if (config.norm, config.ffn, config.position) != family[config.arch]:
        raise ValueError(f"Hugging Face's {config.arch} models use {'/'.join(family[config.arch])}; "
                         f"this config has {config.norm}/{config.ffn}/{config.position}, which its "
                         f"config.json cannot say (transformers would run another model)")
    if config.arch == "gpt2" and not config.attn_bias:
        raise ValueError("Hugging Face's gpt2 checkpoints always hold Q, K, V biases (c_attn.bias):"
                         " a config with attn_bias=False cannot be saved as one")
    out = {}
    for name, (hf, transpose) in _table(config).items():
        if name in named:
            a = named[name].T if transpose else named[name]          # [in, out] -> [out, in]
            out[hf] = np.ascontiguousarray(to_numpy(a))              # (views, tiles: engine/)
    if config.arch == "gpt2":
        for i in range(config.n_layers):   # fuse Q, K, V back into Conv1D c_attn
            out[f"h.{i}.attn.c_attn.weight"] = np.concatenate(
                [to_numpy(named[f"blocks.{i}.attn.w{x}"]) for x in "qkv"], axis=1)   # 3 × [C, C] -> [C, 3C]
            out[f"h.{i}.attn.c_attn.bias"] = np.concatenate(
                [named[f"blocks.{i}.attn.b{x}"] for x in "qkv"])                 # 3 × [C] -> [3C]
        out = {(k if k == _LM_HEAD[0] else "transformer." + k): v for k, v in out.items()}
    return out


def load_hf_checkpoint(path: str | Path) -> tuple[ModelConfig, GPTParams]:
    """Read a checkpoint directory -> (config, params of plain float32 arrays)."""
    config = read_checkpoint_config(path)
    return config, load_weights(Path(path) / "model.safetensors", config, empty_params(config))


def read_checkpoint_config(path: str | Path) -> ModelConfig:
    """A checkpoint directory's config, checked against its weights file's header."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path} is not a checkpoint directory: no config.json")
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(f"{path} has no model.safetensors (sharded and .bin checkpoints "
                                f"are not supported; minillm never unpickles)")
    config = ModelConfig.load(path / "config.json")
    check_checkpoint_sizes(path, config)              # before anything of the config's size
    return config


def check_checkpoint_sizes(path: Path, config: ModelConfig) -> None:
    """config.json against model.safetensors' header: the same number of parameters (sizes.py)."""
    def not_a_parameter(name):
        name = name.removeprefix("transformer.")
        return (config.arch == "gpt2" and name.endswith(_GPT2_BUFFERS)) \
            or (config.tie_embeddings and name == _LM_HEAD[0])
    shapes = read_safetensors_shapes(path / "model.safetensors")
    check_sizes(config, shapes, f"{path / 'config.json'} and model.safetensors",
                ignore=not_a_parameter)
    names = {name.removeprefix("transformer.") for name in shapes}
    fused = [f"h.{i}.attn.c_attn.{w}" for i in range(config.n_layers) for w in ("weight", "bias")]
    missing = [name for name in fused if config.arch == "gpt2" and name not in names]
    if missing:        # (the other tensors are named by load_weights)
        raise ValueError(f"{path / 'model.safetensors'} is missing tensor {missing[0]!r}")


def save_hf_checkpoint(path: str | Path, config: ModelConfig, params: GPTParams) -> None:
    """Write ``config.json`` + ``model.safetensors`` into the directory ``path`` (created)."""
    tensors = named_to_hf(params.named(), config)     # first: a config HF cannot name writes nothing
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    config.save(path / "config.json")
    save_safetensors(path / "model.safetensors", tensors,
                     metadata={"format": "pt", "written_by": "minillm"})
