"""``minillm serve --plan``: the engine's weights stored for batches of requests by default, for one
stream with ``--plan on``, by the fixed rules with ``off``; the start line says which, and the
plan measured for batches holds both layouts' rates (engine/plan.py, ``MINILLM_PLAN=batch``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.server.test_shutdown import REPO, serve, stream_lines


def started(tmp_path, *flags, plan_env=None):
    """(the start line, the plan files written) of ``serve`` with ``flags``, stopped after one reply."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1",
           "MINILLM_PLAN_DIR": str(tmp_path)}
    env.pop("MINILLM_PLAN", None)                    # (the test suite sets off)
    if plan_env is not None:
        env["MINILLM_PLAN"] = plan_env
    proc, line = serve("--grace", "0", *flags, env=env)
    try:
        out: list = []
        stream_lines(int(line.split("http://127.0.0.1:")[1].split("/")[0]), {"prompt": "Hi", "max_tokens": 3}, out)
        assert out[-1] == "[DONE]"
    finally:
        proc.kill()
        proc.wait(timeout=20)
    return line, [json.loads(p.read_text()) for p in tmp_path.glob("plan-*.json")]


def test_the_default_stores_the_weights_for_batches(tmp_path):
    line, plans = started(tmp_path)
    assert "weights stored for batches (--plan batch)" in line
    [plan] = plans
    assert all(set(entry["rates"]) == {"cn", "nc"} for entry in plan["products"].values())


@pytest.mark.parametrize("flags, env, said", [(("--plan", "on"), None, "for one stream (--plan on)"),
                                              (("--plan", "off"), None, "by the fixed rules"),
                                              ((), "on", "for one stream (--plan on)")])
def test_plan_on_and_off_and_the_environment(tmp_path, flags, env, said):
    line, plans = started(tmp_path, *flags, plan_env=env)
    assert f"weights stored {said}" in line
    if "off" in flags:
        assert plans == []                           # nothing measured, nothing written
    else:
        [plan] = plans
        assert all(len(entry["rates"]) == 1 for entry in plan["products"].values())


def test_an_unknown_plan_is_refused_by_name():
    done = subprocess.run([sys.executable, "-m", "minillm", "serve", "--model", "weights/tiny-llama",
                           "--plan", "fast"], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and "--plan" in done.stderr and "batch" in done.stderr
