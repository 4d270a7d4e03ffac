"""What the variant tables share: ``Attempt``, the solutions, and variants built from a solution
(a list instead of an array, float32 inputs, a function that forgets ``return``)."""
from __future__ import annotations

import dataclasses
import importlib.util
import sys
from typing import Callable

import numpy as np

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "notebooks"))
from exercises import NAMES  # noqa: E402

NONE = "you returned None — did you forget `return`?"


@dataclasses.dataclass(frozen=True)
class Attempt:
    why: str                        # what this version does, in words
    fn: Callable
    hint: str | None = None         # wrong only: the start of the one hint its verdict must carry
    says: str | None = None         # wrong only: words its verdict must contain


def load_solutions() -> dict:
    found = {}
    for path in sorted((REPO / "notebooks" / "solutions").glob("[0-9][0-9]_*.py")):
        spec = importlib.util.spec_from_file_location(f"solutions_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.update({name: getattr(module, name) for name in NAMES if hasattr(module, name)})
    return found


SOLUTIONS = load_solutions()


def forgets_return(fn: Callable) -> Attempt:
    """The body computes the answer and falls off the end."""
    def attempt(*args):
        fn(*args)
    return Attempt("computes the answer but forgets `return`", attempt, says=NONE)


def as_list(fn: Callable) -> Callable:
    return lambda *args: np.asarray(fn(*args)).tolist()


def in_float32(fn: Callable) -> Callable:
    """Casts every float array argument to float32 first (the result is float32 too)."""
    def attempt(*args):
        return fn(*(a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                    for a in args))
    return attempt


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def naive_softmax(z, axis=-1):
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)
