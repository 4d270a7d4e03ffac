"""One resolver for every command: what ``--model`` and ``--tokenizer`` accept, and where it is.

    --model NAME        a checkpoint folder (config.json + model.safetensors), a .gguf file, a
                        downloaded model's name (``smollm2``), or a folder of minillm's repository
                        (``weights/shakespeare``, found from any working directory of a clone)
    --tokenizer NAME    a vocabulary name (gpt2, r50k, cl100k, o200k), a downloaded tokenizer
                        (``deepseek-v4``), a tokenizer file, or anything --model takes (then the
                        tokenizer that model carries)

A name that is none of these gets one message listing what is accepted.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def shipped_models() -> list[str]:
    """The models shipped with minillm (``weights/NAME`` in a clone; package data when installed)."""
    from minillm.resources import SHIPPED_MODELS
    return [f"weights/{name}" for name in SHIPPED_MODELS]


def downloadable_models(tokenizers: bool = False) -> list[str]:
    """The names `download` fetches that are models (a .gguf file), or with ``tokenizers=True``
    those that are a tokenizer only (deepseek-v4)."""
    from minillm.io.download import MODELS
    return sorted(name for name, spec in MODELS.items()
                  if spec.filename.endswith(".gguf") != tokenizers)


def accepted(option: str) -> str:
    """What ``option`` accepts, for error messages and ``--help``."""
    from minillm.tokenizer.formats.locate import NAMED
    models = (f"a checkpoint folder (config.json + model.safetensors), a .gguf file, a downloaded "
              f"model's name ({', '.join(downloadable_models())}: `python -m minillm download NAME`)"
              + (f" or a folder of the repository ({', '.join(shipped_models())})"
                 if shipped_models() else ""))
    if option == "--tokenizer":
        return (f"a vocabulary name ({', '.join(sorted(n for n in NAMED if '_' not in n))}), a "
                f"downloaded tokenizer ({', '.join(downloadable_models(tokenizers=True))}), a "
                f"tokenizer file, or {models}")
    return models


def help_text(option: str) -> str:
    """The short form of ``accepted`` for ``--help``; errors list everything."""
    if option == "--tokenizer":
        return (f"a vocabulary (gpt2, r50k, cl100k, o200k), a downloaded tokenizer "
                f"({', '.join(downloadable_models(tokenizers=True))}), a tokenizer file, or "
                f"anything --model takes")
    return (f"a checkpoint folder, a .gguf file, or a downloaded model's name "
            f"({', '.join(downloadable_models())})")


def resolve_model_path(name: str, option: str = "--model") -> Path:
    """A downloaded model's name, a path as given, else a path relative to the repository."""
    from minillm.io.download import MODELS, resolve_model
    from minillm.resources import named_model
    from minillm.tokenizer.formats.locate import NAMED
    path = resolve_model(name)                      # an un-downloaded known name raises here
    if name in MODELS and os.path.lexists(name):    # (said, as a user may have meant the folder)
        print(f"minillm: {option} {name} is the verified download {path}; the {name} in this "
              f"folder is not used (give ./{name} to use it)", file=sys.stderr)
    if path.exists():
        return path
    repo_path = named_model(name)          # shipped (a clone or installed), or the clone's folder
    if repo_path is not None:
        return repo_path
    hint = (f" ({name} is a vocabulary: use --tokenizer {name})"
            if option == "--model" and name in NAMED else "")
    raise FileNotFoundError(f"{option} {name}: not a folder, a file or a known download{hint}. "
                            f"{option} takes {accepted(option)}")


def load_tokenizer(name: str, option: str = "--tokenizer"):
    """``--tokenizer NAME`` -> Tokenizer or SentencePieceBPE (see the module docstring);
    ``option``: the one errors name (``tokenize --model NAME`` reads the model's tokenizer)."""
    from minillm.tokenizer import load_tokenizer as load, tokenizer_from_gguf_metadata
    from minillm.tokenizer.formats.locate import NAMED
    if name in NAMED:
        return load(name)
    path = resolve_model_path(name, option)
    if path.suffix == ".gguf":                      # the metadata only: no weights are read
        from minillm.io.gguf.read import read_gguf
        return tokenizer_from_gguf_metadata(read_gguf(str(path)).metadata)
    if path.is_dir() and (path / "config.json").exists():
        from minillm.loading import find_tokenizer
        tok = find_tokenizer(path)
        if tok is None:
            raise ValueError(f"{path} carries no tokenizer: pass --tokenizer gpt2 or a file")
        return tok
    return load(path)


def model_context(name: str) -> int:
    """``--model NAME``'s context window n_ctx, read from its config (no weights are loaded)."""
    path = resolve_model_path(name)
    if path.suffix == ".gguf":
        from minillm.io.gguf.read import read_gguf
        from minillm.io.gguf.model import gguf_config
        g = read_gguf(str(path))
        return gguf_config(g.metadata, g.tensors).n_ctx
    from minillm.io.hf.config import read_config
    from minillm.train.lora.files import adapter_base, is_adapter_folder
    config = path / "config.json"
    if is_adapter_folder(path):                     # a LoRA adapter: its base model's context
        return model_context(str(adapter_base(path)))
    if not config.exists():
        raise ValueError(f"{path} is not a model (no config.json); --model takes {accepted('--model')}")
    return read_config(config).n_ctx          # bounded, regular files only (io/bounded.py)


def load_model_and_tokenizer(model_name: str, tokenizer_name: str | None = None,
                             reference: bool = False):
    """-> (path, model, tokenizer) for generate / chat / export; ``--tokenizer`` replaces the
    model's own tokenizer; a model that carries none and gets none is a ValueError.
    ``reference`` (``--reference``): a model that runs minillm/model/'s code, not the engine."""
    from minillm.loading import load_model
    path = resolve_model_path(model_name)
    model, tokenizer = load_model(path, fast=not reference)
    if tokenizer_name is not None:
        own = tokenizer
        tokenizer = load_tokenizer(tokenizer_name)
        V = model.config.vocab_size
        if tokenizer.vocab_size > V:         # its ids (EOS among them) would be past the model's rows
            instead = ("leave out --tokenizer to use the model's own" if own is not None
                       else "pass the tokenizer the model was trained with")
            raise ValueError(f"--tokenizer {tokenizer_name} has a vocabulary of "
                             f"{tokenizer.vocab_size:,} tokens, which does not fit the model "
                             f"{path} ({V:,} tokens): its ids would name rows the model does "
                             f"not have; {instead} (at most {V:,} tokens)")
        if tokenizer.vocab_size < V:         # the model may choose an id it cannot decode
            raise ValueError(f"--tokenizer {tokenizer_name} has a vocabulary of "
                             f"{tokenizer.vocab_size:,} tokens, fewer than the model {path}'s "
                             f"{V:,}: the model can generate ids {tokenizer.vocab_size:,}-"
                             f"{V - 1:,}, which this tokenizer cannot turn into text; pass the "
                             f"tokenizer the model was trained with (exactly {V:,} tokens)")
    if tokenizer is None:
        raise ValueError(f"{path} carries no tokenizer: pass --tokenizer gpt2 or --tokenizer PATH")
    return path, model, tokenizer
