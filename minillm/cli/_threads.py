"""The command line uses ONE BLAS thread unless the user chose: why, and how it is set in time.

On a machine whose cores are busy, OpenBLAS's extra threads spin-wait for each other: one
training step was seen to stall 20-25 s with 2 threads where 1 thread ran 4x faster. One thread
is also what the speed figures in the README were measured with. A user who sets
``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS`` keeps their setting.

subtle: OpenBLAS reads the variable once, when NumPy loads it, and ``python -m minillm`` (like the
console script) has imported ``minillm`` -- hence NumPy -- before any command code runs. So when
the variable was not set, it is set and the program starts again, once, in a fresh interpreter
(``os.execv``: same process id, same stdin/stdout; the environment now stops the loop). The price
is importing minillm (and NumPy) a second time: about a second on a busy 2-core machine, nothing
when the variable is already set.
"""
from __future__ import annotations

import os
import subprocess
import sys

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
HELP = ("BLAS threads: 1 unless OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set (extra BLAS "
        "threads spin-wait and can run several times slower on a busy machine)")


def blas_threads_chosen() -> bool:
    return any(os.environ.get(name) for name in THREAD_VARIABLES)


def use_one_blas_thread() -> None:
    """Make sure BLAS runs on one thread unless the user chose; may restart the program."""
    if blas_threads_chosen():
        return
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    if "numpy" not in sys.modules:              # BLAS not loaded yet: the variables suffice
        return
    argv = [sys.executable, *sys.orig_argv[1:]]   # as started: `-m minillm …` or the script,
    # with the interpreter's own flags (-X utf8, …) kept
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":                         # no exec on Windows: run it and pass the code on
        raise SystemExit(subprocess.call(argv))
    os.execv(sys.executable, argv)
