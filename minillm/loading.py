"""One entry point for users: ``model, tokenizer = load_model(path)``.

It looks at what ``path`` is and dispatches:

    a directory with config.json + model.safetensors   Hugging Face (GPT-2, Llama, Qwen2) or a
                                                        minillm checkpoint (same layout)
    a .gguf file                                        llama.cpp's format (weights + tokenizer)

The tokenizer is whatever the checkpoint carries (``tokenizer.json``, minillm's own tokenizer
file, ``encoder.json`` + ``vocab.bpe``, the GGUF metadata), or None when it carries none.
"""
from __future__ import annotations

from pathlib import Path

from minillm.model import GPT

# Tokenizer files a checkpoint directory may hold, in the order they are tried.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.json.gz", "encoder.json")   # HF or minillm JSON; GPT-2 dir


def load_model(path: str | Path):
    """-> (GPT, Tokenizer or None). Raises FileNotFoundError / ValueError with what was found."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no model at {path}")
    if path.is_file() and path.suffix == ".gguf":
        from minillm.io.gguf_model import load_gguf_model   # llama.cpp files (GGUF)
        return load_gguf_model(path)
    if path.is_dir():
        model = GPT.from_pretrained(path)
        return model, find_tokenizer(path)
    raise ValueError(f"{path}: expected a checkpoint directory (config.json + model.safetensors) "
                     f"or a .gguf file")


def find_tokenizer(directory: Path):
    """The tokenizer a checkpoint directory carries, or None."""
    from minillm.tokenizer import Tokenizer
    for name in TOKENIZER_FILES:
        candidate = directory / name
        if candidate.exists():
            return Tokenizer.load(directory if name == "encoder.json" else candidate)
    return None
