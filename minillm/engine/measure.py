"""Timing the candidate forms (``forms.py``) of each product shape on this machine.

    measure_shape((576, 960), rows=(1, 2, 8), pool=pool_for(key, 600e6))
      -> {"layout": "cn", "forms": {"1": "matmul", "2": "tiles:32", "8": "tiles:32"},
          "rates": {"cn": {"1": {"matmul": 16.9}, "2": {...}}, "nc": {...}}}   (GB/s of W read)

What is timed is what a decode step does: one row (or M rows) times MANY matrices of the shape,
one after another, so that W comes from where the model's weights would come from. The copies
are views into one buffer of ``pool`` bytes (twice the L3 cache, or the model's own size when that
is smaller: a model that fits in the cache is read from it), seen in both layouts — stored [C, N]
("cn", read as ``x @ W``) and stored Wᵀ [N, C] ("nc", read as ``x @ Wᵀ``). A matrix larger than
the pool is timed over its first columns (the rate per byte of a large matrix does not depend on
its width). The values are 0.5 everywhere: the time of a product does not depend on them.

Each form: one pass over the copies (a warm-up, and the early stop: a form that has taken twice
the best form's time so far is a clear loser: it stops there and is not repeated), then REPEATS passes; its rate
is the bytes of W per second of its best pass (the best pass is the least disturbed by other
work on the machine). First both layouts' ONE-row rates: the higher one's layout is chosen (one
stream decoding is the common case), and only it is timed at 2-32 rows (within 3 %, both are,
and the one faster summed over the row counts is chosen); then per row count, its fastest form.

Budget: ~5 s for SmolLM2-135M's five shapes on a 2-core machine (``bench --plan`` prints it).
"""
from __future__ import annotations

import time

import numpy as np

from minillm.engine.forms import candidates, form

ROWS = (1, 2, 4, 8, 16, 32)       # row buckets: M rows use the first bucket >= M; M > 32 matmul
REPEATS = {1: 4}                  # timed passes per form (one row: the layout's choice) …
DEFAULT_REPEATS = 2               # … other row counts
CLEAR_LOSER = 2.0                 # first pass this many times the best so far: not repeated
TIE = 0.03                        # one-row rates this close: the layouts tie


def pool_for(key: dict, model_bytes: float) -> int:
    """Bytes of matrices each shape is timed over: 2 × L3 (32-128 MiB; 64 MiB if L3 is
    unknown), or the model's bytes when fewer (at least 4 MiB)."""
    l3 = key.get("caches", {}).get("L3", 32 << 20)
    pool = min(max(2 * l3, 32 << 20), 128 << 20)
    return int(max(min(pool, model_bytes), 4 << 20))


class Pool:
    """One buffer of float32 0.5s and views of it as ``copies`` matrices of a shape."""

    def __init__(self, nbytes: int):
        self.buffer = np.full(nbytes // 4, 0.5, np.float32)          # touched now: no page faults later

    def matrices(self, shape: tuple[int, int], layout: str) -> list[np.ndarray]:
        """As many [C, N] matrices (views) as fill the buffer, at least one (N cut to fit)."""
        C, N = shape
        N = min(N, max(1, self.buffer.size // C))
        n = C * N
        views = [self.buffer[i * n:(i + 1) * n] for i in range(max(1, self.buffer.size // n))]
        if layout == "cn":
            return [v.reshape(C, N) for v in views]                   # stored [C, N]
        return [v.reshape(N, C).T for v in views]                     # stored [N, C], seen [C, N]


def best_pass(fn, x: np.ndarray, mats: list[np.ndarray], repeats: int, beat: float) -> float:
    """Best seconds per pass of ``fn(x, w)`` over ``mats``. A clear loser stops early: once a
    first pass has taken CLEAR_LOSER × ``beat`` it ends, and its rate so far is extrapolated."""
    t, done = time.perf_counter(), 0
    for w in mats:
        fn(x, w)
        done += 1
        if time.perf_counter() - t > CLEAR_LOSER * beat:
            return (time.perf_counter() - t) * len(mats) / done      # not repeated
    best = time.perf_counter() - t
    for _ in range(repeats):
        t = time.perf_counter()
        for w in mats:
            fn(x, w)
        best = min(best, time.perf_counter() - t)
    return best


def time_forms(shape, layout: str, m: int, pool: Pool, l2_bytes: int) -> dict[str, float]:
    """{form: GB/s of W read} for m rows times the pool's ``shape`` matrices stored ``layout``."""
    mats = pool.matrices(shape, layout)
    nbytes = sum(w.nbytes for w in mats)
    x = np.random.default_rng(0).standard_normal((m, shape[0]), dtype=np.float32)   # [m, C]
    best, found = float("inf"), {}
    for name in candidates(shape[0], m, l2_bytes):
        seconds = best_pass(form(name), x, mats, REPEATS.get(m, DEFAULT_REPEATS), best)
        best = min(best, seconds)
        found[name] = round(nbytes / seconds / 1e9, 2)
    return found


def measure_shape(shape: tuple[int, int], pool: Pool, rows=ROWS, l2_bytes: int = 1 << 20) -> dict:
    """The plan's entry for one product shape (C, N): both layouts' one-row rates (GB/s), the
    layout chosen, the rates of every candidate form at each row count in that layout (in both
    when they tie at one row) and each row count's fastest form."""
    one_row = {lay: time_forms(shape, lay, 1, pool, l2_bytes)["matmul"] for lay in ("cn", "nc")}
    tie = abs(one_row["cn"] - one_row["nc"]) <= TIE * max(one_row.values())
    rates = {lay: {str(m): time_forms(shape, lay, m, pool, l2_bytes) if m > 1 else
                   {"matmul": one_row[lay]} for m in rows}
             for lay in (("cn", "nc") if tie else (max(one_row, key=one_row.get),))}
    layout = choose_layout(rates)
    chosen = {m: max(by_form, key=by_form.get) for m, by_form in rates[layout].items()}
    return {"layout": layout, "one_row": one_row, "forms": chosen, "rates": rates}


def choose_layout(rates: dict) -> str:
    """The layout measured at every row count; of two, the one with the less time summed over
    the row counts (they tied at one row)."""
    cost = {lay: sum(1 / max(by_form.values()) for by_form in r.values()) for lay, r in rates.items()}
    return min(cost, key=cost.get)


def measure(shapes, key: dict, model_bytes: float, rows=ROWS) -> dict:
    """{"CxN": entry} for every shape (``measure_shape``), over one pool of ``pool_for`` bytes."""
    pool = Pool(pool_for(key, model_bytes))
    l2 = key.get("caches", {}).get("L2", 1 << 20)
    return {f"{c}x{n}": measure_shape((c, n), pool, rows, l2) for c, n in shapes}
