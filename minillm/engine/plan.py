"""The plan: which form of each product (``forms.py``) is fastest on THIS machine, measured once.

    plan = plan_for(config)      # read from the user's cache folder, or measured (~5 s) and stored
    plan.stored_by_rows((576, 960))  -> False     # the layout the arena stores this shape in
    use(plan)                    # rows.product now takes the plan's form per shape and row count

Why: which layout and kernel wins depends on the CPU and the BLAS build; a choice tuned on one
machine lost up to 2x on another (issue 44). So the engine measures (``measure.py``) the model's
product shapes at the thread count in use, and keeps the result as a small JSON file:

    {"format": 1, "key": {machine_key()}, "seconds": 4.1, "load": 0.3,
     "products": {"576x960": {"layout": "cn", "one_row": {"cn": 16.9, "nc": 11.7},
                              "forms": {"1": "matmul", "2": "tiles:32", …},
                              "rates": {"cn": {"1": {"matmul": 16.9}, "2": {…}, …}}}, …}}

in ``$MINILLM_PLAN_DIR``, else ``$XDG_CACHE_HOME/minillm/plans``, else ``~/.cache/minillm/plans``
(never in the repository), named by a hash of the key (``machine.py``: CPU, caches, BLAS, NumPy,
threads). A file whose key is not this machine's is not used; a missing or unreadable one is
measured again; a corrupt one is ignored and said so; shapes a plan lacks (another model) are
measured and added. Written atomically (a temporary file, then ``os.replace``). When no plan can
be written (a read-only folder) the engine runs un-planned — the "by_width" layout and
``rows.py``'s fixed rule — and says why. ``MINILLM_PLAN=off`` does the same, silently (for
benchmarks that compare, and the test suite). ``MINILLM_PLAN=batch`` stores each shape the way
2-32 rows (a batch, speculative decoding's checks) read it fastest instead of one row: both
layouts are then measured (about twice the time). On a machine so busy that measuring overruns
its budget (BUDGET, or 3x the estimate said) the shapes left keep the fixed rule, and are
measured at the next load. Every message goes to stderr, at most once.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from minillm.engine import rows as _rows
from minillm.engine.forms import candidates, form
from minillm.engine.machine import machine_key
from minillm.engine.measure import (ROWS, batch_layout, chosen_forms, measure, pool_for,
                                    product_shapes)
from minillm.model.params import param_shapes

FORMAT = 1
BUDGET = 15.0       # seconds of measuring (or 3x the estimate) before the shapes left are skipped
_SAID: set[str] = set()


@dataclass
class Plan:
    key: dict                   # machine_key() it was measured under
    products: dict              # "CxN" -> {"layout", "forms", "rates"} (measure.py)
    seconds: float = 0.0        # how long measuring took, in total
    load: float = 0.0           # the load average when last measured (a busy machine: noise)
    objective: str = "decode"   # or "batch": MINILLM_PLAN=batch (each shape's layout, below)

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


def say(message: str) -> None:
    """``message`` on stderr, once per process."""
    if message not in _SAID:
        _SAID.add(message)
        print(f"minillm: {message}", file=sys.stderr, flush=True)


def plan_dir() -> Path:
    if os.environ.get("MINILLM_PLAN_DIR"):
        return Path(os.environ["MINILLM_PLAN_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "minillm" / "plans"


def plan_path(key: dict, folder: Path | None = None) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return (folder or plan_dir()) / f"plan-{digest}.json"


def check_plan(data, key: dict) -> Plan:
    """The Plan in ``data`` (a file's JSON); ValueError saying what is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a plan of format {FORMAT}")
    if data.get("key") != key:
        raise ValueError("measured on another machine or setting (its key differs)")
    products = data.get("products")
    if not isinstance(products, dict):
        raise ValueError("no products table")
    for name, entry in products.items():
        try:
            if (entry["layout"] not in entry["rates"] or not set(entry["rates"]) <= {"cn", "nc"}
                    or set(entry["one_row"]) != {"cn", "nc"}):
                raise ValueError
            [int(v) for v in name.split("x")]
            for by_rows in entry["rates"].values():
                for m in ROWS:
                    [form(f) for f in by_rows[str(m)]]
                    max(float(v) for v in by_rows[str(m)].values())
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError(f"product {name!r} is not a plan entry") from None
    return Plan(key, products, float(data.get("seconds", 0.0)), float(data.get("load", 0.0)))


def read_plan(path: Path, key: dict) -> Plan | None:
    """The plan stored at ``path`` for ``key``; None when absent, unreadable, corrupt or for
    another key (the last two said)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None                                                  # missing/unreadable: measure
    try:
        return check_plan(json.loads(text), key)
    except ValueError as exc:                                        # (JSONDecodeError too)
        say(f"ignoring the plan file {path}: {exc}")
        return None


def write_plan(plan: Plan, path: Path) -> None:
    """``plan`` as JSON at ``path``, atomically (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "key": plan.key, "seconds": round(plan.seconds, 2),
            "load": round(plan.load, 2),
            "products": plan.products}
    fd, tmp = tempfile.mkstemp(prefix=".plan-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def writable(folder: Path) -> str | None:
    """None if plans can be written in ``folder``, else why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def plan_for(config, remeasure: bool = False) -> Plan | None:
    """This machine's plan covering ``config``'s product shapes: stored, or measured now (and
    stored); None (un-planned) with ``MINILLM_PLAN=off`` or when it cannot be stored."""
    setting = os.environ.get("MINILLM_PLAN", "").lower()
    if setting in ("off", "0", "no", "false"):
        return None
    objective = "batch" if setting == "batch" else "decode"
    key, shapes = machine_key(), product_shapes(config)
    path = plan_path(key)
    plan = None if remeasure else read_plan(path, key)
    have = {} if plan is None else plan.products
    missing = [s for s in shapes if f"{s[0]}x{s[1]}" not in have
               or (objective == "batch" and len(have[f"{s[0]}x{s[1]}"]["rates"]) < 2)]
    if plan is not None:
        plan.objective = objective
    if not missing:
        return plan
    why = writable(path.parent)
    if why is not None:
        say(f"cannot store a plan in {path.parent} ({why}): running un-planned; set "
            f"MINILLM_PLAN_DIR to a writable folder (or MINILLM_PLAN=off)")
        return plan
    model_bytes = 4.0 * sum(math.prod(s) for s in param_shapes(config).values())
    forms = (2 if objective == "batch" else 1) * sum(len(candidates(c, m, 1 << 20))
                                                    for c, _ in missing for m in ROWS)
    estimate = forms * 3 * pool_for(key, model_bytes) / 10e9      # ~3 passes a form, ~10 GB/s
    say(f"measuring this machine's products (about {max(1, round(estimate))} s, once)")
    t = time.perf_counter()
    found = measure(missing, key, model_bytes, both=objective == "batch",
                    budget=max(BUDGET, 3 * estimate))
    if len(found) < len(missing):
        say(f"measuring stopped after {time.perf_counter() - t:.0f} s (its budget): "
            f"{len(missing) - len(found)} product shape(s) keep the fixed rule until the next load")
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if busy > (os.cpu_count() or 1):
        say(f"the machine was busy during the timing (load average {busy:.1f} on {os.cpu_count()} "
            f"CPUs): the plan may follow noise; `minillm bench --plan MODEL` measures it again")
    plan = Plan(key, {**have, **found}, (plan.seconds if plan else 0.0) + time.perf_counter() - t,
                busy, objective)
    try:
        write_plan(plan, path)
    except OSError as exc:
        say(f"could not store the plan in {path} ({exc.strerror or exc}); using it for this run")
    return plan


def use(plan: Plan | None) -> None:
    """Make ``rows.product`` take ``plan``'s forms (None: the fixed rule again)."""
    _rows.CHOSEN = {} if plan is None else plan.table()
