"""Timing the candidate forms (``forms.py``) of each product shape on this machine.

    measure_shape((576, 960), Pool(pool_for(key, 600e6)), rows=(1, 2, 8))
      -> {"layout": "cn", "one_row": {"cn": 26.1, "nc": 19.4},
          "forms": {"1": "einsum", "2": "rows", "8": "tiles:128"},
          "rates": {"cn": {"1": {"matmul": 19.8, "einsum": 26.1}, "2": {"matmul": 9.3, …}, …}}}
                                                                            (GB/s of W read)

What is timed is what a decode step does: one row (or M rows) times MANY matrices of the shape,
one after another, so that W comes from where the model's weights would come from. The copies
are views into one buffer of ``pool`` bytes (twice the L3 cache, or the model's own size when that
is smaller: a model that fits in the cache is read from it), seen in both layouts — stored [C, N]
("cn", read as ``x @ W``) and stored Wᵀ [N, C] ("nc", read as ``x @ Wᵀ``). A matrix larger than
the pool is timed over its first columns (the rate per byte of a large matrix does not depend on
its width). The values are 0.5 everywhere: the time of a product does not depend on them.

The forms race in turns (``race``): one pass each over the copies (a warm-up, and the early
stop: a form that has taken twice the best form's time so far is a clear loser: it stops there
and is not repeated — except the fixed rule's own form, always re-timed), then REPEATS rounds of
a pass each, so that other work on the machine falls on every form alike; a form's rate is the
bytes of W per second of its best pass (the least disturbed). First both layouts' ONE-row rates
(the faster of the BLAS's matrix-vector product and NumPy's einsum loop) decide the layout (one
stream decoding is the common case), and only it is timed at 2-32 rows (``MINILLM_PLAN=batch``
times both, and stores each shape the way 2-32 rows read it fastest: ``plan.py``); then per row
count, its fastest form. Each choice leaves the engine's fixed rule (``fixed_rule``: what runs
un-planned) only for a CLEAR win, more than MARGIN (10 %): timing on a busy machine is noisy,
and a plan that follows noise away from the fixed rule is slower than no plan.

Budget: ~8 s for SmolLM2-135M's five shapes on a 2-core machine, 15-22 s for MINILLM_PLAN=batch
(``bench --plan`` prints it).
"""
from __future__ import annotations

import time

import numpy as np

from minillm.engine.arena import PRODUCTS, _side_by_side_group
from minillm.engine.forms import candidates, form
from minillm.model.params import param_shapes

ROWS = (1, 2, 4, 8, 16, 32)       # row buckets: M rows use the first bucket >= M; M > 32 matmul
REPEATS = {1: 4}                  # timed passes per form (one row: the layout's choice) …
DEFAULT_REPEATS = 2               # … other row counts
CLEAR_LOSER = 2.0                 # first pass this many times the best so far: not repeated
MARGIN = 0.10                     # a plan leaves the fixed rule only for a win by more than this


def product_shapes(config) -> list[tuple[int, int]]:
    """The distinct [C, N] shapes the engine multiplies by: the joined Q|K|V and gate|up (as
    one), wo, w_down, the head (tied: wteᵀ); experts' stacked matrices are left to the fixed rule."""
    shapes, out = param_shapes(config), set()
    for name, shape in shapes.items():
        if name.rpartition(".")[2] not in PRODUCTS or len(shape) != 2:
            continue
        group = _side_by_side_group(name, shapes)
        out.add((shape[0], sum(shapes[m][1] for m in group[1])) if group else tuple(shape))
    if config.tie_embeddings:
        out.add(tuple(shapes["wte"][::-1]))                          # [V, C] read as [C, V]
    return sorted(out)


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


def one_pass(fn, x: np.ndarray, mats: list[np.ndarray], give_up: float) -> float:
    """Seconds of one pass of ``fn(x, w)`` over ``mats``; once it has taken ``give_up`` seconds
    it stops, and the time of the whole pass is extrapolated from the matrices done."""
    t, done = time.perf_counter(), 0
    for w in mats:
        fn(x, w)
        done += 1
        if time.perf_counter() - t > give_up:
            break
    return (time.perf_counter() - t) * len(mats) / done


def race(entrants: dict, repeats: int, keep=()) -> dict[str, float]:
    """{name: best seconds per pass} of ``entrants`` {name: (fn, x, mats)}, timed in turns: a
    first pass each (a clear loser — CLEAR_LOSER × the best so far — stops there), then
    ``repeats`` rounds of one pass each for those still within CLEAR_LOSER of the best, and
    always for the names in ``keep`` (the fixed rule's form: a first pass disturbed by other
    work must not make the plan leave it for a form that only looked faster). In turns, so
    that other work on the machine falls on every entrant alike."""
    seconds, best = {}, float("inf")
    for name, (fn, x, mats) in entrants.items():
        seconds[name] = one_pass(fn, x, mats, float("inf") if name in keep else CLEAR_LOSER * best)
        best = min(best, seconds[name])
    for _ in range(repeats):
        for name, (fn, x, mats) in entrants.items():
            if seconds[name] <= CLEAR_LOSER * best or name in keep:
                seconds[name] = min(seconds[name], one_pass(fn, x, mats, float("inf")))
                best = min(best, seconds[name])
    return seconds


