"""The plan: which form of each product (``forms.py``) is fastest on THIS machine, measured once.

    plan = plan_for(config)      # read from the user's cache folder, or measured (~8 s) and stored
    plan.stored_by_rows((576, 960))  -> False     # the layout the arena stores this shape in
    use(plan)                    # rows.product now takes the plan's form per shape and row count,
                                 # a prompt's attention the plan's block of queries

Why: which layout and kernel wins depends on the CPU and the BLAS build; a choice tuned on one
machine lost up to 2x on another (issue 44). So the engine measures (``measure.py``) the model's
product shapes at the thread count in use, and keeps the result as a small JSON file:

    {"format": 2, "key": {machine_key()}, "seconds": 4.1, "load": 0.3,
     "products": {"576x960": {"layout": "cn", "one_row": {"cn": 26.1, "nc": 19.4},
                              "forms": {"1": "einsum", "2": "tiles:32", …},
                              "rates": {"cn": {"1": {"matmul": 16.9, "einsum": 26.1},
                                               "2": {…}, …}}}, …},
     "attention": {"9x3x64": {"block": 64, "ms": {"16": 7.1, "32": 6.2, …}}}}

in ``$MINILLM_PLAN_DIR``, else ``$XDG_CACHE_HOME/minillm/plans``, else ``~/.cache/minillm/plans``
(never in the repository), named by a hash of the key (``machine.py``: CPU, caches, BLAS, NumPy,
threads). A file whose key is not this machine's is not used; a missing or unreadable one is
measured again; a corrupt one is ignored and said so; shapes a plan lacks (another model) are
measured and added. Written atomically (a temporary file, then ``os.replace``: ``plan_file.py``). When no plan can
be written (a read-only folder) the engine runs un-planned — the "by_width" layout and
``rows.py``'s fixed rule — and says why. ``MINILLM_PLAN=off`` does the same, silently (for
benchmarks that compare, and the test suite). ``MINILLM_PLAN=batch`` stores each shape the way
2-32 rows (a batch, speculative decoding's checks) read it fastest instead of one row: both
layouts are then measured (about twice the time). On a machine so busy that measuring overruns
its budget (BUDGET, or 3x the estimate said) the shapes left keep the fixed rule, and are
measured at the next load. Every message goes to stderr, at most once.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from minillm.engine import layers as _layers, rows as _rows
from minillm.engine.forms import candidates, form
from minillm.engine.machine import machine_key
from minillm.engine.plan_file import (FORMAT, check_plan, plan_dir, plan_path, say,  # noqa: F401
                                      writable, write_plan)            # (FORMAT, plan_dir: re-exported)
from minillm.engine.measure import (ROWS, batch_layout, chosen_forms, measure, pool_for,
                                    product_shapes)
from minillm.engine.measure_attention import attention_heads, measure_attention
from minillm.model.params import param_shapes

SETTINGS = ("", "on", "batch", "off")     # MINILLM_PLAN's values ("": unset)
BUDGET = 15.0       # seconds of measuring (or 3x the estimate) before the shapes left are skipped


@dataclass
class Plan:
    key: dict                   # machine_key() it was measured under
    products: dict              # "CxN" -> {"layout", "forms", "rates"} (measure.py)
    seconds: float = 0.0        # how long measuring took, in total
    load: float = 0.0           # the load average when last measured (a busy machine: noise)
    objective: str = "decode"   # or "batch": MINILLM_PLAN=batch (each shape's layout, below)
    attention: dict = field(default_factory=dict)   # "HxKVxD" -> {"block", "ms"} (measure_attention.py)

    def layout(self, shape) -> str | None:
        """"cn" or "nc" for a [C, N] product (None: not planned): the layout chosen for one row
        ("decode"), or with objective "batch" and both layouts measured, for 2-32 rows."""
        entry = self.products.get(f"{shape[-2]}x{shape[-1]}")
        if entry is None:
            return None
        if self.objective == "batch" and len(entry["rates"]) == 2:
            return batch_layout(shape[-2:], entry["rates"])
        return entry["layout"]

    def stored_by_rows(self, shape) -> bool | None:
        """Is a [C, N] product stored Wᵀ [N, C] under this plan (None: shape not planned)?"""
        layout = self.layout(shape)
        return None if layout is None else layout == "nc"

    def table(self) -> dict:
        """(C, N, layout) -> the form function per row bucket (ROWS), for each layout measured
        at every row count (a model stored the other way gets the fixed rule for that shape)."""
        out = {}
        for name, entry in self.products.items():
            c, n = (int(v) for v in name.split("x"))
            for layout, by_rows in entry["rates"].items():
                chosen = chosen_forms((c, n), layout, by_rows)           # {rows: form}
                out[(c, n, layout)] = tuple(form(chosen[str(m)]) for m in ROWS)
        return out


def read_plan(path: Path, key: dict) -> Plan | None:
    """The plan stored at ``path`` for ``key``; None when absent, unreadable, corrupt or for
    another key (the last two said)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None                                                  # missing/unreadable: measure
    try:
        data = json.loads(text)
        check_plan(data, key)
    except ValueError as exc:                                        # (JSONDecodeError too)
        say(f"ignoring the plan file {path}: {exc}")
        return None
    return Plan(key, data["products"], float(data.get("seconds", 0.0)),
                float(data.get("load", 0.0)), attention=data.get("attention", {}))


