"""A saved folder names the model family transformers itself names: ``save_pretrained`` of a model
read from a folder transformers wrote (tests/fixtures/*/, see tests/fixtures/README.md) writes the
same ``model_type`` and ``architectures``, so transformers builds the same class for it. (Qwen2,
with biases on Q, K and V only, is "qwen2": Llama's ``attention_bias`` would add an o_proj bias
the file does not hold.)"""
import json

import numpy as np
import pytest

from minillm import GPT
from minillm.io.hf.config import from_hf_dict
from tests.conftest import FIXTURES

WRITTEN_BY_TRANSFORMERS = sorted(path.parent.name for path in FIXTURES.glob("*/config.json")
                                 if (path.parent / "model.safetensors").exists()
                                 and "minillm" not in json.loads(path.read_text(encoding="utf-8")))


def test_the_fixtures_cover_qwen2_and_llama():
    assert {"qwen2_tiny", "llama_tiny", "qwen3_tiny", "gpt2_tiny"} <= set(WRITTEN_BY_TRANSFORMERS)


@pytest.mark.parametrize("name", WRITTEN_BY_TRANSFORMERS)
def test_a_saved_folder_names_the_family_transformers_wrote(name, tmp_path):
    theirs = json.loads((FIXTURES / name / "config.json").read_text(encoding="utf-8"))
    GPT.from_pretrained(FIXTURES / name).save_pretrained(tmp_path)
    ours = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    assert (ours["model_type"], ours["architectures"]) == (theirs["model_type"], theirs["architectures"])


def test_a_saved_qwen2_reads_back_as_qwen2_without_minillms_copy(tmp_path):
    model = GPT.from_pretrained(FIXTURES / "qwen2_tiny")
    assert model.config.attn_bias and not model.config.mlp_bias
    model.save_pretrained(tmp_path)
    written = json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))
    assert from_hf_dict({k: v for k, v in written.items() if k != "minillm"}) == model.config
    again = GPT.from_pretrained(tmp_path)
    ids = np.array([[1, 7, 30, 2]])
    np.testing.assert_array_equal(again(ids), model(ids))
