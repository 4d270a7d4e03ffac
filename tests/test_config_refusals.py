"""ModelConfig refuses switches that have nothing to act on: RoPE scaling without RoPE, and
layers without RoPE (SmolLM3's nope_layers) that are not distinct indices of existing layers; and
it accepts every value inside each boundary (a mixture's expert counts, head_dim spelling C / H)."""
import pytest
from hypothesis import assume, example, given, strategies as st

from minillm.config import MAX_SIZE, ModelConfig

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


@given(arch=st.sampled_from(["gpt2", "llama"]), n_heads=st.integers(1, 4),
       d_head=st.integers(1, 4), n_layers=st.integers(1, 3))
@example(arch="gpt2", n_heads=4, d_head=1, n_layers=1)            # D = 1: a GPT-2 may have it
@example(arch="gpt2", n_heads=1, d_head=MAX_SIZE, n_layers=1)     # and D = 2³² − 1
def test_head_dim_equal_to_c_over_h_is_the_same_config_as_none(arch, n_heads, d_head, n_layers):
    """``head_dim = C / H`` only spells out the default width, so it is accepted wherever the
    default is (also D = 1 and D = 2³² − 1, odd widths a GPT-2 may have) and gives an equal config."""
    assume(arch == "gpt2" or d_head % 2 == 0)                     # RoPE needs an even width
    sizes = dict(vocab_size=8, n_ctx=8, d_model=n_heads * d_head, n_heads=n_heads, d_ff=8,
                 n_layers=n_layers, arch=arch)
    spelled = ModelConfig(**sizes, head_dim=d_head)
    assert spelled == ModelConfig(**sizes)
    assert (spelled.head_dim, spelled.d_head) == (None, d_head)


@given(n_experts=st.integers(1, MAX_SIZE + 2), used=st.integers(-1, MAX_SIZE + 2))
@example(n_experts=MAX_SIZE, used=MAX_SIZE)
@example(n_experts=MAX_SIZE, used=1)
@example(n_experts=MAX_SIZE + 1, used=1)
@example(n_experts=1, used=1)
@example(n_experts=4, used=5)
def test_a_mixture_takes_1_to_n_experts_up_to_the_uint32_maximum(n_experts, used):
    """A mixture of experts is accepted exactly when 1 <= n_experts_used <= n_experts <= 2³² − 1
    (the largest size GGUF stores), both ends included; a config builds no experts, so even the
    largest count is cheap to check."""
    allowed = 1 <= used <= n_experts <= MAX_SIZE
    if allowed:
        c = ModelConfig(**SMALL, arch="llama", n_experts=n_experts, n_experts_used=used)
        assert (c.n_experts, c.n_experts_used) == (n_experts, used)
    else:
        with pytest.raises(ValueError, match="a mixture of experts needs ints"):
            ModelConfig(**SMALL, arch="llama", n_experts=n_experts, n_experts_used=used)


@given(layer=st.integers(0, 3), spelling=st.sampled_from([bool, float, str]))
def test_nope_layers_are_python_integers_not_bools_floats_or_strings(layer, spelling):
    """A layer index is a Python int: True, 1.0 or "1" naming layer 1 are refused (a bool or a
    float would otherwise pass the range check and compare equal to the layer's index)."""
    with pytest.raises(ValueError, match="nope_layers must be distinct layer indices in"):
        ModelConfig(**SMALL, arch="llama", nope_layers=(spelling(layer),))
    assert ModelConfig(**SMALL, arch="llama", nope_layers=(layer,)).nope_layers == (layer,)


@given(d_model=st.integers(1, 40), n_heads=st.integers(1, 8), half=st.integers(1, 8))
def test_with_a_head_dim_d_model_need_not_be_a_multiple_of_n_heads(d_model, n_heads, half):
    """Heads as wide as ``head_dim`` (Qwen3) need no C / H: any d_model and n_heads go together;
    without it, C must split into H equal heads."""
    head_dim = 2 * half
    c = ModelConfig(vocab_size=8, n_ctx=8, d_model=d_model, n_heads=n_heads, n_layers=1,
                    arch="llama", head_dim=head_dim)
    assert c.d_head == head_dim
    if d_model % n_heads:
        with pytest.raises(ValueError, match="must be divisible by n_heads"):
            ModelConfig(vocab_size=8, n_ctx=8, d_model=d_model, n_heads=n_heads, n_layers=1,
                        arch="llama")
