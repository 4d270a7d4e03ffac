"""The parameter arena (one contiguous block, engine/arena.py) and the engine model built on it."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT, load_model
from minillm.engine import EngineGPT, empty_arena, in_arena, to_arena, to_engine
from minillm.model.init import init_params
from minillm.model.params import param_shapes
from tests.conftest import FIXTURES
from tests.model.strategies import tiny_configs

LAYOUTS = ["rows", "decode"]


def seeded_arena(config, seed, layout):
    arena = empty_arena(config, layout)
    init_params(config, np.random.default_rng(seed), params=arena.params)
    return arena


@given(tiny_configs(), st.integers(0, 100))
def test_to_arena_copies_into_one_block_without_gaps_or_overlaps(config, seed):
    """to_arena makes float32 copies that tile one block (every number in exactly one tensor;
    names in param_shapes order); the originals are independent of it afterwards."""
    rng = np.random.default_rng(seed)
    original = {k: v.astype(np.float64) for k, v in init_params(config, rng).named().items()}
    packed = to_arena(original, config, layout="decode").params
    assert in_arena(packed) and list(param_shapes(config)) == list(packed.named())
    block = packed.wte.base                                     # [N] the one allocation
    block[...] = 0.0
    for a in packed.named().values():
        a += 1.0                                                # views: counts into the block
    np.testing.assert_array_equal(block, 1.0)                   # every float in exactly one tensor
    packed = to_arena(original, config, layout="decode").params  # (the counting overwrote it)
    for name, a in packed.named().items():
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, original[name].astype(np.float32))
    original["wte"][...] = 7.0
    assert not np.any(packed.wte == 7.0)


@pytest.mark.parametrize("name", ["gpt2_tiny", "gpt2_untied", "llama_tiny", "llama_untied", "qwen2_tiny"])
def test_loaded_checkpoints_are_engine_arenas_by_default(name):
    model, _ = load_model(FIXTURES / name)
    assert isinstance(model, EngineGPT) and isinstance(model, GPT) and in_arena(model.params)
    assert isinstance(EngineGPT.from_pretrained(FIXTURES / name), EngineGPT)
    plain = GPT.from_pretrained(FIXTURES / name)          # the class it is called on: model/'s code
    assert type(plain) is GPT and not in_arena(plain.params)


def test_wrong_arenas_are_clear_errors():
    model = GPT.from_pretrained(FIXTURES / "gpt2_tiny")
    with pytest.raises(TypeError, match="Arena"):
        EngineGPT(model.config, model.params)
    with pytest.raises(ValueError, match="missing"):
        to_arena({"wte": model.params.wte}, model.config)
    with pytest.raises(ValueError, match="layout"):
        empty_arena(model.config, "plain")


@given(tiny_configs(), st.integers(0, 100))
def test_tied_wte_is_stored_as_the_contiguous_lm_head(config, seed):
    """With tied embeddings the arena stores wte [V, C] as its transpose, so the LM head
    ``wte.T`` [C, V] is one contiguous matrix (streamed at the block matrices' rate); the name,
    shape and values seen through ``named()`` are unchanged, and the lookup still reads rows."""
    arena = seeded_arena(config, seed, "decode")
    wte = arena.params.wte
    assert wte.shape == (config.vocab_size, config.d_model)
    assert wte.T.flags.c_contiguous == config.tie_embeddings
    assert wte.flags.c_contiguous == (not config.tie_embeddings)
    plain = GPT(config, seed=seed)                                    # the same draws, plain arrays
    np.testing.assert_array_equal(wte, plain.params.wte)
    ids = np.arange(5) % config.vocab_size
    np.testing.assert_allclose(EngineGPT(config, arena)(ids), plain(ids), rtol=1e-5, atol=1e-5)


@given(tiny_configs(), st.integers(0, 100), st.sampled_from(LAYOUTS))
def test_a_seed_draws_the_same_weights_whatever_the_arena_layout(config, seed, layout):
    """Regression: drawing straight into the tied wte (stored transposed) filled it in memory
    order, so the same seed gave another model. Each matrix gets the seed's draws in its own
    [in, out] row order, in init_params' documented order (blocks' wq wk wv wo w_up w_down
    w_gate, then wte, wpe, lm_head), in the plain model and in every arena layout."""
    arena, rng = seeded_arena(config, seed, layout), np.random.default_rng(seed)
    plain = GPT(config, seed=seed).params.named()
    for name, a in arena.params.named().items():
        np.testing.assert_array_equal(np.asarray(a), plain[name], err_msg=name)
    resid = 0.02 / np.sqrt(2 * config.n_layers)
    for b in arena.params.blocks:
        for w, s in ((b.attn.wq, 0.02), (b.attn.wk, 0.02), (b.attn.wv, 0.02), (b.attn.wo, resid),
                     (b.ffn.w_up, 0.02), (b.ffn.w_down, resid), (b.ffn.w_gate, 0.02)):
            if w is not None:
                draws = rng.standard_normal(w.shape, dtype=np.float32) * np.float32(s)
                np.testing.assert_array_equal(np.asarray(w), draws)
    draws = rng.standard_normal(arena.params.wte.shape, dtype=np.float32) * np.float32(0.02)
    np.testing.assert_array_equal(np.asarray(arena.params.wte), draws)


@given(tiny_configs(), st.integers(0, 100))
def test_side_by_side_matrices_are_the_parameters_columns(config, seed):
    """The decode layout joins wq|wk|wv (and w_gate|w_up for SwiGLU) into one matrix whose column
    blocks ARE the parameters (editing one edits the other); named() does not list the joined ones."""
    arena = seeded_arena(config, seed, "decode")
    for b, joined in zip(arena.params.blocks, arena.joined):
        a, f = b.attn, b.ffn
        np.testing.assert_array_equal(joined.qkv, np.concatenate([a.wq, a.wk, a.wv], axis=1))
        assert np.shares_memory(joined.qkv, a.wk)
        if f.w_gate is None:
            assert joined.gate_up is None                         # GPT-2: w_up stands alone
        else:
            np.testing.assert_array_equal(joined.gate_up, np.concatenate([f.w_gate, f.w_up], axis=1))
        a.wv[0, 0] = 5.0
        assert joined.qkv[0, a.wq.shape[1] + a.wk.shape[1]] == 5.0    # wv's first column in qkv
    assert set(arena.params.named()) == set(param_shapes(config))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_replaced_joined_parameter_is_refused_and_one_written_in_place_is_used(layout):
    """Regression: a weight REPLACED in params (not written into) left the joined matrix behind,
    and the model used the old numbers. The engine now refuses to run, naming the two ways out;
    writing into the weight in place changes the model."""
    from minillm.config import ModelConfig
    config = ModelConfig(arch="llama", vocab_size=30, n_ctx=16, d_model=64, n_heads=2,
                         n_kv_heads=1, n_layers=1, d_ff=64)
    fast, plain = to_engine(GPT(config, seed=0), layout), GPT(config, seed=0)
    ids = np.arange(10)
    new = np.random.default_rng(1).standard_normal((64, 32), dtype=np.float32)
    fast.params.blocks[0].attn.wk[...] = plain.params.blocks[0].attn.wk[...] = new   # in place
    np.testing.assert_allclose(fast(ids), plain(ids), rtol=1e-5, atol=1e-5)
    fast.params.blocks[0].attn.wk = new.copy()                                     # replaced
    with pytest.raises(ValueError, match=r"replaced.*w\[\.\.\.\] = new.*fast=False"):
        fast(ids)
