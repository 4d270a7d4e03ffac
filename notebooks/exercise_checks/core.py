"""What every exercise shares: the ``Exercise`` record, number formatting, common strategies."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st


@dataclasses.dataclass(frozen=True)
class Exercise:
    name: str
    task: str                                   # the contract, in one or two sentences
    judge: Callable[[Callable, Any], str | None]
    show: Callable[[Any], str]
    strategy: st.SearchStrategy
    cases: tuple = ()                           # hand-picked cases, tried first


def fmt(x, digits: int = 3) -> str:
    """A number or array in short readable form: [0.5, 0.3, -inf]."""
    a = np.asarray(x)
    if a.ndim == 0:
        v = a.item()
        if isinstance(v, float):
            return np.format_float_positional(v, precision=digits, trim="-")
        return str(v)
    return "[" + ", ".join(fmt(v, digits) for v in a) + "]"


def kept(out) -> list[int]:
    """Ids left finite by a filter that masks the removed tokens to -inf."""
    return np.flatnonzero(np.isfinite(np.asarray(out, dtype=np.float64))).tolist()


def softmax64(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def layer_norm64(x, w, b, eps: float) -> np.ndarray:
    """The textbook layer norm, row by row: (x − mean) / √(var + eps) · w + b (var divides by C)."""
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps) * w + b


def order_desc(z) -> list[int]:
    """Ids by logit, largest first, ties broken by the lower id (the library's definition)."""
    return sorted(range(len(z)), key=lambda i: (-z[i], i))


def filtered_logits_problem(z, out) -> str | None:
    """A filter's output must be the input with some entries at -inf and the others unchanged."""
    out = np.asarray(out, dtype=np.float64)
    if out.shape != np.shape(z):
        return f"you returned shape {out.shape}; the logits have shape {np.shape(z)}"
    keep = np.isfinite(out)
    if not np.isneginf(out[~keep]).all():
        return "removed tokens must be set to -inf (you returned +inf or nan somewhere)"
    changed = keep & (out != z)
    if changed.any():
        i = int(np.flatnonzero(changed)[0])
        return (f"you changed a kept logit (id {i}: {fmt(z[i])} -> {fmt(out[i])}); kept tokens "
                f"keep their logits, removed ones become -inf")
    return None


def arrays_differ(got, want, tol: float = 1e-6) -> bool:
    got = np.asarray(got, dtype=np.float64)
    return got.shape != np.shape(want) or not np.allclose(got, want, rtol=tol, atol=tol)


# logits with frequent ties (quarters in [-10, 10]) and 2-8 tokens: readable counterexamples
LOGITS = st.lists(st.integers(-40, 40).map(lambda i: i / 4), min_size=2, max_size=8).map(
    lambda v: np.array(v, dtype=np.float64))
SEEDS = st.integers(0, 2**31 - 1)
