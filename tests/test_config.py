"""ModelConfig (minillm/config.py): its defaults and the values it refuses, each at its boundary.

Nothing here builds a model: a config is a checked record of numbers, so even the largest sizes
are cheap to try."""
import numpy as np
import pytest

from minillm.config import MAX_SIZE, ModelConfig

SMALL = dict(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
SIZES = ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_ff", "n_kv_heads")


def test_the_defaults_are_gpt2s_with_a_4c_ffn_and_llamas_follow_arch():
    """d_ff = 4 · d_model, n_kv_heads = n_heads, eps 1e-5, RoPE θ = 10000, tied embeddings; the
    four switches follow ``arch``: GPT-2 (LayerNorm, GELU MLP, learned positions, biases) or Llama
    (RMSNorm, SwiGLU, RoPE, no biases)."""
    gpt2 = ModelConfig(**SMALL)
    assert (gpt2.d_ff, gpt2.n_kv_heads, gpt2.norm_eps, gpt2.rope_theta) == (32, 2, 1e-5, 10000.0)
    assert (gpt2.arch, gpt2.tie_embeddings, gpt2.qk_norm, gpt2.head_dim) == \
        ("gpt2", True, False, None)
    assert (gpt2.norm, gpt2.ffn, gpt2.position, gpt2.attn_bias, gpt2.mlp_bias) == \
        ("layernorm", "gelu_mlp", "learned", True, True)
    llama = ModelConfig(**SMALL, arch="llama")
    assert (llama.norm, llama.ffn, llama.position, llama.attn_bias, llama.mlp_bias) == \
        ("rmsnorm", "swiglu", "rope", False, False)
    assert (llama.d_ff, llama.n_kv_heads, llama.rope_theta) == (32, 2, 10000.0)
    assert (gpt2.bos_id, gpt2.eos_id, gpt2.eos_ids, gpt2.d_head) == (None, None, (), 4)


def test_every_size_is_allowed_up_to_the_uint32_maximum_and_refused_beyond():
    """2³² − 1 (GGUF's uint32) is the largest size; 2³² is refused, naming the size."""
    largest = ModelConfig(**{name: 2**32 - 1 for name in SIZES})   # C = H = KV: d_head 1
    assert (largest.d_model, largest.d_head, MAX_SIZE) == (2**32 - 1, 1, 2**32 - 1)
    for name in SIZES:
        message = f"{name} .* out of range: allowed \\[1, 4,294,967,295\\]"
        with pytest.raises(ValueError, match=message):
            ModelConfig(**{**{n: 2**32 - 1 for n in SIZES}, name: 2**32})


def test_qwen3s_switches_need_rmsnorm_and_rope():
    """qk_norm, and a head_dim other than C / H, exist only in the Llama column."""
    for extra in (dict(qk_norm=True), dict(head_dim=8)):
        with pytest.raises(ValueError, match="need norm='rmsnorm' and RoPE"):
            ModelConfig(**SMALL, **extra)
        with pytest.raises(ValueError, match="need norm='rmsnorm' and RoPE"):
            ModelConfig(**SMALL, arch="llama", position="learned", **extra)
        ModelConfig(**SMALL, arch="llama", **extra)                 # allowed
    assert ModelConfig(**SMALL, head_dim=4).head_dim is None       # C / H itself: no switch


def test_the_boolean_switches_are_true_or_false_only():
    """attn_bias, mlp_bias (None: the arch's default), tie_embeddings and qk_norm: an int, a
    string or a NumPy bool is refused, naming the switch."""
    for name, arch in (("attn_bias", "gpt2"), ("mlp_bias", "gpt2"), ("tie_embeddings", "llama"),
                       ("qk_norm", "llama")):
        nones = (None,) if arch == "llama" else ()                 # None: a bias's default
        for bad in (1, 0, "yes", np.bool_(True), *nones):
            with pytest.raises(ValueError, match=f"{name} must be True or False"):
                ModelConfig(**SMALL, arch=arch, **{name: bad})


def test_bos_and_eos_ids_are_integers_from_0():
    config = ModelConfig(**SMALL, bos_id=0, eos_id=0)
    assert (config.bos_id, config.eos_id, config.eos_ids) == (0, 0, (0,))
    for name in ("bos_id", "eos_id"):
        for bad in (-1, True, 1.0, "1"):
            with pytest.raises(ValueError, match=name):
                ModelConfig(**SMALL, **{name: bad})


@pytest.mark.parametrize("name", ["norm_eps", "rope_theta"])
def test_eps_and_theta_are_finite_numbers_above_0_stored_as_python_floats(name):
    for bad in (True, False, "1e-5", None, 0, 0.0, -1.0, float("nan"), float("inf"), [1.0]):
        with pytest.raises(ValueError, match=f"{name} must be a finite number > 0"):
            ModelConfig(**SMALL, **{name: bad})
    for good in (1, np.float32(0.5), np.int64(3), 1e-6):
        value = getattr(ModelConfig(**SMALL, **{name: good}), name)
        assert type(value) is float and value == float(good)


def test_an_odd_head_width_is_refused_only_with_rope():
    """RoPE rotates pairs of dimensions; learned positions do not care: d_head 3 is a GPT-2."""
    assert ModelConfig(vocab_size=10, n_ctx=8, d_model=6, n_heads=2, n_layers=1).d_head == 3
    with pytest.raises(ValueError, match=r"d_head \(3\) must be even"):
        ModelConfig(vocab_size=10, n_ctx=8, d_model=6, n_heads=2, n_layers=1, arch="llama")
    with pytest.raises(ValueError, match=r"d_head \(3\) must be even"):
        ModelConfig(vocab_size=10, n_ctx=8, d_model=6, n_heads=2, n_layers=1, position="rope")


def test_head_dim_is_a_positive_integer_or_none():
    for bad in (8.0, "8", True, 0, -8, 2**32):
        with pytest.raises(ValueError, match="head_dim must be an integer"):
            ModelConfig(**SMALL, arch="llama", head_dim=bad)
    assert ModelConfig(**SMALL, arch="llama", head_dim=8).d_head == 8


@pytest.mark.parametrize("name", SIZES)
def test_every_size_is_a_positive_python_integer(name):
    for bad in (True, 0, -1, 8.0, "8", np.int64(8)):
        with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
            ModelConfig(**{**SMALL, "d_ff": 16, "n_kv_heads": 2, name: bad})


def test_swiglu_with_mlp_biases_is_refused():
    """No published Llama-family checkpoint has FFN biases with SwiGLU: refused, not half-built."""
    assert ModelConfig(**SMALL, arch="llama", mlp_bias=False).ffn == "swiglu"
    with pytest.raises(ValueError, match="mlp_bias=True with a SwiGLU FFN"):
        ModelConfig(**SMALL, arch="llama", mlp_bias=True)


def test_bos_id_is_a_token_of_the_vocabulary():
    assert ModelConfig(**SMALL, bos_id=SMALL["vocab_size"] - 1).bos_id == SMALL["vocab_size"] - 1
    with pytest.raises(ValueError, match="bos_id .* is not a token id"):
        ModelConfig(**SMALL, bos_id=SMALL["vocab_size"])


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}


