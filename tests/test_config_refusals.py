"""ModelConfig refuses switches that have nothing to act on: RoPE scaling without RoPE, and
layers without RoPE (SmolLM3's nope_layers) that are not distinct indices of existing layers."""
import pytest

from minillm.config import ModelConfig

SMALL = dict(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=4)
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 64}


def test_rope_scaling_without_rope_is_refused():
    with pytest.raises(ValueError, match="rope_scaling needs position='rope'"):
        ModelConfig(**SMALL, arch="gpt2", rope_scaling=LLAMA3)
    assert ModelConfig(**SMALL, arch="llama", rope_scaling=LLAMA3).rope_scaling == LLAMA3


@pytest.mark.parametrize("nope", [(-1,), (0, -4), {0}, frozenset({1}), range(1), 0, "0", None])
def test_nope_layers_must_be_a_tuple_or_list_of_layer_indices_from_0(nope):
    with pytest.raises(ValueError, match="nope_layers must be distinct layer indices in"):
        ModelConfig(**SMALL, arch="llama", nope_layers=nope)


def test_nope_layers_may_name_any_existing_layer_and_are_kept_sorted():
    assert ModelConfig(**SMALL, arch="llama", nope_layers=[3, 0]).nope_layers == (0, 3)
