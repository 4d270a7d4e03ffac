"""The model's file methods: ``GPT.from_pretrained(path)``, ``model.save_pretrained(path)`` and
``model.save_gguf(path, tokenizer)``.

Not part of the math (the afternoon's model/ files never call them): ``GPT`` inherits them from
this one mixin so that the class a reader finds in model/gpt.py is the class users load and save
(``minillm.GPT is minillm.model.GPT``). The formats themselves are in minillm/io/.

Which model a load builds is the class it is called on, through ``empty(config)``: ``GPT`` makes
plain ndarrays (the code of model/ runs); the engine's ``EngineGPT`` overrides ``empty`` to
allocate its arena (minillm/engine/). ``minillm.load_model(path)`` chooses between them.

    >>> model = GPT.from_pretrained("weights/shakespeare")      # model/'s code, plain arrays
    >>> model.save_pretrained("out/mine")                        # config.json + model.safetensors
"""
from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from minillm.io.checkpoints import load_weights, read_checkpoint_config, save_hf_checkpoint
from minillm.io.hf.shards import weights_file
from minillm.io.commit import reading
from minillm.io.gguf.export import save_gguf
from minillm.model.params import empty_params


class ModelFiles:
    """``from_pretrained``, ``empty``, ``save_pretrained``, ``save_gguf``; the class using it
    has ``__init__(config, params)`` and the attributes ``config`` and ``params``.

    ``gguf_metadata``: the keys a GGUF source carried beyond the weights (``general.*``, …), as
    ``{key: (GGUF type, value)}``, written back by ``save_gguf``; empty for other sources."""

    gguf_metadata = MappingProxyType({})

    @classmethod
    def empty(cls, config):
        """A model of ``config`` whose weights are allocated, not yet set: what loaders fill."""
        return cls(config, empty_params(config))

    @classmethod
    def from_pretrained(cls, path: str | Path):
        """Load a Hugging Face checkpoint directory (``config.json`` + ``model.safetensors``)
        into a model of this class (``GPT``: plain ndarrays; ``EngineGPT``: the engine)."""
        with reading(path):          # both files of one save, whole (io/commit.py)
            config = read_checkpoint_config(path)
            model = cls.empty(config)
            load_weights(weights_file(path), config, model.params)   # (or the shards' index)
        return model

    def save_pretrained(self, path: str | Path, max_shard_size: int | str | None = None) -> None:
        """Write ``config.json`` + ``model.safetensors`` in Hugging Face's layout and names; with
        ``max_shard_size`` (bytes, or "500MB", "2GB"), weights over it as shards + their index
        ``model.safetensors.index.json``, split as transformers splits them."""
        save_hf_checkpoint(path, self.config, self.params, max_shard_size)

    def save_gguf(self, path: str | Path, tokenizer, dtype: str = "f32") -> Path:
        """Write one GGUF file (weights + ``tokenizer``) that llama.cpp and transformers load;
        dtype "f32", "f16" or "q8_0". See ``minillm/io/gguf/export.py``."""
        return save_gguf(path, self, tokenizer, dtype)
