"""The parameter arena (one contiguous block) is an explicit step, and GPT uses what it is given."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT
from minillm.model.arena import empty_arena, in_arena, to_arena
from minillm.model.init import init_params
from minillm.model.params import GPTParams, param_shapes
from tests.conftest import FIXTURES
from tests.model.strategies import tiny_configs


@given(tiny_configs(), st.integers(0, 100))
def test_editing_params_after_gpt_init_changes_the_model(config, seed):
    """Regression: GPT.__init__ used to copy the caller's arrays into an arena silently, so
    editing them afterwards no longer changed the model. Now GPT(config, params) uses them as
    given (whether or not they form an arena)."""
    params = init_params(config, np.random.default_rng(seed))
    model = GPT(config, params)
    assert model.params is params
    ids = np.arange(4) % config.vocab_size
    before = model(ids)
    params.norm_f.weight *= 2.0                                  # edit the caller's array
    assert not np.allclose(model(ids), before)


@given(tiny_configs(), st.integers(0, 100))
def test_to_arena_copies_into_one_block_without_gaps_or_overlaps(config, seed):
    """to_arena makes float32 copies that tile one block (every number in exactly one tensor;
    names in param_shapes order); the originals are independent of it afterwards."""
    rng = np.random.default_rng(seed)
    original = {k: v.astype(np.float64) for k, v in init_params(config, rng).named().items()}
    packed = to_arena(original, config, layout="decode")
    assert in_arena(packed) and list(param_shapes(config)) == list(packed.named())
    block = packed.wte.base                                     # [N] the one allocation
    block[...] = 0.0
    for a in packed.named().values():
        a += 1.0                                                # views: counts into the block
    np.testing.assert_array_equal(block, 1.0)                   # every float in exactly one tensor
    packed = to_arena(original, config, layout="decode")       # (the counting overwrote it)
    for name, a in packed.named().items():
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, original[name].astype(np.float32))
    original["wte"][...] = 7.0
    assert not np.any(packed.wte == 7.0)


@given(tiny_configs(), st.integers(0, 100))
def test_seeded_models_are_arenas_drawn_by_init_params(config, seed):
    model = GPT(config, seed=seed)
    assert in_arena(model.params) and in_arena(empty_arena(config))
    for name, a in init_params(config, np.random.default_rng(seed)).named().items():
        np.testing.assert_array_equal(model.params.named()[name], a)


@pytest.mark.parametrize("name", ["gpt2_tiny", "gpt2_untied", "llama_tiny", "llama_untied", "qwen2_tiny"])
def test_loaded_checkpoints_are_arenas(name):
    assert in_arena(GPT.from_pretrained(FIXTURES / name).params)


def test_wrong_params_are_clear_errors():
    config = GPT.from_pretrained(FIXTURES / "gpt2_tiny").config
    params = init_params(config, np.random.default_rng(0))
    with pytest.raises(TypeError, match="GPTParams"):
        GPT(config, params.named())
    params.wte = params.wte[:-1]
    with pytest.raises(ValueError, match="wte has shape"):
        GPT(config, params)
    with pytest.raises(ValueError, match="missing"):
        to_arena({"wte": params.wte}, config)


@given(tiny_configs(), st.integers(0, 100))
def test_tied_wte_is_stored_as_the_contiguous_lm_head(config, seed):
    """With tied embeddings the arena stores wte [V, C] as its transpose, so the LM head
    ``wte.T`` [C, V] is one contiguous matrix (streamed at the block matrices' rate); the name,
    shape and values seen through ``named()`` are unchanged, and the lookup still reads rows."""
    params = init_params(config, np.random.default_rng(seed), layout="decode")
    wte = params.wte
    assert wte.shape == (config.vocab_size, config.d_model)
    assert wte.T.flags.c_contiguous == config.tie_embeddings
    assert wte.flags.c_contiguous == (not config.tie_embeddings)
    packed = to_arena(params, config, layout="decode")
    np.testing.assert_array_equal(packed.wte, wte)
    assert packed.wte.T.flags.c_contiguous == config.tie_embeddings
    plain = GPTParams.from_named({k: np.ascontiguousarray(v) for k, v in params.named().items()},
                                 config)                            # every tensor [in, out] as named
    ids = np.arange(5) % config.vocab_size
    np.testing.assert_allclose(GPT(config, packed)(ids), GPT(config, plain)(ids), rtol=1e-5, atol=1e-6)


@given(tiny_configs(), st.integers(0, 100), st.sampled_from(["plain", "decode"]))
def test_a_seed_draws_the_same_weights_whatever_the_arena_layout(config, seed, layout):
    """Regression: drawing straight into the tied wte (stored transposed) filled it in memory
    order, so the same seed gave another model. Each matrix gets the seed's draws in its own
    [in, out] row order, in init_params' documented order (blocks' wq wk wv wo w_up w_down
    w_gate, then wte, wpe, lm_head)."""
    params, rng = init_params(config, np.random.default_rng(seed), layout=layout), np.random.default_rng(seed)
    resid = 0.02 / np.sqrt(2 * config.n_layers)
    for b in params.blocks:
        for w, s in ((b.attn.wq, 0.02), (b.attn.wk, 0.02), (b.attn.wv, 0.02), (b.attn.wo, resid),
                     (b.ffn.w_up, 0.02), (b.ffn.w_down, resid), (b.ffn.w_gate, 0.02)):
            if w is not None:
                draws = rng.standard_normal(w.shape, dtype=np.float32) * np.float32(s)
                np.testing.assert_array_equal(w, draws)
    draws = rng.standard_normal(params.wte.shape, dtype=np.float32) * np.float32(0.02)
    np.testing.assert_array_equal(params.wte, draws)


@given(tiny_configs(), st.integers(0, 100))
def test_side_by_side_matrices_are_the_parameters_columns(config, seed):
    """The decode layout joins wq|wk|wv (and w_gate|w_up for SwiGLU) into one matrix whose column
    blocks ARE the parameters (editing one edits the other); named() does not list the joined ones."""
    params = init_params(config, np.random.default_rng(seed), layout="decode")
    for b in params.blocks:
        a, f = b.attn, b.ffn
        np.testing.assert_array_equal(a.wqkv, np.concatenate([a.wq, a.wk, a.wv], axis=1))
        assert np.shares_memory(a.wqkv, a.wk)
        if f.w_gate is None:
            assert f.w_gate_up is None                            # GPT-2: w_up stands alone
        else:
            np.testing.assert_array_equal(f.w_gate_up, np.concatenate([f.w_gate, f.w_up], axis=1))
        a.wv[0, 0] = 5.0
        assert a.wqkv[0, a.wq.shape[1] + a.wk.shape[1]] == 5.0    # wv's first column in wqkv
    assert not any("wqkv" in n or "gate_up" in n for n in params.named())


def test_split_columns_gives_each_product_with_its_bias():
    from minillm.model.linear import linear, split_columns
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ws = [rng.standard_normal((4, n)).astype(np.float32) for n in (5, 2, 2)]
    bs = [rng.standard_normal(5).astype(np.float32), None, rng.standard_normal(2).astype(np.float32)]
    parts = split_columns(linear(x, np.concatenate(ws, axis=1)), (5, 2, 2), bs)
    for part, w, b in zip(parts, ws, bs):
        np.testing.assert_allclose(part, linear(x, w, b), rtol=1e-6, atol=1e-6)


@given(tiny_configs(), st.integers(0, 100))
def test_plain_layout_params_have_flat_views(config, seed):
    """Regression: with every arena in the decode layout, a finite-difference check that edits
    ``named()[k].reshape(-1)[i]`` (notebook 10) edited a copy. Seeded models (init_params'
    default, GPT(config, seed=…)) use the plain layout: every tensor C-contiguous, no joins."""
    model = GPT(config, seed=seed)
    for name, a in model.params.named().items():
        assert a.flags.c_contiguous, name
        assert np.shares_memory(a.reshape(-1), a)
    assert all(b.attn.wqkv is None and b.ffn.w_gate_up is None for b in model.params.blocks)
    ids = np.arange(4) % config.vocab_size
    fast = GPT(config, to_arena(model.params, config, layout="decode"))
    np.testing.assert_allclose(fast(ids), model(ids), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="layout"):
        empty_arena(config, "fast")


def test_replacing_a_joined_parameter_in_the_decode_layout_was_silently_ignored():
    from minillm.config import ModelConfig
    config = ModelConfig(arch="llama", vocab_size=30, n_ctx=16, d_model=16, n_heads=4,
                         n_kv_heads=2, n_layers=1, d_ff=24)
    decode = init_params(config, np.random.default_rng(0), layout="decode")
    plain = init_params(config, np.random.default_rng(0))
    rng, ids = np.random.default_rng(1), np.arange(10)
    a, f = decode.blocks[0].attn, decode.blocks[0].ffn
    a.wk = plain.blocks[0].attn.wk = rng.standard_normal(a.wk.shape, dtype=np.float32)  # new arrays
    f.w_up = plain.blocks[0].ffn.w_up = rng.standard_normal(f.w_up.shape, dtype=np.float32)
    np.testing.assert_allclose(GPT(config, decode)(ids), GPT(config, plain)(ids), rtol=1e-5, atol=1e-6)
