"""Notebook 19 (how it learns): run with its parts written (the solutions in place of each
`raise NotImplementedError`), every part passes its check and the notebook runs on the learner's
parts alone, never the library's in their place; the finite differences it checks against are
accurate; and the exercise checker names an attempt that changes its input in place."""
import os
import re
import subprocess
import sys

import numpy as np

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "notebooks"))
from exercises import check  # noqa: E402
from how_it_learns import LIBRARY, numeric_grad, relative_error  # noqa: E402

SOURCE = REPO / "scripts" / "notebook_sources" / "19_how_it_learns.py"
PARTS = ["ce_grad", "linear_backward", "rms_norm_backward", "attention_backward", "adamw_step",
         "lr_schedule", "batch_of", "lora_forward", "lora_grads", "clip_grads"]
STUB = re.compile(r"def (\w+)\(([^)]*)\):\n    raise NotImplementedError[^\n]*")


def with_solutions(source: str) -> str:
    """The source with each stub's body replaced by a call of its solution."""
    head = ("import importlib.util as _u\nclass SOL: pass\n"
            "for _f in ('19_how_it_learns', '15_finetune'):\n"
            "    _s = _u.spec_from_file_location(_f, f'solutions/{_f}.py'); _m = _u.module_from_spec(_s)\n"
            "    _s.loader.exec_module(_m); [setattr(SOL, k, v) for k, v in vars(_m).items() if callable(v)]\n")
    return head + STUB.sub(lambda m: f"def {m[1]}({m[2]}):\n    return SOL.{m[1]}({m[2]})", source)


def test_the_notebook_with_every_part_written_uses_only_the_learners_parts(tmp_path):
    source = SOURCE.read_text(encoding="utf-8")
    assert sorted(m[1] for m in STUB.finditer(source)) == sorted(PARTS)
    script = tmp_path / "nb19.py"
    script.write_text(with_solutions(source), encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "notebooks")])}
    done = subprocess.run([sys.executable, str(script)], cwd=REPO / "notebooks", env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert all(re.search(rf"^✓ {name}: passed \d+ cases$", out, re.M) for name in PARTS), out
    assert "until yours passes" not in out, out                   # no library part in place of one
    crosses = [line for line in out.splitlines() if line.startswith("✗")]
    assert "not written yet" not in out and len(crosses) == 2, out   # only the two mistakes shown
    assert all(line.startswith("✗ ce_grad") and "(hint: " in line for line in crosses), crosses


def test_finite_differences_agree_with_a_known_gradient_to_1e_8():
    x = np.array([[0.3, -1.2], [2.0, 0.5]])
    # f = Σ sin(x) x², f' = cos(x) x² + 2 x sin(x)
    fd = numeric_grad(lambda a: float((np.sin(a) * a * a).sum()), x)
    assert relative_error(fd, np.cos(x) * x * x + 2 * x * np.sin(x)) < 1e-8


def test_an_exercise_attempt_that_changes_its_input_in_place_is_named():
    def ce_grad_in_place(logits, targets):
        logits -= logits.max(axis=-1, keepdims=True)             # the right values, in the input
        return LIBRARY["ce_grad"](logits, targets)

    result = check("ce_grad", ce_grad_in_place, quiet=True)
    assert not result.passed and "changed its input logits in place" in result.message, result.message
    assert check("ce_grad", lambda z, t: LIBRARY["ce_grad"](z - z.max(axis=-1, keepdims=True), t), quiet=True)