@pytest.mark.parametrize("bad", ["8", None, [8.0], True, float("nan"), float("inf"), 0, -1.0])
def test_rope_scaling_parameters_are_finite_numbers_above_0(bad):
    """A string, a list, a bool or a non-finite number is a ValueError naming the parameter, not
    a TypeError from the arithmetic that would follow."""
    for name in ("factor", "low_freq_factor", "high_freq_factor"):
        with pytest.raises(ValueError, match=f"rope_scaling {name} must be a finite number > 0"):
            ModelConfig(**SMALL, arch="llama", rope_scaling={**LLAMA3, name: bad})


def test_a_mixture_keeps_its_routing_weights_as_the_softmax_gives_them_by_default():
    """norm_topk_prob defaults to False, as in transformers' Qwen-MoE and OLMoE configs: the k
    chosen experts' weights are their softmax probabilities, not rescaled to sum to 1 (Mixtral's
    files set it True)."""
    moe = ModelConfig(**SMALL, arch="llama", n_experts=4, n_experts_used=2)
    assert moe.norm_topk_prob is False
    assert ModelConfig(**SMALL, arch="llama", n_experts=4, n_experts_used=2,
                       norm_topk_prob=True).norm_topk_prob is True


@pytest.mark.parametrize("bad", ["llama3", [("rope_type", "llama3")], 8.0, True])
def test_rope_scaling_that_is_not_a_dict_is_a_value_error(bad):
    """rope_scaling is a dict (config.json's object) or None: a string, a list of pairs or a number
    is a ValueError naming its type, not an AttributeError from reading it."""
    message = f"rope_scaling must be a dict or None, got {type(bad).__name__}"
    with pytest.raises(ValueError, match=message):
        ModelConfig(**SMALL, arch="llama", rope_scaling=bad)
