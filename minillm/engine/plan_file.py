"""The plan's file: where it lives, what a valid one holds, and writing it atomically
(``plan.py`` says what the plan is and when it is read, measured or written).

    plan_path(machine_key())  ->  ~/.cache/minillm/plans/plan-3a89616d7150b116.json

The name is a hash of the machine's key (``machine.py``), so plans of other machines or thread
counts sit beside each other; the key is stored inside too and checked on reading.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from minillm.engine.forms import form
from minillm.engine.measure import ROWS

FORMAT = 2         # 2: one-row rates per form (einsum beside matmul); a format-1 plan is measured again
_SAID: set[str] = set()


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


def check_plan(data, key: dict) -> None:
    """ValueError saying what is wrong unless ``data`` (a file's JSON) is a plan for ``key``."""
    if isinstance(data, dict) and isinstance(data.get("format"), int) and data["format"] < FORMAT:
        raise ValueError(f"written in plan format {data['format']} by an older minillm (this one "
                         f"reads {FORMAT}): measuring again")
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
            c, n = (int(v) for v in name.split("x"))                  # "576x960"
            rates = [entry["one_row"]] + [by_rows[str(m)] for by_rows in entry["rates"].values()
                                          for m in ROWS]
            for by_form in rates:
                [form(f) for f in by_form if f not in ("cn", "nc")]       # known forms only
                if not by_form or not all(float(v) > 0 for v in by_form.values()):
                    raise ValueError                                      # rates: GB/s > 0
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError(f"product {name!r} is not a plan entry") from None
    attention = data.get("attention", {})
    if not isinstance(attention, dict):
        raise ValueError("its attention table is not a table")
    for heads, entry in attention.items():
        try:
            if (len([int(n) for n in heads.split("x")]) != 3 or int(entry["block"]) < 1
                    or not all(float(ms) > 0 for ms in entry["ms"].values())):
                raise ValueError
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError(f"attention {heads!r} is not a plan entry") from None


def write_plan(plan, path: Path) -> None:
    """``plan`` as JSON at ``path``, atomically (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "key": plan.key, "seconds": round(plan.seconds, 2),
            "load": round(plan.load, 2), "products": plan.products, "attention": plan.attention}
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
