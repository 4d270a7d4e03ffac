"""The shipped models (weights/shakespeare, weights/songci) as Hugging Face sees them.

Reference: tests/fixtures/hf_shipped/, made by scripts/make_hf_fixtures.py: the ids that
`tokenizers.Tokenizer.from_file` and `transformers.AutoTokenizer.from_pretrained` give on a
multilingual text (the script checked that both agree), and `AutoModelForCausalLM` logits.
Tolerance for the logits: 1e-4 absolute (float32, two implementations of the same formulas).
"""
import json

import numpy as np
import pytest

from minillm.io.safetensors import load_safetensors
from minillm.loading import load_model
from tests.conftest import FIXTURES, REPO

REFERENCE = json.loads((FIXTURES / "hf_shipped" / "reference.json").read_text(encoding="utf-8"))
LOGITS = load_safetensors(FIXTURES / "hf_shipped" / "logits.safetensors")


@pytest.mark.parametrize("name", ["shakespeare", "songci"])
def test_shipped_model_gives_hugging_face_s_ids_and_logits(name):
    model, tok = load_model(REPO / "weights" / name)
    ref = REFERENCE["models"][name]
    for text, ids in zip(REFERENCE["texts"], ref["ids"]):
        assert tok.encode(text) == ids, text
        assert tok.decode(ids) == text
    logits = model(np.array([ref["logit_ids"]]))                  # [1, T, V]
    assert logits.shape == LOGITS[name].shape
    np.testing.assert_allclose(logits, LOGITS[name], rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", ["shakespeare", "songci"])
def test_shipped_folders_are_in_hugging_face_s_layout(name):
    folder = REPO / "weights" / name
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    assert "format" not in data and data["model"]["type"] == "BPE" and "added_tokens" in data
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    n_ctx = json.loads((folder / "config.json").read_text(encoding="utf-8"))["n_ctx"]
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert config["model_max_length"] == n_ctx
