"""The "tiled" layout (model/tiled.py): the same matrix, the same products, the same model."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT, KVCache
from minillm.model.arena import in_arena, to_arena
from minillm.model.init import init_params
from minillm.model.params import param_shapes
from minillm.model.tiled import TILE, TiledMatrix, tiled_product
from tests.model.strategies import random_model, tiny_configs


def tiled(w: np.ndarray) -> TiledMatrix:
    t = TiledMatrix.empty(*w.shape)
    t[...] = w
    return t


@given(st.integers(1, 80), st.integers(1, 100), st.integers(1, 40), st.integers(0, 99))
def test_tiled_product_equals_the_plain_product(C, N, M, seed):
    """x [M, C] @ W [C, N] through the tiles equals the plain product up to float32 rounding
    (another order of the same sums: |error| <= 1e-5 · C · max|x||w| is far wider than seen)."""
    rng = np.random.default_rng(seed)
    W, x = rng.standard_normal((C, N), dtype=np.float32), rng.standard_normal((M, C), dtype=np.float32)
    y = tiled_product(x, tiled(W))
    assert y.shape == (M, N) and y.dtype == np.float32
    np.testing.assert_allclose(y, x.astype(np.float64) @ W, rtol=1e-5, atol=1e-5 * C)


@given(st.integers(1, 40), st.integers(1, 100), st.data())
def test_slices_read_and_write_like_the_plain_array(C, N, data):
    """w[r0:r1, c0:c1] reads and writes what the plain [C, N] array would, straight or through
    .T; the padding past N stays zero; np.asarray gives the plain array back exactly."""
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    W = rng.standard_normal((C, N), dtype=np.float32)
    t = tiled(W)
    r0, r1 = sorted(data.draw(st.lists(st.integers(0, C), min_size=2, max_size=2)))
    c0, c1 = sorted(data.draw(st.lists(st.integers(0, N), min_size=2, max_size=2)))
    np.testing.assert_array_equal(t[r0:r1, c0:c1], W[r0:r1, c0:c1])
    np.testing.assert_array_equal(t.T[c0:c1, r0:r1], W.T[c0:c1, r0:r1])
    new = rng.standard_normal((r1 - r0, c1 - c0), dtype=np.float32)
    t[r0:r1, c0:c1], W[r0:r1, c0:c1] = new, new
    t.T[c0:c1] = W.T[c0:c1]                                      # rows of the transpose
    np.testing.assert_array_equal(np.asarray(t), W)
    assert t.shape == (C, N) and t.T.shape == (N, C) and len(t) == C
    pad = t.tiles[-1, :, N - (t.tiles.shape[0] - 1) * TILE:]    # [C, columns past N]
    assert not pad.any()


def test_the_transposed_embedding_gathers_rows_by_id():
    W = np.arange(6 * 70, dtype=np.float32).reshape(6, 70)       # [C, V]: wte = Wᵀ [V, C]
    wte = tiled(W).T
    ids = np.array([[0, 33], [69, 32]])
    np.testing.assert_array_equal(wte[ids], W.T[ids])            # [2, 2, C]
    np.testing.assert_array_equal(wte[5], W.T[5])                # one id -> [C]
    np.testing.assert_array_equal(wte[[-1, 40]], W.T[[-1, 40]])  # a list; negative from the end
    with pytest.raises(IndexError, match="ids must be in"):
        wte[70]
    with pytest.raises(ValueError, match="no plain view"):
        np.asarray(wte, copy=False)


def test_columns_share_the_tiles_and_must_start_on_a_tile():
    t = tiled(np.ones((3, 3 * TILE), np.float32))
    middle = t.columns(TILE, 2 * TILE)
    middle[...] = 5.0
    assert (np.asarray(t)[:, TILE:2 * TILE] == 5).all() and middle.base is t.base
    with pytest.raises(ValueError, match="tile"):
        t.columns(1, TILE)


def test_a_bad_key_or_an_in_place_operator_is_refused_clearly():
    t = tiled(np.ones((3, 4), np.float32))
    with pytest.raises(TypeError, match="contiguous slices"):
        t[::2]
    with pytest.raises(TypeError):
        t += 1.0
    assert float(t.mean()) == 1.0                                # reads: a plain copy's methods


@given(tiny_configs(), st.integers(0, 99))
def test_the_same_seed_draws_the_same_model_in_every_layout(config, seed):
    plain = init_params(config, np.random.default_rng(seed), layout="plain").named()
    tiles = init_params(config, np.random.default_rng(seed), layout="tiled")
    assert in_arena(tiles) and list(tiles.named()) == list(param_shapes(config))
    for name, a in tiles.named().items():
        np.testing.assert_array_equal(np.asarray(a), plain[name], err_msg=name)


@given(tiny_configs(), st.integers(0, 99), st.integers(1, 5))
def test_a_tiled_model_gives_the_plain_models_logits(config, seed, B):
    """Prefill and cached decode of B rows, tiled vs plain: equal up to float32 rounding."""
    model = random_model(config, seed)
    fast = GPT(config, to_arena(model.params, config, "tiled"))
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, config.n_ctx))
    np.testing.assert_allclose(fast(ids), model(ids), rtol=1e-4, atol=1e-4)
    caches = [KVCache(config, B, config.n_ctx) for _ in range(2)]
    half = config.n_ctx // 2
    for m, cache in zip((fast, model), caches):
        m(ids[:, :half], cache=cache)
    for t in range(half, config.n_ctx):
        np.testing.assert_allclose(fast(ids[:, t:t + 1], cache=caches[0]),
                                   model(ids[:, t:t + 1], cache=caches[1]), rtol=1e-4, atol=1e-4)


def test_gpt2_widths_join_qkv_and_gate_up_as_tile_views():
    """Widths that are whole tiles are joined (one product reads wq | wk | wv); editing wq in
    place edits the joined matrix, as in the "decode" layout."""
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=50, n_ctx=8, d_model=64, n_heads=2, n_layers=1, arch="llama",
                         n_kv_heads=1)
    p = init_params(config, np.random.default_rng(0), layout="tiled")
    attn, ffn = p.blocks[0].attn, p.blocks[0].ffn
    assert isinstance(attn.wqkv, TiledMatrix) and attn.wqkv.shape == (64, 64 + 2 * 32)
    assert isinstance(ffn.w_gate_up, TiledMatrix)
    attn.wk[...] = 7.0
    assert (np.asarray(attn.wqkv)[:, 64:96] == 7).all()


def test_many_rows_go_through_in_slices_the_small_kernel_takes():
    """rows · C · TILE <= 2²⁰ per product (tiled.rows_at_once); the slices give the same result."""
    from minillm.model.tiled import rows_at_once
    assert [rows_at_once(c) for c in (64, 768, 1536, 3072, 40000)] == [32, 32, 16, 8, 1]
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((3072, 70), dtype=np.float32), rng.standard_normal((21, 3072), dtype=np.float32)
    np.testing.assert_allclose(tiled_product(x, tiled(W)), x.astype(np.float64) @ W, rtol=1e-5, atol=1e-3)
