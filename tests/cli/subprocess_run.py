"""Running ``python -m minillm …`` as a user does: a subprocess, from the repository's root."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def minillm(*argv, stdin: str = "", timeout: float = 120):
    """-> (exit code, stdout, stderr) of ``python -m minillm ARGV``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "minillm", *map(str, argv)], cwd=ROOT, env=env,
                          input=stdin, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr
