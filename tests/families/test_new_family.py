"""Adding a model family is one new file: ``minillm/families/<name>.py``.

The package is copied to a temporary folder and ONE file is added there: a hypothetical family,
a Llama variant with its own config.json ``model_type`` ("toy_qwen") and one switch
(``qk_norm``). A subprocess on that copy loads tests/fixtures/qwen3_tiny's weights under that
model_type and runs a forward: the logits must be transformers' Qwen3 logits (the fixture's
``expected.safetensors``, within 1e-4 · max |logit|, as tests/model/test_families.py), so the
switch the new file declares is the one that ran. The package as shipped refuses the name.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minillm
from minillm.io.hf.config import from_hf_dict
from minillm.io.safetensors import load_safetensors
from tests.conftest import FIXTURES

TOY = textwrap.dedent('''\
    """Toy Qwen: a Llama with per-head q/k norms, under a model_type of its own (a test's)."""
    from minillm.families import Family

    FAMILY = Family(name="toy_qwen", base="llama", summary="Llama with qk_norm",
                    hf_model_types=("toy_qwen",), hf_architecture="ToyQwenForCausalLM",
                    switches={"qk_norm": True})
    ''')

FORWARD = textwrap.dedent('''\
    import sys
    import numpy as np
    from minillm import load_model
    from minillm.families import families
    from minillm.io.safetensors import load_safetensors
    model, _ = load_model(sys.argv[1], fast=sys.argv[2] == "engine")
    ids = load_safetensors(sys.argv[3])["ids"]
    np.save(sys.argv[4], model(ids))
    print(model.config.qk_norm, " ".join(families()))
    ''')


@pytest.fixture(scope="module")
def copy_with_toy(tmp_path_factory):
    """minillm/ copied with one new file, families/toy_qwen.py; qwen3_tiny as a "toy_qwen"."""
    where = tmp_path_factory.mktemp("family")
    root = os.path.dirname(minillm.__file__)
    shutil.copytree(root, where / "minillm", ignore=shutil.ignore_patterns("__pycache__"))
    (where / "minillm" / "families" / "toy_qwen.py").write_text(TOY, encoding="utf-8")
    folder = where / "toy_qwen_tiny"
    folder.mkdir()
    shutil.copy(FIXTURES / "qwen3_tiny" / "model.safetensors", folder)
    config = json.loads((FIXTURES / "qwen3_tiny" / "config.json").read_text(encoding="utf-8"))
    config.update(model_type="toy_qwen", architectures=["ToyQwenForCausalLM"])
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return where, folder, config


def test_the_package_as_shipped_refuses_the_new_model_type(copy_with_toy):
    _, _, config = copy_with_toy
    with pytest.raises(ValueError, match="unsupported model_type 'toy_qwen'"):
        from_hf_dict(config)


@pytest.mark.parametrize("form", ["model", "engine"])
def test_one_new_family_file_loads_its_model_type_and_runs_its_switch(copy_with_toy, form):
    where, folder, _ = copy_with_toy
    expected = FIXTURES / "qwen3_tiny" / "expected.safetensors"
    out = where / f"logits_{form}.npy"
    env = dict(os.environ, PYTHONPATH=str(where), PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", FORWARD, str(folder), form, str(expected),
                           str(out)], cwd=where, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    qk_norm, names = done.stdout.split(maxsplit=1)
    assert qk_norm == "True" and "toy_qwen" in names.split()
    want = load_safetensors(expected)["logits"]                        # [2, 24, V]
    assert np.abs(np.load(out) - want).max() <= 1e-4 * float(np.abs(want).max())