def time_forms(shape, layout: str, m: int, pool: Pool, l2_bytes: int) -> dict[str, float]:
    """{form: GB/s of W read} for m rows times the pool's ``shape`` matrices stored ``layout``."""
    mats = pool.matrices(shape, layout)
    x = np.random.default_rng(0).standard_normal((m, shape[0]), dtype=np.float32)   # [m, C]
    fixed = fixed_rule(shape, m)
    seconds = race({name: (form(name), x, mats) for name in candidates(shape[0], m, l2_bytes)},
                   REPEATS.get(m, DEFAULT_REPEATS), keep={fixed[1]} if layout == fixed[0] else ())
    nbytes = sum(w.nbytes for w in mats)
    return {name: round(nbytes / t / 1e9, 2) for name, t in seconds.items()}


def one_row_rates(shape, pool: Pool) -> dict[str, dict[str, float]]:
    """{"cn": {form: GB/s}, "nc": {…}}: one row times the shape's matrices in each layout, by
    each one-row form (``candidates(C, 1, …)``), all raced together."""
    x = np.random.default_rng(0).standard_normal((1, shape[0]), dtype=np.float32)   # [1, C]
    mats = {lay: pool.matrices(shape, lay) for lay in ("cn", "nc")}
    names = candidates(shape[0], 1, 0)
    seconds = race({(lay, f): (form(f), x, mats[lay]) for lay in mats for f in names}, REPEATS[1],
                   keep={fixed_rule(shape)})                          # (layout, "matmul")
    nbytes = {lay: sum(w.nbytes for w in mats[lay]) for lay in mats}
    return {lay: {f: round(nbytes[lay] / seconds[lay, f] / 1e9, 2) for f in names} for lay in mats}


def fixed_rule(shape, m: int = 1) -> tuple[str, str]:
    """(layout, form) the engine takes with no plan (arena.py's "by_width", rows.py): by output
    row when N < C, and then 32-output tiles for 2-32 rows; else [C, N] and the BLAS's product."""
    layout = "nc" if shape[1] < shape[0] else "cn"
    return layout, ("tiles:32" if layout == "nc" and 2 <= m <= 32 else "matmul")


def clearly_best(rates: dict[str, float], default: str) -> str:
    """The fastest of ``rates`` if it beats ``default`` by more than MARGIN, else ``default``: a
    plan leaves the fixed rule only for a clear win (noise on a busy machine is not one)."""
    best = max(rates, key=rates.get)
    return best if default not in rates or rates[best] > (1 + MARGIN) * rates[default] else default


def measure_shape(shape: tuple[int, int], pool: Pool, rows=ROWS, l2_bytes: int = 1 << 20,
                  both: bool = False) -> dict:
    """The plan's entry for one product shape (C, N): both layouts' one-row rates (GB/s, each
    layout's fastest one-row form), the layout chosen for one row (``clearly_best`` against the
    fixed rule's), the rates of every candidate form at each row count in that layout (in both
    with ``both``: for ``batch_layout``) and each row count's form in the chosen layout
    (``clearly_best`` too)."""
    by_form = one_row_rates(shape, pool)
    one_row = {lay: max(rates.values()) for lay, rates in by_form.items()}   # each layout's best
    layout = clearly_best(one_row, fixed_rule(shape)[0])
    rates = {lay: {str(m): time_forms(shape, lay, m, pool, l2_bytes) if m > 1 else
                   by_form[lay] for m in rows}
             for lay in (("cn", "nc") if both else (layout,))}
    return {"layout": layout, "one_row": one_row, "rates": rates,
            "forms": chosen_forms(shape, layout, rates[layout])}


def chosen_forms(shape, layout: str, by_rows: dict) -> dict[str, str]:
    """{rows: form} in ``layout``: per row count the clearly fastest against the fixed rule's."""
    return {m: clearly_best(by_form, fixed_rule(shape, int(m))[1] if layout == fixed_rule(shape)[0]
                            else "matmul") for m, by_form in by_rows.items()}


def batch_layout(shape, rates: dict) -> str:
    """Of the layouts measured at every row count, the one whose fastest forms take clearly
    (MARGIN) less time summed over the row counts 2-32 (seconds per byte: Σ 1 / rate)."""
    speed = {lay: 1 / sum(1 / max(f.values()) for m, f in r.items() if m != "1")
             for lay, r in rates.items()}
    return clearly_best(speed, fixed_rule(shape)[0])


def measure(shapes, key: dict, model_bytes: float, rows=ROWS, both: bool = False,
            budget: float = float("inf")) -> dict:
    """{"CxN": entry} for each shape (``measure_shape``), over one pool of ``pool_for`` bytes;
    no shape is begun once ``budget`` seconds have passed (those are left out)."""
    pool = Pool(pool_for(key, model_bytes))
    l2 = key.get("caches", {}).get("L2", 1 << 20)
    start, found = time.perf_counter(), {}
    for c, n in shapes:
        if time.perf_counter() - start > budget:
            break
        found[f"{c}x{n}"] = measure_shape((c, n), pool, rows, l2, both)
    return found
