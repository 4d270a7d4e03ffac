"""SmolLM3: a Llama in which some layers skip RoPE (``nope_layers``): those layers' attention
sees no position at all ("NoPE"), which helps it reach over long texts; by default every 4th
layer (3, 7, 11, …). Its embeddings are tied and its RoPE base is 2,000,000 by default.

HF names: ``model_type`` "smollm3", ``no_rope_layers`` (one flag a layer, 1 where the layer USES
RoPE) or ``no_rope_layer_interval`` (default 4); Llama's tensors. GGUF: ``general.architecture``
"smollm3", Llama's names and Q/K permutation; the no-RoPE layers are not in the file: llama.cpp
fixes them to every 4th, so only that pattern is written (io/gguf/families.py) and read back.
"""
from __future__ import annotations

import reprlib

from minillm.families import Family

NOPE_STEP = 4                    # llama.cpp's smollm3: hparams.n_no_rope_layer_step = 4


def hf_switches(d: dict) -> dict:
    """The layers without RoPE, from ``no_rope_layers`` or ``no_rope_layer_interval``."""
    n, uses_rope = d["num_hidden_layers"], d.get("no_rope_layers")
    if uses_rope is None:                 # transformers' default: every interval-th layer
        interval = d.get("no_rope_layer_interval", 4)
        if type(interval) is not int or interval <= 0:
            raise ValueError(f"config.json: no_rope_layer_interval must be an integer > 0, got "
                             f"{reprlib.repr(interval)}")
        uses_rope = [int((i + 1) % interval != 0) for i in range(n)]
    # subtle: no_rope_layers[i] is 1 where layer i USES RoPE (transformers' SmolLM3Attention)
    if not isinstance(uses_rope, list) or len(uses_rope) < n or \
            any(type(u) is not int or u not in (0, 1) for u in uses_rope):
        raise ValueError(f"config.json: no_rope_layers must be a list of {n} or more 0/1 flags "
                         f"(1: the layer uses RoPE), got {reprlib.repr(uses_rope)}")
    return {"nope_layers": tuple(i for i in range(n) if uses_rope[i] == 0)}


def write_hf(config) -> dict:
    """``no_rope_layers``: 1 where a layer USES RoPE."""
    return {"no_rope_layers": [int(i not in config.nope_layers) for i in range(config.n_layers)],
            "use_sliding_window": False}


def gguf_nope_layers(n_layers: int) -> tuple[int, ...]:
    """The layers llama.cpp's smollm3 runs without RoPE: 3, 7, 11, … (below ``n_layers``)."""
    return tuple(i for i in range(n_layers) if (i + 1) % NOPE_STEP == 0)


def gguf_switches(meta: dict, n_layers: int, d_model: int, n_heads: int) -> dict:
    """llama.cpp's fixed no-RoPE layers."""
    return {"nope_layers": gguf_nope_layers(n_layers)}


def gguf_problems(c) -> list:
    """What llama.cpp's smollm3 cannot run (io/gguf/families.py's family_arch refuses it)."""
    return [("q/k norms", c.qk_norm), ("layers without RoPE other than every 4th",
                                       c.nope_layers != gguf_nope_layers(c.n_layers))]

FAMILY = Family(
    name="smollm3", base="llama",
    summary="Llama with some layers without RoPE (every 4th by default), tied embeddings",
    hf_model_types=("smollm3",), hf_architecture="SmolLM3ForCausalLM",
    hf_keys=("no_rope_layers", "no_rope_layer_interval"), refuses_attention_bias=True,
    hf_defaults={"rope_theta": 2000000.0, "tie_word_embeddings": True}, hf_switches=hf_switches,
    hf_marks=lambda c: bool(c.nope_layers), write_hf=write_hf,
    gguf_architectures=("smollm3",), gguf_permuted_qk=True, gguf_switches=gguf_switches,
    gguf_problems=gguf_problems, gguf_marks=lambda c: bool(c.nope_layers), gguf_rank=30,
    chat_formats=("smollm3", "smollm3-unsloth"),
    refuses=("attention_bias=true", "in GGUF: no-RoPE layers other than every 4th"))
