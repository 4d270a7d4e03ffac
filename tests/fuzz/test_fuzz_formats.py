"""Mutated files of every format: a clear error or a correct load, never a traceback, a hang,
a big allocation or a silently wrong tokenizer (runner.py; counts in the thorough profile)."""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.io.hf.config import from_hf_dict
from minillm.tokenizer.formats.hf.read import read_hf_json
from tests.fuzz.corpus import FORMATS, _hf_json
from tests.fuzz.profile import CASES_PER_FORMAT
from tests.fuzz.runner import run_format


@pytest.mark.parametrize("name", list(FORMATS))
def test_mutated_files_give_clear_errors(name):
    counts, findings = run_format(name, CASES_PER_FORMAT, seed=0)
    assert not findings, findings[:3]
    assert counts["clear"] > 0                      # the mutations do reach the checks


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
CONFIG_KEYS = ["model_type", "vocab_size", "n_positions", "n_embd", "n_head", "n_layer", "n_inner",
               "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
               "num_key_value_heads", "max_position_embeddings", "rope_theta", "rope_parameters",
               "rope_scaling", "eos_token_id", "bos_token_id", "tie_word_embeddings",
               "sliding_window", "head_dim", "rms_norm_eps", "minillm", "hidden_act"]


@given(st.dictionaries(st.sampled_from(CONFIG_KEYS), JSON, max_size=6),
       st.sampled_from(["gpt2", "llama", "qwen2", "mistral"]))
def test_config_json_fields_of_any_type_are_clear_errors(fields, model_type):
    try:
        from_hf_dict({"model_type": model_type, "vocab_size": 10, "hidden_size": 8,
                                  "num_attention_heads": 2, "num_hidden_layers": 1,
                                  "intermediate_size": 16, **fields})
    except ValueError as exc:
        assert str(exc)


HF_FIELDS = [("model", "dropout"), ("model", "fuse_unk"), ("model", "unk_token"),
             ("model", "ignore_merges"), ("model", "vocab"), ("model", "merges"),
             ("model", "type"), (None, "added_tokens"), (None, "pre_tokenizer"),
             (None, "decoder"), (None, "normalizer")]


@given(st.sampled_from(HF_FIELDS), JSON)
def test_tokenizer_json_fields_of_any_type_are_clear_errors(field, value):
    data = json.loads(json.dumps(_hf_json()))
    parent, key = field
    (data[parent] if parent else data)[key] = value
    try:
        read_hf_json(data)
    except ValueError as exc:
        assert str(exc)
