"""The plan: which form of each product (``forms.py``) is fastest on THIS machine, measured once.

    plan = plan_for(config)      # read from the user's cache folder, or measured (~5 s) and stored
    plan.stored_by_rows((576, 960))  -> False     # the layout the arena stores this shape in
    use(plan)                    # rows.product now takes the plan's form per shape and row count

Why: which layout and kernel wins depends on the CPU and the BLAS build; a choice tuned on one
machine lost up to 2x on another (issue 44). So the engine measures (``measure.py``) the model's
product shapes at the thread count in use, and keeps the result as a small JSON file:

    {"format": 1, "key": {machine_key()}, "seconds": 4.1,
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
benchmarks that compare, and the test suite). Every message goes to stderr, each at most once.
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
from minillm.engine.arena import PRODUCTS, _side_by_side_group
from minillm.engine.forms import candidates, form
from minillm.engine.machine import machine_key
from minillm.engine.measure import ROWS, measure, pool_for
from minillm.model.params import param_shapes

FORMAT = 1
_SAID: set[str] = set()


@dataclass
class Plan:
    key: dict                   # machine_key() it was measured under
    products: dict              # "CxN" -> {"layout", "forms", "rates"} (measure.py)
    seconds: float = 0.0        # how long measuring took, in total

    def stored_by_rows(self, shape) -> bool | None:
        """Is a [C, N] product stored Wᵀ [N, C] under this plan (None: shape not planned)?"""
        entry = self.products.get(f"{shape[-2]}x{shape[-1]}")
        return None if entry is None else entry["layout"] == "nc"

    def table(self) -> dict:
        """(C, N, layout) -> the form function per row bucket (ROWS), for each layout measured
        at every row count (a model stored the other way gets the fixed rule for that shape)."""
        out = {}
        for name, entry in self.products.items():
            c, n = (int(v) for v in name.split("x"))
            for layout, by_rows in entry["rates"].items():
                best = [max(by_rows[str(m)], key=by_rows[str(m)].get) for m in ROWS]
                out[(c, n, layout)] = tuple(form(f) for f in best)
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
    return Plan(key, products, float(data.get("seconds", 0.0)))


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
    if os.environ.get("MINILLM_PLAN", "").lower() in ("off", "0", "no", "false"):
        return None
    key, shapes = machine_key(), product_shapes(config)
    path = plan_path(key)
    plan = None if remeasure else read_plan(path, key)
    missing = [s for s in shapes if plan is None or f"{s[0]}x{s[1]}" not in plan.products]
    if not missing:
        return plan
    why = writable(path.parent)
    if why is not None:
        say(f"cannot store a plan in {path.parent} ({why}): running un-planned; set "
            f"MINILLM_PLAN_DIR to a writable folder (or MINILLM_PLAN=off)")
        return plan
    model_bytes = 4.0 * sum(math.prod(s) for s in param_shapes(config).values())
    forms = 2 * sum(len(candidates(c, m, 1 << 20)) for c, _ in missing for m in ROWS)
    estimate = forms * 3 * pool_for(key, model_bytes) / 10e9      # ~3 passes a form, ~10 GB/s
    say(f"measuring this machine's products (about {max(1, round(estimate))} s, once)")
    t = time.perf_counter()
    found = measure(missing, key, model_bytes)
    plan = Plan(key, {**(plan.products if plan else {}), **found},
                (plan.seconds if plan else 0.0) + time.perf_counter() - t)
    try:
        write_plan(plan, path)
    except OSError as exc:
        say(f"could not store the plan in {path} ({exc.strerror or exc}); using it for this run")
    return plan


def use(plan: Plan | None) -> None:
    """Make ``rows.product`` take ``plan``'s forms (None: the fixed rule again)."""
    _rows.CHOSEN = {} if plan is None else plan.table()
