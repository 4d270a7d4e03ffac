"""``top_p`` with p within 1e-12 of 1 on a long tail of tiny probabilities: it returns (its
candidate loop stops at M = V even when the candidates' mass never reaches p) and equals
``top_p_sorted``. Run in a subprocess with a timeout, so a loop that never ends fails the test
instead of hanging the suite."""
import os
import subprocess
import sys
from pathlib import Path

import minillm

CHECK = """
import numpy as np
from minillm.sampling.top_p import top_p, top_p_sorted
z = np.array([0.0] + [-37.5] * 100_000, np.float32)     # [V]  one token, then a tail of e^-37.5
p = 1 - 5e-13                                           # the tail's mass (5e-12) matters here
np.testing.assert_array_equal(top_p(z, p), top_p_sorted(z, p))
print("kept", int(np.isfinite(top_p(z, p)).sum()))
"""


def test_top_p_returns_and_equals_the_definition_for_p_next_to_one():
    env = dict(os.environ, PYTHONPATH=str(Path(minillm.__file__).parent.parent),
               OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kept ")
