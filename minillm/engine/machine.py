"""What a plan is measured FOR: the facts that decide which product form is fastest.

    machine_key()  ->  {"cpu": "AMD EPYC", "caches": {"L1d": 32768, "L2": 1048576, "L3": 33554432},
                        "blas": "scipy-openblas 0.3.31.188.0", "blas_kernel": "SkylakeX",
                        "numpy": "2.4.6", "threads": 1}

A plan measured under one key is used only under the same key (``plan.py``): another CPU, other
caches, another BLAS build (or the same build choosing other kernels), another NumPy or another
thread count may rank the forms differently — the reason the plan exists.

Where each fact comes from, standard library and NumPy only (threadpoolctl is read when it is
installed, never required): the CPU model from /proc/cpuinfo (else ``platform.processor()``), the
cache sizes from /sys/devices/system/cpu/cpu0/cache (else none), the BLAS library and version
from ``numpy.show_config(mode="dicts")``, the kernel OpenBLAS chose at run time and the thread
count from threadpoolctl when present (else the thread variables, else the CPU count: OpenBLAS's
own default).
"""
from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np

CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def cpu_model() -> str:
    """The CPU's model name, e.g. "AMD EPYC" ("unknown CPU" when the system does not say)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith(("model name", "Model")) and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cache_sizes(root: Path = CACHES) -> dict[str, int]:
    """{"L1d": bytes, "L2": bytes, "L3": bytes} of cpu0's data caches ({} when unknown)."""
    sizes = {}
    for index in sorted(root.glob("index*")) if root.is_dir() else ():
        try:
            kind, level = (index / "type").read_text().strip(), (index / "level").read_text().strip()
            size = (index / "size").read_text().strip()               # "32K", "1024K", "32768K"
        except OSError:
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        number = size.rstrip("KMG")
        if number.isdigit():
            sizes[f"L{level}" + ("d" if level == "1" else "")] = int(number) * scale
    return sizes


def blas_library() -> str:
    """The BLAS NumPy was built with, e.g. "scipy-openblas 0.3.31.188.0" (NumPy's own record)."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '?')}"
    except (KeyError, TypeError, ValueError, AttributeError):       # an older NumPy's format
        return "unknown BLAS"


def blas_runtime() -> tuple[str, int]:
    """(the kernel family the BLAS chose for this CPU, its thread count): threadpoolctl's when
    it is installed; otherwise ("not known without threadpoolctl", the thread variables' count
    or the CPU count)."""
    try:
        from threadpoolctl import threadpool_info
        blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    except ImportError:
        blas = []
    if blas:
        return str(blas[0].get("architecture") or "?"), int(blas[0]["num_threads"])
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) >= 1:
            return "not known without threadpoolctl", int(value)
    return "not known without threadpoolctl", os.cpu_count() or 1


def machine_key() -> dict:
    """The facts above as one JSON-ready dict (the plan file's ``key``)."""
    kernel, threads = blas_runtime()
    return {"cpu": cpu_model(), "caches": cache_sizes(), "blas": blas_library(),
            "blas_kernel": kernel, "numpy": np.__version__, "threads": threads}
