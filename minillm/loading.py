"""One entry point for users: ``model, tokenizer = load_model(path)``; and the public ``GPT``.

``load_model`` looks at what ``path`` is and dispatches:

    a directory with config.json + model.safetensors   Hugging Face (GPT-2, Llama, Qwen2) or a
                                                        minillm checkpoint (same layout)
    a .gguf file                                        llama.cpp's format (weights + tokenizer)
    a downloaded model's name ("smollm2")               its cached file, sha256 checked first

``fast=True`` (the default) loads the weights straight into the engine's arena and returns an
engine model (``minillm/engine/``: chat speed depends on it); ``fast=False`` returns a ``GPT``
whose every weight is a plain float32 ndarray and which runs only ``minillm/model/`` code. The
two give the same logits up to float32 rounding and the same greedy tokens.

The tokenizer is whatever the checkpoint carries (``tokenizer.json``, minillm's own
``tokenizer.minillm.json``, ``encoder.json`` + ``vocab.bpe``, the GGUF metadata), or None when it
carries none. Which file, in which order: ``minillm/tokenizer/formats/locate.py`` (``Tokenizer.load(folder)``
uses the same rule).

Why the files live here and not on ``minillm.model.GPT``: the model is the math; reading and
writing files needs ``minillm/io/``, which itself builds on the model's parameters, so methods on
the model calling io would make an import cycle. ``minillm.GPT`` is the model's class plus the
file methods below (``Files``); ``FastGPT`` is the engine's model plus the same.
"""
from __future__ import annotations

import stat
from pathlib import Path
from types import MappingProxyType

from minillm.engine import EngineGPT, empty_arena
from minillm.io.checkpoints import load_weights, read_checkpoint_config, save_hf_checkpoint
from minillm.io.gguf.carry import carried
from minillm.io.gguf.export import save_gguf
from minillm.io.gguf.model import gguf_weights, read_gguf_config
from minillm.model import GPT as ModelGPT
from minillm.model.params import empty_params


class Files:
    """``from_pretrained``, ``save_pretrained`` and ``save_gguf`` for a model class.

    ``gguf_metadata``: the keys a GGUF source carried beyond the weights (``general.*``, …), as
    ``{key: (GGUF type, value)}``, written back by ``save_gguf``; empty for other sources."""

    gguf_metadata = MappingProxyType({})

    @classmethod
    def from_pretrained(cls, path: str | Path, fast: bool = True) -> "GPT":
        """Load a Hugging Face checkpoint directory (``config.json`` + ``model.safetensors``);
        ``fast=False``: a model of plain ndarrays (see ``load_model``)."""
        config = read_checkpoint_config(path)
        model = empty_model(config, fast)
        load_weights(Path(path) / "model.safetensors", config, model.params)
        return model

    def save_pretrained(self, path: str | Path) -> None:
        """Write ``config.json`` + ``model.safetensors`` in Hugging Face's layout and names."""
        save_hf_checkpoint(path, self.config, self.params)

    def save_gguf(self, path: str | Path, tokenizer, dtype: str = "f32") -> Path:
        """Write one GGUF file (weights + ``tokenizer``) that llama.cpp and transformers load;
        dtype "f32", "f16" or "q8_0". See ``minillm/io/gguf/export.py``."""
        return save_gguf(path, self, tokenizer, dtype)


class GPT(Files, ModelGPT):
    """``minillm.model.GPT`` (the math over plain ndarrays) with the file methods.

    ``GPT(config, seed=0)``, ``GPT(config, params)``, ``GPT.from_pretrained(path)``,
    ``model.save_pretrained(path)``, ``model.save_gguf(path, tokenizer)``.
    """


class FastGPT(GPT, EngineGPT):
    """The engine's model (``minillm.engine.EngineGPT``: its ``__init__(config, arena)`` and
    ``forward``) with the file methods; an instance of ``GPT`` too."""


def empty_model(config, fast: bool = True) -> GPT:
    """A model of ``config`` whose weights are allocated, not yet set: what the loaders fill."""
    return FastGPT(config, empty_arena(config)) if fast else GPT(config, empty_params(config))


def load_model(path: str | Path, fast: bool = True):
    """-> (GPT, Tokenizer or None). Raises FileNotFoundError / ValueError with what was found."""
    from minillm.io.download import MODELS, verified_download
    from minillm.io.bounded import probe, shown
    if isinstance(path, str) and path in MODELS and not Path(path).exists():
        path = verified_download(path)         # "smollm2": the download, its sha256 checked
    path = Path(path)
    found = probe(path)                       # (a 5,000-character name: a ValueError here)
    if found is None:
        raise FileNotFoundError(f"no model at {shown(path)}")
    if path.suffix == ".gguf" and not stat.S_ISDIR(found.st_mode):
        return load_gguf_model(path, fast)     # llama.cpp files (GGUF)
    if stat.S_ISDIR(found.st_mode):
        return GPT.from_pretrained(path, fast), find_tokenizer(path)
    raise ValueError(f"{path}: expected a checkpoint directory (config.json + model.safetensors) "
                     f"or a .gguf file")


def load_gguf_model(path: str | Path, fast: bool = True):
    """A llama.cpp GGUF file -> (GPT, Tokenizer or None): the model and, when the metadata has
    one, its tokenizer. The metadata neither computes (``general.*``, chat template, padding id,
    ...) stays on them as ``gguf_metadata``, so that ``save_gguf`` writes it back."""
    from minillm.tokenizer import tokenizer_from_gguf_metadata
    g, config = read_gguf_config(path)
    model = empty_model(config, fast)
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
