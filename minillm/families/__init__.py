"""Model families, one module each: what a family changes in ModelConfig, and its names.

A family module (``families/qwen3.py``) holds one ``FAMILY = Family(...)``: the ModelConfig
switches it sets, its Hugging Face names (config.json ``model_type``, its keys, the transformers
class, tensor names where they differ from the family it derives from), its GGUF names
(``general.architecture``, keys), its chat formats (by name, ``chat/formats/``) and what it
refuses. io/ reads and writes files from these declarations; model/ and engine/ see only the
switches. The modules are found by iterating this package, so adding a family is one new file
(tests/families/test_new_family.py does it; tests/families/test_families_agree.py lists what
must agree across them).

    >>> family_of_hf("qwen3").switches
    {'qk_norm': True}
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Family:
    """One model family's declaration (every family module fills the same fields)."""
    name: str                          # the module's name: "qwen3"
    base: str                          # ModelConfig.arch, and the reader it derives from
    summary: str                       # one line: what the family changes, and why
    hf_model_types: tuple[str, ...]    # config.json "model_type" values read as this family
    hf_architecture: str | None        # transformers' class ("architectures"); None: never written
    switches: dict = field(default_factory=dict)       # ModelConfig fields it always sets
    hf_keys: tuple[str, ...] = ()      # config.json keys of its own (beyond its base's)
    hf_defaults: dict = field(default_factory=dict)    # transformers' defaults where they differ
    hf_switches: Callable[[dict], dict] | None = None  # config.json -> more ModelConfig fields
    read_hf: Callable | None = None    # a reader of its own (config.json -> ModelConfig)
    hf_marks: Callable | None = None   # config -> True when it is this family's (written so)
    hf_unmarked: Callable | None = None  # config -> True: written so when no family marks it
    write_hf: Callable | None = None   # config -> its config.json keys (all of them with read_hf)
    experts: dict | None = None        # a mixture of experts' config.json names (io/hf/families.py)
    refuses_attention_bias: bool = False   # attention_bias=true (an o_proj bias minillm lacks)
    tensor_switch: str | None = None   # the switch under which hf_tensors / gguf_tensors apply
    hf_tensors: dict = field(default_factory=dict)     # block tensor names apart from its base's
    gguf_architectures: tuple[str, ...] = ()           # general.architecture values it reads as
    gguf_keys: tuple[str, ...] = ()    # {arch}.* keys of its own
    gguf_switches: Callable | None = None   # (metadata, L, C, H) -> more ModelConfig fields
    write_gguf: Callable | None = None   # config -> its own {arch}.* keys' values (uint32)
    gguf_problems: Callable | None = None   # config -> [(what llama.cpp's arch cannot run, has it?)]
    gguf_experts: bool | None = None   # experts in its files: llama.cpp renormalises (True) or not
    gguf_permuted_qk: bool = False     # llama.cpp's converter reorders Q/K rows (io/gguf/qk_rows.py)
    gguf_tensors: dict = field(default_factory=dict)   # block tensor names apart from its base's
    hf_refusals: tuple = ()            # ((order, config -> why a config.json cannot say it,
    #                                    or None), ...): io/hf_names.py's named_to_hf asks them
    gguf_marks: Callable | None = None  # config -> True when llama.cpp runs it as this family's
    gguf_rank: int = 0                 # export's order among marked families (lowest is chosen)
    gguf_fuse: Callable | None = None  # (GGUF tensors, config) -> its fused tensors, on writing
    gguf_rope_freqs: bool = False      # its files carry Llama 3's RoPE divisors (rope_freqs.weight)
    gguf_window: bool = False          # its files may say a window on every layer (minillm's key)
    gguf_fixed: dict | None = None     # what llama.cpp fixes for its architecture (io/gguf/gemma.py)
    gguf_split: Callable | None = None  # (GGUF, config) -> (names, get, the parts get reads)
    chat_formats: tuple[str, ...] = ()                 # names in chat.formats.FORMATS
    refuses: tuple[str, ...] = ()      # what it refuses, in words (the readers raise it)


@functools.cache
def families() -> dict[str, Family]:
    """Every family module's FAMILY, by name (the modules of this package, in name order)."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found[module.FAMILY.name] = module.FAMILY
    return found


def family_of_hf(model_type: str) -> Family | None:
    """The family whose config.json says ``model_type`` (None: no family reads it)."""
    return next((f for f in families().values() if model_type in f.hf_model_types), None)


def family_of_gguf(architecture: str) -> Family | None:
    """The family whose GGUF ``general.architecture`` is ``architecture`` (None: none)."""
    return next((f for f in families().values() if architecture in f.gguf_architectures), None)


def family(name: str) -> Family:
    """A family by its module's name, or a ValueError listing them."""
    if name not in families():
        raise ValueError(f"unknown model family {name!r}; the families: {', '.join(families())}")
    return families()[name]


__all__ = ["Family", "families", "family", "family_of_gguf", "family_of_hf"]
