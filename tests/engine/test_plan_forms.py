"""Every form a plan can choose (engine/forms.py, engine/plan.py) computes the readable model's
numbers: each product form equals ``x @ W`` in both stored layouts, and an engine model whose plan
picks any layout and any forms gives the model's logits (nothing here is timed).

Tolerance: products |form − x @ W| ≤ 1e-5 · C · max|x||W| with float64 as the truth (another
order of the same float32 sums); logits as tests/engine/test_engine_equals_model.py:
|engine − model| ≤ 1e-4 · max(1, max |model logits|).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.engine import forms, plan as plans, rows
from minillm.engine.measure import ROWS
from minillm.engine.plan import Plan, product_shapes, use
from tests.model.strategies import random_model, tiny_configs

FORM_NAMES = (st.sampled_from(["matmul", "matmul_t", "einsum", "rows"]) | st.integers(1, 200).map(lambda t: f"tiles:{t}")
              | st.tuples(st.integers(1, 64), st.sampled_from(["", ":1", ":4"])).map(lambda t: f"warm:{t[0]}{t[1]}")
              | st.tuples(st.integers(1, 40), st.sampled_from(["", ":7", ":64"])).map(lambda t: f"rowblocks:{t[0]}{t[1]}"))


def stored(W: np.ndarray, layout: str) -> np.ndarray:
    """W [C, N] stored as [C, N] ("cn") or as Wᵀ [N, C] seen [C, N] ("nc")."""
    return W.copy() if layout == "cn" else np.ascontiguousarray(W.T).T


@given(st.integers(1, 80), st.integers(1, 300), st.integers(1, 40), FORM_NAMES,
       st.sampled_from(["cn", "nc"]), st.integers(0, 99))
def test_every_form_equals_the_plain_product_in_both_layouts(C, N, M, name, layout, seed):
    rng = np.random.default_rng(seed)
    W, x = rng.standard_normal((C, N), dtype=np.float32), rng.standard_normal((M, C), dtype=np.float32)
    y = forms.form(name)(x, stored(W, layout))
    assert y.shape == (M, N) and y.dtype == np.float32 and y.flags.c_contiguous
    np.testing.assert_allclose(y, x.astype(np.float64) @ W, rtol=1e-5, atol=1e-5 * C)


def test_an_unknown_form_and_a_matrix_in_neither_layout_are_refused():
    with pytest.raises(ValueError, match="unknown product form 'tiles:0'"):
        forms.form("tiles:0")
    strided = np.ones((8, 64), np.float32)[:, ::2]                   # [8, 32], neither layout
    with pytest.raises(ValueError, match="tiles need w stored"):
        forms.tiles(np.ones((2, 8), np.float32), strided, 32)


def synthetic_plan(config, layouts: list[str], picks: list[str]) -> Plan:
    """A plan for ``config``'s shapes whose layouts and forms are the given ones (cycled): the
    rates name the pick the fastest, as a measured plan's would."""
    products = {}
    for i, (c, n) in enumerate(product_shapes(config)):
        lay = layouts[i % len(layouts)]
        chosen = {str(m): picks[(i + k) % len(picks)] for k, m in enumerate(ROWS)}
        rates = {m: {f: (2.0 if f == chosen[m] else 1.0) for f in {"matmul", chosen[m]}}
                 for m in chosen}
        products[f"{c}x{n}"] = {"layout": lay, "one_row": {"cn": 1.0, "nc": 1.0},
                                "forms": chosen, "rates": {lay: rates}}
    return Plan({"cpu": "test"}, products)


def assert_close_logits(fast, plain):
    scale = max(1.0, float(np.abs(plain).max()))
    np.testing.assert_allclose(fast, plain, rtol=0, atol=1e-4 * scale)


@given(tiny_configs(), st.lists(st.sampled_from(["cn", "nc"]), min_size=1, max_size=5),
       st.lists(FORM_NAMES, min_size=1, max_size=6), st.integers(1, 12), st.integers(1, 3),
       st.integers(0, 99))
def test_any_plan_gives_the_readable_models_logits(config, layouts, picks, B, T, seed):
    """B·T rows (1-36: every row bucket) through an engine model stored and multiplied as the
    plan says equal the readable model's (minillm/model/) logits."""
    plan = synthetic_plan(config, layouts, picks)
    plain = random_model(config, seed)
    fast = random_model(config, seed, layout=plan)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, min(T, config.n_ctx)))
    use(plan)
    try:
        assert rows.CHOSEN                                           # the plan is what runs
        assert_close_logits(fast(ids), plain(ids))
    finally:
        use(None)
    assert rows.CHOSEN == {}


def test_the_plan_decides_the_stored_layout_of_each_shape():
    """Under a plan the arena stores each planned shape as the plan says; a shape the plan
    lacks keeps the "by_width" rule (N < C: by rows)."""
    from minillm.config import ModelConfig
    from minillm.engine.arena import empty_arena, stored_by_rows
    config = ModelConfig(arch="llama", vocab_size=64, n_ctx=8, d_model=32, n_heads=2,
                         n_kv_heads=1, n_layers=1, d_ff=64, tie_embeddings=True)
    plan = synthetic_plan(config, ["nc"], ["matmul"])
    arena = empty_arena(config, plan)
    assert arena.joined[0].qkv.T.flags.c_contiguous and arena.params.wte.flags.c_contiguous
    assert stored_by_rows(Plan({}, {}), (64, 32)) and not stored_by_rows(Plan({}, {}), (32, 64))
    assert plans.Plan({}, {}).stored_by_rows((3, 4)) is None


@pytest.mark.parametrize("layout", ["cn", "nc"])
def test_tiles_read_the_matrix_in_place_in_either_layout(layout):
    """The tiles are views of W (no copy, the point of the form), whole tiles and the rest."""
    w = stored(np.arange(5 * 70, dtype=np.float32).reshape(5, 70), layout)
    tiles, rest = forms.tile_views(w, 32)
    assert tiles.shape == (2, 5, 32) and rest.shape == (5, 6)
    assert np.shares_memory(tiles, w) and np.shares_memory(rest, w)
    np.testing.assert_array_equal(np.concatenate([*tiles, rest], axis=1), w)
