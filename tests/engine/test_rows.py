"""The "rows" layout (engine/rows.py, engine/arena.py): weights stored Wᵀ [N, C] and seen as
ndarray views [C, N]; the product picked by the number of rows equals the plain product."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.engine import EngineGPT
from minillm import GPT
from minillm.config import ModelConfig
from minillm.engine import empty_arena, to_engine
from minillm.engine import rows
from minillm.engine.rows import TILE, product, rows_at_once
from tests.conftest import FIXTURES


def stored_by_rows(w: np.ndarray) -> np.ndarray:
    """w [C, N] as the arena keeps it: a view of a C-contiguous Wᵀ [N, C]."""
    return np.ascontiguousarray(w.T).T


@given(st.integers(1, 80), st.integers(1, 100), st.integers(1, 40), st.integers(0, 99))
def test_the_product_equals_the_plain_product_for_any_number_of_rows(C, N, M, seed):
    """x [M, C] @ W [C, N] — one matrix-vector product (M = 1), 32-output tiles and the rest
    (2 ≤ M ≤ 32), or the general product (M > 32) — equals the plain product up to float32
    rounding (another order of the same sums: |error| <= 1e-5 · C · max|x||w| is far wider
    than seen), for W stored by rows or not."""
    rng = np.random.default_rng(seed)
    W, x = rng.standard_normal((C, N), dtype=np.float32), rng.standard_normal((M, C), dtype=np.float32)
    for w in (stored_by_rows(W), W):
        y = product(x, w)
        assert y.shape == (M, N) and y.dtype == np.float32
        np.testing.assert_allclose(y, x.astype(np.float64) @ W, rtol=1e-5, atol=1e-5 * C)


def test_tiles_are_taken_for_2_to_32_rows_of_a_matrix_stored_by_rows(monkeypatch):
    """The point of the layout: 2-32 rows by a matrix stored Wᵀ go through the tiles, one row
    and more than 32 rows through one product, and a [C, N]-stored matrix never through tiles."""
    calls = []
    monkeypatch.setattr(rows, "tile_product", lambda x, wt: calls.append(len(x)) or x @ wt.T)
    w = stored_by_rows(np.ones((8, 70), np.float32))
    for M in (1, 2, 32, 33):
        product(np.ones((M, 8), np.float32), w)
    product(np.ones((4, 8), np.float32), np.ones((8, 70), np.float32))
    assert calls == [2, 32]


def test_many_rows_go_through_in_slices_the_small_kernel_takes():
    """rows · C · TILE <= 2²⁰ per product (rows_at_once); the slices give the same result."""
    assert [rows_at_once(c) for c in (64, 768, 1536, 3072, 40000)] == [32, 32, 16, 8, 1]
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((3072, 70), dtype=np.float32), rng.standard_normal((21, 3072), dtype=np.float32)
    np.testing.assert_allclose(product(x, stored_by_rows(W)), x.astype(np.float64) @ W, rtol=1e-5, atol=1e-3)


def test_the_arena_stores_every_product_matrix_by_rows_and_joins_them():
    """wq | wk | wv and w_gate | w_up are row blocks of one stored matrix (views of it; writing
    into wk writes into qkv); the tied wte [V, C] is the head's Wᵀ as it is."""
    config = ModelConfig(vocab_size=50, n_ctx=8, d_model=64, n_heads=2, n_layers=1, arch="llama",
                         n_kv_heads=1)
    arena = empty_arena(config, "rows")
    p, joined = arena.params, arena.joined[0]
    for w in (p.blocks[0].attn.wq, p.blocks[0].attn.wo, p.blocks[0].ffn.w_down, joined.qkv,
              joined.gate_up, p.wte.T):
        assert isinstance(w, np.ndarray) and w.T.flags.c_contiguous, w.shape
    assert joined.qkv.shape == (64, 64 + 2 * 32) and p.wte.flags.c_contiguous
    p.blocks[0].attn.wk[...] = 7.0
    assert (joined.qkv[:, 64:96] == 7).all() and not (joined.qkv[:, :64] == 7).any()


def test_a_loaded_weight_is_an_ndarray_and_its_methods_edit_the_model():
    """A loaded model's weights are ndarray views into its arena: ``w.fill(0)``, ``w += 1`` or
    ``np.asarray(w)[0] = …`` change the model, as on any array (a tiled copy once refused them)."""
    model = EngineGPT.from_pretrained(FIXTURES / "llama_tiny")
    ids = np.array([[1, 2, 3]])
    before = model(ids)
    w = model.params.blocks[0].attn.wq
    assert isinstance(w, np.ndarray) and w.base is not None
    w.fill(0.0)
    assert not model.arena.joined[0].qkv[:, :w.shape[1]].any()
    assert not np.allclose(model(ids), before)


@pytest.mark.parametrize("layout", ["rows", "decode"])
def test_gpt2_widths_that_are_not_whole_tiles_still_join_and_match(layout):
    """GPT-2 shapes (C = 48 here: not a multiple of 32) join Q|K|V too; the rest of N mod 32
    outputs takes its own product; logits equal the plain model's."""
    plain = GPT.from_pretrained(FIXTURES / "gpt2_tiny")
    fast = to_engine(plain, layout)
    assert plain.config.d_model % TILE and fast.arena.joined[0].qkv is not None
    ids = np.array([[5, 9, 2, 7]] * 3)                           # 3 rows at the last position
    np.testing.assert_allclose(fast(ids), plain(ids), rtol=1e-5, atol=1e-5)


def test_the_tile_product_rounded_float64_inputs_to_float32():
    """Regression: the tiles' output was allocated float32, so the training code's float64
    gradient checks (which call the engine's linear) lost precision; it keeps the inputs' type."""
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((5, 40)), rng.standard_normal((3, 5))
    y = product(x, stored_by_rows(W))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, x @ W, rtol=1e-12)
