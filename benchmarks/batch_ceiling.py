"""How much a batch of rows can gain at best with NumPy's products on this machine: the ceilings
``bench_plan.py`` prints beside its B = 8 and speculative figures.

A decode step of B rows multiplies B rows by every weight matrix. One row is memory-bound: it
costs the time to stream the weights (the bound). B rows need B times the arithmetic; while
that fits in the time the weights take to arrive, B rows cost what one does. How much arithmetic
fits is the rate a product of B rows reaches when the matrix is ALREADY in the cache ("hot": one
matrix multiplied again and again), measured here for each of the model's product shapes, each
candidate form (engine/forms.py) and both stored layouts, the best kept (a matrix over 4 MB, the
head, over its first columns, so that it stays in the cache: a tile's rate does not depend on
how many tiles follow it):

    hot(B)      Σ over the step's matrices of bytes / the best hot rate at B rows
    read        the weights' bytes / the streaming bound of the same run
    rest        the one-row step minus its products (norms, attention, Python), as measured

    overlapped  B · t₁ / (max(hot(B), read) + rest)   a kernel that computes while it streams
    serial      B · t₁ / (hot(B) + read + rest)       a sequence of NumPy calls, each either
                                                      streaming or computing (what runs here)

with t₁ the measured one-row step: the most B = 8 can be over B = 1 (and, with τ the tokens
speculative decoding keeps per verifying forward of k + 1 rows, τ · t₁ / (the same for k + 1
rows) the most it can be over plain greedy, its drafting free). Both are ceilings: the rest is
taken at its one-row size, and no product of B rows from memory beats its hot rate.
"""
from __future__ import annotations

import time

import numpy as np

from minillm.engine.forms import candidates, form

HOT_BYTES = 4 << 20     # a wider matrix is timed over its first columns: 4 MB stays in the L3


def hot_rate(shape: tuple[int, int], rows: int, l2_bytes: int, repeats: int = 20) -> tuple[str, float]:
    """(layout:form, GB/s of W) of the fastest candidate form for ``rows`` rows times ONE
    [C, N] matrix of ``shape`` (at most HOT_BYTES of it) kept in the cache (multiplied
    ``repeats`` times a pass)."""
    C, N = shape
    N = min(N, max(32, HOT_BYTES // (4 * C) // 32 * 32))        # (the head: its first columns)
    x = np.random.default_rng(0).standard_normal((rows, C), dtype=np.float32)
    W = np.full((C, N), 0.5, np.float32)
    layouts = {"cn": W, "nc": np.ascontiguousarray(W.T).T}
    best = ("", 0.0)
    for lay, w in layouts.items():
        for name in candidates(C, rows, l2_bytes):
            fn, seconds = form(name), float("inf")
            fn(x, w)                                                  # warm: w into the cache
            for _ in range(3):
                t = time.perf_counter()
                for _ in range(repeats):
                    fn(x, w)
                seconds = min(seconds, (time.perf_counter() - t) / repeats)
            if W.nbytes / seconds / 1e9 > best[1]:
                best = (f"{lay}:{name}", W.nbytes / seconds / 1e9)
    return best


def ceilings(matrices, rows: int, t1: float, products1: float, bound_rate: float,
             l2_bytes: int) -> dict:
    """{"hot", "read", "overlapped", "serial": seconds, "rates": {shape: (form, GB/s)}}: the
    least a step of ``rows`` rows over ``matrices`` (the [C, N] arrays one decode step multiplies
    by) can take, from the measured one-row step ``t1`` whose products alone took ``products1``."""
    rates = {}
    for w in matrices:
        if w.shape not in rates:
            rates[w.shape] = hot_rate(w.shape, rows, l2_bytes)
    nbytes = sum(w.nbytes for w in matrices)
    hot = sum(w.nbytes / (rates[w.shape][1] * 1e9) for w in matrices)
    read, rest = nbytes / bound_rate, max(0.0, t1 - products1)
    return {"hot": hot, "read": read, "rates": rates,
            "overlapped": max(hot, read) + rest, "serial": hot + read + rest}


def ceiling_line(label: str, c: dict, gained: float, t1: float) -> str:
    """One printable line: the hot products' time, the read time, and the most ``label`` can be
    over one row — ``gained`` · t₁ / the step's least time (``gained``: rows decoded, or tokens
    kept per verifying forward)."""
    shapes = ", ".join(f"{C}x{N} {r[1]:.1f} ({r[0]})" for (C, N), r in c["rates"].items())
    return (f"  ceiling {label}: hot products {c['hot'] * 1e3:.1f} ms, weights read "
            f"{c['read'] * 1e3:.1f} ms -> at most {gained * t1 / c['overlapped']:.2f}x overlapped, "
            f"{gained * t1 / c['serial']:.2f}x serial; hot GB/s {shapes}")
