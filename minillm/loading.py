"""One entry point for users: ``model, tokenizer = load_model(path)``.

It looks at what ``path`` is and dispatches:

    a directory with config.json + model.safetensors   Hugging Face (GPT-2, Llama, Qwen2) or a
                                                        minillm checkpoint (same layout)
    a .gguf file                                        llama.cpp's format (weights + tokenizer)
    a downloaded model's name ("smollm2")               its cached file, sha256 checked first

The tokenizer is whatever the checkpoint carries (``tokenizer.json``, minillm's own
``tokenizer.minillm.json``, ``encoder.json`` + ``vocab.bpe``, the GGUF metadata), or None when it
carries none. Which file, in which order: ``minillm/tokenizer/locate.py`` (``Tokenizer.load(folder)``
uses the same rule).
"""
from __future__ import annotations

import stat
from pathlib import Path

from minillm.model import GPT


def load_model(path: str | Path):
    """-> (GPT, Tokenizer or None). Raises FileNotFoundError / ValueError with what was found."""
    from minillm.cli.download import MODELS, verified_download
    from minillm.io.bounded import probe, shown
    if isinstance(path, str) and path in MODELS and not Path(path).exists():
        path = verified_download(path)         # "smollm2": the download, its sha256 checked
    path = Path(path)
    found = probe(path)                       # (a 5,000-character name: a ValueError here)
    if found is None:
        raise FileNotFoundError(f"no model at {shown(path)}")
    if path.suffix == ".gguf" and not stat.S_ISDIR(found.st_mode):
        from minillm.io.gguf_model import load_gguf_model   # llama.cpp files (GGUF)
        return load_gguf_model(path)
    if stat.S_ISDIR(found.st_mode):
        model = GPT.from_pretrained(path)
        return model, find_tokenizer(path)
    raise ValueError(f"{path}: expected a checkpoint directory (config.json + model.safetensors) "
                     f"or a .gguf file")


def find_tokenizer(directory: Path):
    """The tokenizer a checkpoint directory carries, or None."""
    from minillm.tokenizer import Tokenizer
    from minillm.tokenizer.locate import tokenizer_file
    return Tokenizer.load(directory) if tokenizer_file(directory) is not None else None
