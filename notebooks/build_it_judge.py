"""Judging one call of a build-it part (notebook 14): the learner's function runs on a copy of
the library's input; None when its output equals the library's within the tolerance, else what
differs, in words — None returned, a tuple, a shape in the part's letters, an input changed in
place, the largest gap and, for a known mistake, what it is (build_it_symptoms.py)."""
from __future__ import annotations

import copy
import dataclasses
import inspect

import numpy as np

from build_it_parts import LIBRARY, SHAPES
from build_it_symptoms import attention_weights, bugs, fill, raised_hint, weight_symptoms

# Tolerances, from float32 rounding (2⁻²⁴ ≈ 6e-8 relative per operation). A correct formula
# written another way (another summation order, float64 inside, −1e9 for −∞) differs from the
# library's only by rounding. Toys: O(1) values, sums of <= 8 terms -> < 1e-6: compared at 1e-5,
# which the smallest known bug (the erf GELU, 4.7e-4 at x ≈ 2.7) exceeds 40-fold. Model calls:
# sums over up to F = 1536 terms (SmolLM2's FFN) in BLAS's blocked order; measured, the
# solutions differ from the library by at most 1.3e-6·(1 + |library's|) at every call on the
# three models (tests/test_build_it.py keeps it under a fifth of the tolerance), so
# 1e-4 + 1e-4·|library's| leaves a margin of ~75x and still sees an eps or a mask gone wrong.
TOY_RTOL, TOY_ATOL = 1e-5, 1e-5
RTOL, ATOL = 1e-4, 1e-4


def show(a) -> str:
    if isinstance(a, np.ndarray):
        return f"{list(a.shape)} {a.dtype}" if a.size > 8 else np.array2string(a, precision=3)
    if callable(a):
        return "(a function)"
    return type(a).__name__ if dataclasses.is_dataclass(a) else repr(a)


def shown(name, args) -> str:
    names = list(inspect.signature(LIBRARY[name]).parameters)
    return ", ".join(f"{n} {show(a)}" for n, a in zip(names, args))


def arrays_in(a):
    if isinstance(a, np.ndarray):
        return [a]
    if dataclasses.is_dataclass(a):
        return [v for f in dataclasses.fields(a) if isinstance(v := getattr(a, f.name), np.ndarray)]
    return []


def close(a, b, rtol, atol, nan_equal=False) -> bool:
    """|a − b| <= atol + rtol·|b| everywhere (NaN counts as equal only where both are, with nan_equal)."""
    if a.shape != b.shape:
        return False
    near = np.abs(a.astype(np.float64) - b) <= atol + rtol * np.abs(b)
    return bool(np.all(near | (nan_equal & np.isnan(a) & np.isnan(b))))


def judge(name, fn, args, rtol, atol, toy=False) -> str | None:
    """None when ``fn(*args)`` equals the library's part within the tolerance; else what differs,
    in words. Runs ``fn`` on a copy (and says so when it changed that copy: in place)."""
    with np.errstate(all="ignore"):
        want = LIBRARY[name](*args)
        mine_args = copy.deepcopy(args)
        try:
            mine = fn(*mine_args)
        except NotImplementedError:
            raise
        except Exception as error:
            return f"raised {type(error).__name__}: {error}" + raised_hint(name, error)
        names = list(inspect.signature(LIBRARY[name]).parameters)
        for n, a, a0 in zip(names, mine_args, args):
            if any(not np.array_equal(x, x0, equal_nan=True) for x, x0 in zip(arrays_in(a), arrays_in(a0))):
                return (f"changed its input {n} in place (`{n} -= …`, `{n} *= …` or `{n}[…] = …`): the "
                        f"caller still needs it; compute a new array ({n} = {n} − …)")
        if mine is None:
            return "returned None — did you forget `return`?"
        return compare(name, mine, want, args, rtol, atol, toy)


def compare(name, mine, want, args, rtol, atol, toy) -> str | None:
    if name == "sample":
        if isinstance(mine, (bool, np.bool_)) or not isinstance(mine, (int, np.integer)) \
                and not (isinstance(mine, np.ndarray) and mine.shape == () and mine.dtype.kind in "iu"):
            return f"returned {type(mine).__name__} {mine!r}: return one token id, an int"
        if int(mine) == want:
            return None
        z, i = args[0], int(mine)
        below = (f" (its logit {z[i]:.3f} is below the maximum {z[want]:.3f}: greedy takes the largest)"
                 if 0 <= i < len(z) and z[i] < z[want] else "")
        return f"chose {i} where greedy chooses {want}" + (symptom(name, mine, args, 0, 0) or below)
    pair = name == "kv_append"
    if pair and not (isinstance(mine, (tuple, list)) and len(mine) == 2):
        return f"returned {type(mine).__name__}, not a pair (K', V')"
    if not pair and isinstance(mine, tuple):
        return (f"returned a tuple of {len(mine)}: return only the output, {SHAPES[name]}"
                + (" (not the weights too)" if name == "attention" else ""))
    for m, w, what in zip(mine if pair else [mine], want if pair else [want], ["K'", "V'"] if pair else [""]):
        m = np.asarray(m)
        if m.dtype.kind not in "fiu":
            return f"returned {what or 'an array'} of dtype {m.dtype}: the output is float32 numbers"
        if m.shape != w.shape:
            return (f"returned {what + ' of ' if what else ''}shape {list(m.shape)}; it should be "
                    f"{SHAPES[name]} = {list(w.shape)}")
        if not close(m, w, rtol, atol):
            gap = np.abs(m.astype(np.float64) - w)
            worst = "NaN" if np.isnan(gap).all() else f"{np.nanmax(gap):.3g}"
            nan = ", NaN in yours" if np.isnan(m).any() and not np.isnan(w).any() else ""
            return (f"differs from the library's{' in ' + what if what else ''} by up to {worst}{nan}"
                    + symptom(name, mine, args, rtol, atol, toy))
    return None


def symptom(name, mine, args, rtol, atol, toy=False) -> str:
    """" — what the mistake is", when the output is a known bug's or has a known symptom."""
    for message, bug in bugs(name, args):
        try:
            out = bug(*copy.deepcopy(args))
        except Exception:
            continue
        if name == "sample":
            same = int(mine) == out
        elif name == "kv_append":
            same = all(close(np.asarray(m), o, rtol, atol, True) for m, o in zip(mine, out))
        else:
            same = close(np.asarray(mine), np.asarray(out), rtol, atol, True)
        if same:
            return " — " + fill(message, name, args)
    if name == "attention" and np.isnan(np.asarray(mine, np.float64)).any() and np.abs(args[0]).max() > 20:
        return (" — exp overflowed (scores here reach ~100; e^89 is inf in float32): subtract each "
                "row's maximum before exp")
    if name == "attention" and toy:
        q, k, v, mask = args
        found = weight_symptoms(attention_weights(mine, k.shape[2]), mask, 1e-4)
        if found:
            return " — " + found
    return ""
