"""AdamW, clipping and the learning-rate schedule against their formulas."""
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minillm.train.optim import AdamW, clip_grad_norm, lr_at


def test_first_adamw_step_moves_each_weight_by_lr_against_the_gradient_sign():
    """At t = 1, m̂ = g and v̂ = g², so the step is lr · g / (|g| + ε) ≈ lr · sign(g)."""
    p = {"w": np.array([[1.0, -2.0]], np.float32), "b": np.array([0.5], np.float32)}
    opt = AdamW(p, weight_decay=0.0)
    opt.step({"w": np.array([[3.0, -0.001]], np.float32), "b": np.array([-7.0], np.float32)}, lr=0.1)
    np.testing.assert_allclose(p["w"], [[0.9, -1.9]], rtol=1e-4)
    np.testing.assert_allclose(p["b"], [0.6], rtol=1e-5)


def test_adamw_matches_the_formula_over_several_steps():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 4))
    p = {"w": w.copy()}
    opt = AdamW(p, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    m = v = np.zeros_like(w)
    for t in range(1, 6):
        g, lr = rng.normal(size=w.shape), 0.01 * t
        opt.step({"w": g.copy()}, lr)
        m, v = 0.9 * m + 0.1 * g, 0.95 * v + 0.05 * g * g
        w = w * (1 - lr * 0.1) - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.95 ** t)) + 1e-8)
    np.testing.assert_allclose(p["w"], w, rtol=1e-12)


def test_weight_decay_skips_biases_and_gains():
    p = {"w": np.ones((2, 2), np.float32), "gain": np.ones(2, np.float32)}
    AdamW(p, weight_decay=0.5).step({"w": np.zeros((2, 2), np.float32),
                                     "gain": np.zeros(2, np.float32)}, lr=0.1)
    np.testing.assert_allclose(p["w"], 0.95)
    np.testing.assert_array_equal(p["gain"], 1.0)
    assert p["w"].dtype == np.float32


@given(st.integers(0, 1000), st.floats(0.01, 10.0))
def test_clipping_bounds_the_norm_and_keeps_the_direction(seed, max_norm):
    rng = np.random.default_rng(seed)
    grads = {"a": rng.normal(size=(3, 2)), "b": rng.normal(size=5) * 10}
    before = {k: g.copy() for k, g in grads.items()}
    norm = clip_grad_norm(grads, max_norm)
    assert math.isclose(norm, math.sqrt(sum((g * g).sum() for g in before.values())))
    after = math.sqrt(sum((g * g).sum() for g in grads.values()))
    assert after <= max_norm * (1 + 1e-9)
    ratio = grads["a"] / before["a"]
    np.testing.assert_allclose(ratio, ratio.flat[0])
    np.testing.assert_allclose(grads["b"] / before["b"], ratio.flat[0])


@given(st.integers(1, 50), st.integers(60, 500))
def test_schedule_warms_up_linearly_then_decays_to_min_lr(warmup, total):
    lrs = [lr_at(s, 1e-3, 1e-4, warmup, total) for s in range(total)]
    np.testing.assert_allclose(lrs[:warmup], 1e-3 * np.arange(1, warmup + 1) / warmup)
    assert math.isclose(lrs[warmup], 1e-3)
    assert all(a >= b for a, b in zip(lrs[warmup:], lrs[warmup + 1:]))   # non-increasing
    assert math.isclose(lrs[-1], 1e-4)
