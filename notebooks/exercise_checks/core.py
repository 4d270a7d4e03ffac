"""What every exercise shares: the ``Exercise`` record, what an answer must look like before its
values are compared (``as_array``, ``as_number``, ``as_ids``, ``as_pair``, ``visible``), hints,
number formatting and common strategies.

A judge returns None (right) or a sentence starting "you …"; ``check`` puts "for <the input>: "
in front. A judge raises ``Wrong`` when the answer is of the wrong kind (a str, shape (3,) for
[2, 3], …): that is said before any value is compared.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st


class Wrong(Exception):
    """The answer is of the wrong kind: the text says what came back and what was expected."""


@dataclasses.dataclass(frozen=True)
class Hint:
    """A likely bug. ``text`` is added to the verdict only when ``matches(case, answer)``: the
    learner's answer is what that bug gives (``output_hint``), or shows its symptom."""
    text: str
    matches: Callable[[Any, Any], bool]


def output_hint(text: str, bug: Callable[[Any], Any]) -> Hint:
    """A hint shown when the answer equals ``bug(case)``, the output of the bug it names."""
    return Hint(text, lambda case, got: same(got, bug(case)))


# the symptom of exp overflowing (np.exp(1000) = inf, inf / inf = nan)
OVERFLOW = Hint("exp overflowed: subtract the maximum first — it cancels out in the ratio",
                lambda case, got: not np.isfinite(np.asarray(got, dtype=np.float64)).all())


@dataclasses.dataclass(frozen=True)
class Exercise:
    name: str
    task: str                                   # the contract, in one or two sentences
    judge: Callable[[Callable, Any], str | None]
    show: Callable[[Any], str]                  # the input, in words: "logits [1, 2], k = 1"
    strategy: st.SearchStrategy
    cases: tuple = ()                           # hand-picked cases, tried first
    hints: tuple[Hint, ...] = ()                # tried in order on a wrong answer


def kind(got) -> str:
    """What a value is, for a message: 'a str', 'a list of 3', 'an array of shape (2, 3)'."""
    if isinstance(got, np.ndarray):
        return f"an array of shape {got.shape}"
    if isinstance(got, (list, tuple)):
        return f"a {type(got).__name__} of {len(got)}"
    name = type(got).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({got!r:.40})"


def as_array(got, shape, what: str = "an array") -> np.ndarray:
    """``got`` as float64 of ``shape``: an ndarray, list or tuple of any numeric dtype, else Wrong."""
    shape = tuple(shape)
    if isinstance(got, (str, bytes, dict, set)):
        raise Wrong(f"you returned {kind(got)}; expected {what} of shape {shape}")
    try:
        a = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise Wrong(f"you returned {kind(got)}, not numbers; expected {what} of shape {shape}") from None
    if a.shape != shape:
        raise Wrong(f"you returned shape {a.shape}; expected {what} of shape {shape}")
    return a


def as_number(got, what: str = "a number") -> float:
    """``got`` as a float: a Python or NumPy number or a 0-d array, else Wrong."""
    if isinstance(got, (str, bytes, dict, set)):
        raise Wrong(f"you returned {kind(got)}; expected {what}")
    a = as_array(got, np.shape(got), what)
    if a.ndim:
        raise Wrong(f"you returned {kind(got)}; expected {what}, a single value")
    return float(a)


def as_ids(got, n: int | None = None, what: str = "ids") -> list[int]:
    """``got`` as a list of Python ints (a list, tuple or 1-D array of any int width), else Wrong."""
    a = as_array(got, (n,) if n is not None else np.shape(got), what)
    if a.ndim != 1:
        raise Wrong(f"you returned {kind(got)}; expected a flat sequence of {what}")
    if not np.array_equal(a, np.round(a)):
        raise Wrong(f"you returned {fmt(a)}; {what} are whole numbers")
    return [int(i) for i in a]