def plan_for(config, remeasure: bool = False) -> Plan | None:
    """This machine's plan covering ``config``'s product shapes: stored, or measured now (and
    stored; ``remeasure``: measured now in any case); None (un-planned) with ``MINILLM_PLAN=off``
    or when it cannot be stored. Another MINILLM_PLAN value than on, batch, off: ValueError."""
    setting = os.environ.get("MINILLM_PLAN", "").strip().lower()
    if setting not in SETTINGS:
        raise ValueError(f"MINILLM_PLAN must be one of {', '.join(SETTINGS[1:])} (or unset: on), "
                         f"got {os.environ['MINILLM_PLAN']!r}")
    if setting == "off":
        return None
    objective = "batch" if setting == "batch" else "decode"
    key, shapes = machine_key(), product_shapes(config)
    path = plan_path(key)
    plan = read_plan(path, key)                                      # (other models' shapes kept)
    have = {} if plan is None else plan.products
    missing = [s for s in shapes if remeasure or f"{s[0]}x{s[1]}" not in have
               or (objective == "batch" and len(have[f"{s[0]}x{s[1]}"]["rates"]) < 2)]
    heads = "x".join(str(n) for n in attention_heads(config))          # "9x3x64"
    attention = {} if plan is None else plan.attention
    if plan is not None:
        plan.objective = objective
    if not missing and heads in attention and not remeasure:
        return plan
    why = writable(path.parent)
    if why is not None:
        say(f"cannot store a plan in {path.parent} ({why}): running un-planned; set "
            f"MINILLM_PLAN_DIR to a writable folder (or MINILLM_PLAN=off)")
        return plan
    model_bytes = 4.0 * sum(math.prod(s) for s in param_shapes(config).values())
    forms = (2 if objective == "batch" else 1) * sum(len(candidates(c, m, 1 << 20))
                                                    for c, _ in missing for m in ROWS)
    estimate = forms * 3 * pool_for(key, model_bytes) / 6e9       # ~3 passes a form at ~6 GB/s
    # (the slow forms' passes weigh most: SmolLM2's plan took 8 s, its batch plan 16-22 s, on a
    # 2-core EPYC, where this says 9 and 17; at 10 GB/s it said 3 and 8)
    say(f"measuring this machine's products (about {max(1, round(estimate))} s, once)")
    t = time.perf_counter()
    found = measure(missing, key, model_bytes, both=objective == "batch",
                    budget=max(BUDGET, 3 * estimate)) if missing else {}
    attention = {**attention, heads: measure_attention(attention_heads(config))}
    if len(found) < len(missing):
        say(f"measuring stopped after {time.perf_counter() - t:.0f} s (its budget): "
            f"{len(missing) - len(found)} product shape(s) keep the fixed rule until the next load")
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if busy > (os.cpu_count() or 1):
        say(f"the machine was busy during the timing (load average {busy:.1f} on {os.cpu_count()} "
            f"CPUs): the plan may follow noise; `minillm bench --plan MODEL` measures it again")
    seconds = (plan.seconds if plan else 0.0) + time.perf_counter() - t
    plan = Plan(key, {**have, **found}, round(seconds, 2), round(busy, 2), objective,
                attention)                                          # (as stored)
    try:
        write_plan(plan, path)
    except OSError as exc:
        say(f"could not store the plan in {path} ({exc.strerror or exc}); using it for this run")
    return plan


def use(plan: Plan | None) -> None:
    """Make ``rows.product`` take ``plan``'s forms and the engine's attention its query blocks
    (None: the fixed rules again)."""
    _rows.CHOSEN = {} if plan is None else plan.table()
    _layers.BLOCKS = {} if plan is None else {
        tuple(int(n) for n in heads.split("x")): int(entry["block"])
        for heads, entry in plan.attention.items()}
