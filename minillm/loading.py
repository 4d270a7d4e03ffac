"""One entry point for users: ``model, tokenizer = load_model(path)``.

``load_model`` looks at what ``path`` is and dispatches:

    a directory with config.json + model.safetensors   Hugging Face (any family of
                                                        minillm/families/) or a
                                                        minillm checkpoint (same layout); or with
                                                        model.safetensors.index.json + its shards
    a .gguf file                                        llama.cpp's format (weights + tokenizer)
    a downloaded model's name ("smollm2")               its cached file, sha256 checked first
    a directory with adapter_config.json               a LoRA adapter (no config.json): its base
                                                        model with the adapter merged in
                                                        (load_adapted_model)

Which class it builds: ``fast=True`` (the default) an ``EngineGPT`` (minillm/engine/: the weights
loaded straight into the engine's arena; chat speed depends on it); ``fast=False`` a ``GPT``
(minillm/model/gpt.py) whose every weight is a plain float32 ndarray and which runs only
``minillm/model/`` code — the code a reader reads. The two give the same logits up to float32
rounding and the same greedy tokens (tests/engine/). Both are the one model class, ``GPT``
(``EngineGPT`` is its subclass): ``GPT.from_pretrained(path)`` and
``EngineGPT.from_pretrained(path)`` load a checkpoint folder into either directly.

The tokenizer is whatever the checkpoint carries (``tokenizer.json``, minillm's own
``tokenizer.minillm.json``, ``encoder.json`` + ``vocab.bpe``, the GGUF metadata), or None when it
carries none. Which file, in which order: ``minillm/tokenizer/formats/locate.py`` (``Tokenizer.load(folder)``
uses the same rule).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from minillm.engine import EngineGPT
from minillm.io.bounded import probe, shown
from minillm.io.commit import reading
from minillm.io.download import MODELS, verified_download
from minillm.io.gguf.carry import carried
from minillm.io.gguf.model import gguf_weights, read_gguf_config
from minillm.model import GPT
from minillm.resources import SHIPPED_MODELS, named_model


def model_class(fast: bool = True) -> type[GPT]:
    """The class a load builds: ``EngineGPT`` (fast) or ``GPT`` (model/'s code, plain arrays)."""
    return EngineGPT if fast else GPT


def load_model(path: str | Path, fast: bool = True):
    """-> ``(model, tokenizer)``, a pair: ``model, tok = load_model("shakespeare")``; the
    tokenizer is None when the files carry none. ``path``: every name ``--model`` takes — a
    checkpoint folder, a .gguf file, a LoRA adapter folder, a downloaded model's name
    (``"smollm2"``), a shipped model (``"shakespeare"`` or ``"weights/shakespeare"``, from any
    working directory). Raises FileNotFoundError / ValueError with what was found."""
    if isinstance(path, str) and path in MODELS:   # "smollm2": the download, its sha256 checked
        path = verified_download(path)         # (a folder ./smollm2: give "./smollm2" or a Path)
    if isinstance(path, str) and not os.path.lexists(path):
        path = named_model(path) or path       # "shakespeare": the shipped one (resources.py)
    path = Path(path)
    found = probe(path)                       # (a 5,000-character name: a ValueError here)
    if found is None:
        raise FileNotFoundError(f"no model at {shown(path)}: load_model takes a checkpoint "
                                f"folder, a .gguf file, a downloaded model's name "
                                f"({', '.join(sorted(n for n, m in MODELS.items() if m.filename.endswith('.gguf')))})"
                                f" or a shipped model "
                                f"({', '.join(SHIPPED_MODELS)})")
    if path.suffix == ".gguf" and not stat.S_ISDIR(found.st_mode):
        return load_gguf_model(path, fast)     # llama.cpp files (GGUF)
    if stat.S_ISDIR(found.st_mode):
        # a LoRA adapter (train/lora/files.py's is_adapter_folder, checked here so that a plain
        # folder loads without importing training code): its base model, merged
        if (path / "adapter_config.json").is_file() and not (path / "config.json").exists():
            return load_adapted_model(path, fast)
        with reading(path):          # the model and tokenizer of one save (io/commit.py)
            return model_class(fast).from_pretrained(path), find_tokenizer(path)
    raise ValueError(f"{path}: expected a checkpoint directory (config.json + model.safetensors) "
                     f"or a .gguf file")


def load_adapted_model(folder: str | Path, fast: bool = True):
    """A LoRA adapter folder -> (its base model with the adapter merged into the weights, the
    base's tokenizer). The base is ``base_model_name_or_path`` of adapter_config.json: a
    downloaded model's name, or a path (a relative one from the adapter's folder)."""
    from minillm.train.lora.adapters import merge_in_place
    from minillm.train.lora.files import adapter_base, load_adapter
    model, tokenizer = load_model(adapter_base(folder), fast)
    merge_in_place(model.params, load_adapter(folder, model.config))
    return model, tokenizer


def load_gguf_model(path: str | Path, fast: bool = True):
    """A llama.cpp GGUF file -> (GPT, Tokenizer or None): the model and, when the metadata has
    one, its tokenizer. The metadata neither computes (``general.*``, chat template, padding id,
    ...) stays on them as ``gguf_metadata``, so that ``save_gguf`` writes it back."""
    from minillm.tokenizer import tokenizer_from_gguf_metadata
    g, config = read_gguf_config(path)
    model = model_class(fast).empty(config)
    gguf_weights(g, config, model.params)
    meta = g.metadata
    tokenizer = tokenizer_from_gguf_metadata(meta) if "tokenizer.ggml.tokens" in meta else None
    model.gguf_metadata = carried(meta)[0]     # what save_gguf writes back (io/gguf/carry.py)
    return model, tokenizer


def find_tokenizer(directory: Path):
    """The tokenizer a checkpoint directory carries (a Tokenizer or a SentencePieceBPE), or None."""
    from minillm.tokenizer import load_tokenizer
    from minillm.tokenizer.formats.locate import tokenizer_file
    return load_tokenizer(directory) if tokenizer_file(directory) is not None else None