def as_pair(got, what: str = "a pair") -> tuple:
    """``got`` as a 2-tuple: a tuple or a list of two, else Wrong."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Wrong(f"you returned {kind(got)}; expected {what}: return first, second")
    return tuple(got)


def visible(got, shape) -> np.ndarray:
    """A mask as bool [shape], True = visible. Accepted: bool; 0/1 (1 visible); additive 0 / −inf
    (or a large negative such as −1e9) added to the scores, 0 visible."""
    if isinstance(got, np.ndarray) and got.dtype == bool:
        if got.shape != tuple(shape):
            raise Wrong(f"you returned shape {got.shape}; the mask is [T, S] = {tuple(shape)}")
        return got
    m = as_array(got, shape, "a mask")
    if np.isnan(m).any():
        raise Wrong("you returned a mask holding nan: 0 · (−inf) is nan, so np.triu(np.ones(…), 1) * "
                    "-np.inf puts nan where a 0 belongs; build it with np.where(hidden, -np.inf, 0.0)")
    if np.all((m == 0) | (m <= -1e4)):
        return m == 0                            # additive: 0 keeps a score, −inf removes it
    if np.all((m == 0) | (m == 1)):
        return m == 1
    raise Wrong(f"you returned a mask holding {fmt(np.unique(m))}; a mask is bool (True: "
                f"visible), 0/1, or additive (0 visible, −inf hidden)")


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
    """Softmax over the last axis, in float64."""
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm64(x, w, b, eps: float) -> np.ndarray:
    """The textbook layer norm, row by row: (x − mean) / √(var + eps) · w + b (var divides by C)."""
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps) * w + b


def order_desc(z) -> list[int]:
    """Ids by logit, largest first, ties broken by the lower id."""
    return sorted(range(len(z)), key=lambda i: (-z[i], i))


def filtered_logits(z, got) -> np.ndarray:
    """A filter's output: the input with some entries removed and the others unchanged, else
    Wrong. Removed means -inf, or a large negative (≤ −1e4, e.g. −1e9) that softmax turns into 0."""
    out = as_array(got, np.shape(z), "logits")
    out = np.where((out <= -1e4) & (np.asarray(z) > -1e4), -np.inf, out)
    keep = np.isfinite(out)
    if not np.isneginf(out[~keep]).all():
        raise Wrong("you returned +inf or nan somewhere; removed tokens must be set to -inf")
    changed = keep & ~np.isclose(out, z, rtol=1e-6, atol=0)       # float32 copies are the same
    tiny = changed & (out < 0) & (out > -1e-3)                     # −1e-9 written for −1e9
    if tiny.any():
        i = int(np.flatnonzero(tiny)[0])
        raise Wrong(f"you set id {i} to {out[i]:g}, which is almost 0: that keeps the token (logit "
                    f"{fmt(z[i])} -> {out[i]:g}). To remove a token write -inf, or a large negative "
                    f"such as -1e9 (not -1e-9)")
    if changed.any():
        i = int(np.flatnonzero(changed)[0])
        raise Wrong(f"you changed a kept logit (id {i}: {fmt(z[i])} -> {fmt(out[i])}); kept tokens "
                    f"keep their logits, removed ones become -inf")
    return out


def arrays_differ(got, want, tol: float = 1e-6) -> bool:
    got = np.asarray(got, dtype=np.float64)
    return got.shape != np.shape(want) or not np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def same(got, want, tol: float = 1e-6) -> bool:
    """Equal values (pairs compared item by item); False for anything that cannot be compared."""
    if isinstance(want, tuple):
        return (isinstance(got, (tuple, list)) and len(got) == len(want)
                and all(same(g, w, tol) for g, w in zip(got, want)))
    try:
        return not arrays_differ(got, want, tol)
    except (TypeError, ValueError):               # not numbers: parts of a word, a text
        try:
            return got == want if isinstance(want, (str, bytes)) else list(got) == list(want)
        except TypeError:
            return False


# logits with frequent ties (quarters in [-10, 10]) and 2-8 tokens: readable counterexamples
LOGITS = st.lists(st.integers(-40, 40).map(lambda i: i / 4), min_size=2, max_size=8).map(
    lambda v: np.array(v, dtype=np.float64))
# rows of such logits: [N, V] with N in 2..3 (a function working on the wrong axis fails)
LOGIT_ROWS = st.tuples(st.integers(2, 3), st.integers(2, 6)).flatmap(
    lambda nv: st.lists(st.integers(-40, 40), min_size=nv[0] * nv[1], max_size=nv[0] * nv[1]).map(
        lambda v: np.array(v, dtype=np.float64).reshape(nv) / 4))
