"""The "tiled" layout (engine/tiled.py): the same matrix, the same products; not an ndarray,
and saying so instead of editing a copy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT
from minillm.engine.arena import empty_arena, in_arena
from minillm.engine.tiled import TILE, TiledMatrix, rows_at_once, tiled_product
from minillm.model.init import init_params
from minillm.model.params import param_shapes
from tests.conftest import FIXTURES
from tests.model.strategies import tiny_configs


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
    .T; the padding past N stays zero; to_numpy gives the plain array back exactly."""
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
    np.testing.assert_array_equal(t.to_numpy(), W)
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
    gathered = wte[np.array([1, 2])]
    gathered += 1.0                                              # a gather is a new array, as in NumPy


def test_columns_share_the_tiles_and_must_start_on_a_tile():
    t = tiled(np.ones((3, 3 * TILE), np.float32))
    middle = t.columns(TILE, 2 * TILE)
    middle[...] = 5.0
    assert (t.to_numpy()[:, TILE:2 * TILE] == 5).all() and middle.base is t.base
    with pytest.raises(ValueError, match="tile"):
        t.columns(1, TILE)


def test_a_bad_key_or_an_in_place_operator_is_refused_clearly():
    t = tiled(np.ones((3, 4), np.float32))
    with pytest.raises(TypeError, match="contiguous slices"):
        t[::2]
    with pytest.raises(TypeError):
        t += 1.0


@pytest.mark.parametrize("use", [lambda w: w.fill(0.0), lambda w: w.reshape(-1).__setitem__(0, 0.0),
                                 lambda w: w.mean(), lambda w: np.asarray(w), lambda w: w + 1,
                                 lambda w: np.ones((2, w.shape[0]), np.float32) @ w])
def test_a_method_call_on_a_tiled_weight_silently_edited_a_copy(use):
    """Regression: any ndarray method of a TiledMatrix ran on a plain copy, so ``w.fill(0)`` or
    ``w.reshape(-1)[0] = 0`` changed nothing, silently. Now everything but shape, dtype, indexing
    and ``w[...] = …`` raises, naming ``w.to_numpy()`` and ``load_model(path, fast=False)``; a
    read slice is read-only (it is a copy); writing through ``w[...]`` edits the model."""
    model = GPT.from_pretrained(FIXTURES / "llama_tiny")
    w = model.params.blocks[0].attn.wq
    before = w.to_numpy()
    with pytest.raises((TypeError, AttributeError), match=r"w\.to_numpy\(\).*fast=False"):
        use(w)
    np.testing.assert_array_equal(w.to_numpy(), before)
    with pytest.raises(ValueError, match="read-only"):
        w[0:2][...] = 0.0
    w[0:2] = 0.0
    assert not w.to_numpy()[0:2].any() and (w.to_numpy()[2:] == before[2:]).all()
    assert w.shape == before.shape and w.dtype == np.float32 and w.T.shape == before.T.shape


@given(tiny_configs(), st.integers(0, 99))
def test_the_same_seed_draws_the_same_model_in_the_tiled_layout(config, seed):
    plain = init_params(config, np.random.default_rng(seed)).named()
    tiles = empty_arena(config, "tiled").params
    init_params(config, np.random.default_rng(seed), params=tiles)
    assert in_arena(tiles) and list(tiles.named()) == list(param_shapes(config))
    for name, a in tiles.named().items():
        np.testing.assert_array_equal(a.to_numpy() if isinstance(a, TiledMatrix) else a,
                                      plain[name], err_msg=name)


def test_tile_wide_llama_widths_join_qkv_and_gate_up_as_tile_views():
    """Widths that are whole tiles are joined (one product reads wq | wk | wv); editing wq in
    place edits the joined matrix, as in the "decode" layout."""
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=50, n_ctx=8, d_model=64, n_heads=2, n_layers=1, arch="llama",
                         n_kv_heads=1)
    arena = empty_arena(config, "tiled")
    attn, joined = arena.params.blocks[0].attn, arena.joined[0]
    assert isinstance(joined.qkv, TiledMatrix) and joined.qkv.shape == (64, 64 + 2 * 32)
    assert isinstance(joined.gate_up, TiledMatrix)
    attn.wk[...] = 7.0
    assert (joined.qkv.to_numpy()[:, 64:96] == 7).all()


def test_gpt2_widths_that_are_not_whole_tiles_are_tiled_one_by_one():
    """GPT-2 shapes whose head widths are not multiples of 32 (here C = 48): no joined matrix,
    each product its own TiledMatrix."""
    model = GPT.from_pretrained(FIXTURES / "gpt2_tiny")
    assert model.config.d_model % TILE and model.arena.joined[0].qkv is None
    assert isinstance(model.params.blocks[0].attn.wq, TiledMatrix)


def test_many_rows_go_through_in_slices_the_small_kernel_takes():
    """rows · C · TILE <= 2²⁰ per product (tiled.rows_at_once); the slices give the same result."""
    assert [rows_at_once(c) for c in (64, 768, 1536, 3072, 40000)] == [32, 32, 16, 8, 1]
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((3072, 70), dtype=np.float32), rng.standard_normal((21, 3072), dtype=np.float32)
    np.testing.assert_allclose(tiled_product(x, tiled(W)), x.astype(np.float64) @ W, rtol=1e-5, atol=1e-3)
