"""Files shipped with minillm: the named vocabularies and the two small models it trained.

They live in the repository's top-level ``weights/`` folder, the one source of truth::

    weights/gpt2/gpt2.tiktoken.gz                    Tokenizer.load("gpt2")  (also "r50k")
    weights/tokenizers/{cl100k,o200k}_base.tiktoken.gz  Tokenizer.load("cl100k"), ("o200k")
    weights/shakespeare/, weights/songci/            load_model(...), the CLI's default model

An installed copy (``pip install .``, a wheel) carries the same files as the package data of
``minillm._weights`` — setup.cfg maps that package name onto ``weights/`` — found through the
import system (``importlib.util.find_spec``; the folder has no ``__init__.py``, so it is a
namespace package, whose ``importlib.resources.files`` is not a plain path).
A clone (run in place or installed editable) reads its own ``weights/``.

>>> shipped("gpt2/gpt2.tiktoken.gz").name
'gpt2.tiktoken.gz'
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

SHIPPED_MODELS = ("shakespeare", "songci")   # folders of weights/ that hold a model
CLONE_WEIGHTS = Path(__file__).resolve().parents[1] / "weights"   # minillm/../weights


def weights_dir() -> Path:
    """The folder that holds the shipped files: the clone's ``weights/``, else the package data.

    subtle: the clone comes first. A process that imports minillm from a clone may also have
    another clone installed editable; its import hook would answer for ``minillm._weights``.
    """
    if (CLONE_WEIGHTS / "gpt2").is_dir():
        return CLONE_WEIGHTS
    spec = importlib.util.find_spec("minillm._weights")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"minillm's shipped files are missing: neither {CLONE_WEIGHTS} "
                                f"(a clone) nor the package minillm._weights (an installed copy) "
                                f"exists; reinstall minillm")
    return Path(list(spec.submodule_search_locations)[0])


def shipped(relative: str) -> Path:
    """Path of a shipped file or folder, e.g. ``"songci"`` or ``"gpt2/gpt2.tiktoken.gz"``."""
    path = weights_dir() / relative
    if not path.exists():
        raise FileNotFoundError(f"{relative} is not among minillm's shipped files ({path} does "
                                f"not exist)")
    return path


def shipped_model(name: str) -> Path | None:
    """``"shakespeare"`` or ``"weights/shakespeare"`` -> that shipped model's folder, else None."""
    short = name.removeprefix("weights/").rstrip("/")
    return shipped(short) if short in SHIPPED_MODELS else None


def named_model(name: str) -> Path | None:
    """A model name that is no path from here: a shipped model (``"shakespeare"``,
    ``"weights/shakespeare"``, in a clone or installed), else a folder of the clone it was
    imported from (``"weights/tiny-llama"`` from any working directory); None if neither.
    ``load_model`` and every ``--model`` resolve names through this one function."""
    if Path(name).is_absolute():
        return None
    found = shipped_model(name)
    if found is not None:
        return found
    in_clone = CLONE_WEIGHTS.parent / name
    return in_clone if (CLONE_WEIGHTS / "gpt2").is_dir() and in_clone.exists() else None
