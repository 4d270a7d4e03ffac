"""softmax, log_softmax and cross_entropy: the formulas, and stable where a naive form is not."""
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minillm.functional import cross_entropy, log_softmax, softmax

rows = hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.floats(-20.0, 20.0, width=32))


def reference_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """float64, written out: exp(x - max) / Σ exp(x - max)."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@given(rows, st.data())
def test_softmax_and_log_softmax_follow_the_formula_along_the_given_axis(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    p = softmax(x, axis=axis)
    assert p.dtype == np.float32 and p.shape == x.shape
    np.testing.assert_allclose(p, reference_softmax(x, axis), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-5)
    np.testing.assert_allclose(log_softmax(x, axis=axis), np.log(reference_softmax(x, axis)),
                               rtol=1e-5, atol=1e-5)


@given(hnp.arrays(np.float32, st.integers(1, 8), elements=st.floats(-30.0, 30.0, width=32)),
       st.sampled_from([1e4, -1e4, 3e38, -3e38, 1e30]))
def test_softmax_is_stable_on_huge_logits(x, shift):
    """Shifting every logit by a huge constant changes nothing (the max is subtracted first): no
    exp overflow to inf / inf = NaN for large logits, no underflow to 0 / 0 for very negative
    ones. Checked with logits whose own scale is huge too."""
    big = (x + np.float32(shift)) if abs(shift) < 1e38 else np.where(x == x.max(), np.float32(shift),
                                                                     np.float32(shift) * 0.5)
    for f in (softmax, log_softmax):
        out = f(big)
        assert np.isfinite(out[out > -np.inf]).all() and not np.isnan(out).any()
    p = softmax(big)
    np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(p, reference_softmax(big), rtol=1e-4, atol=1e-7)
    assert float(log_softmax(big).max()) <= 0.0


def test_masked_entries_get_probability_exactly_zero():
    x = np.array([[0.0, -np.inf, math.log(3.0)], [-np.inf, 5.0, -np.inf]], np.float32)
    np.testing.assert_allclose(softmax(x), [[0.25, 0.0, 0.75], [0.0, 1.0, 0.0]], rtol=1e-6)
    assert softmax(x)[0, 1] == 0.0 and log_softmax(x)[0, 1] == -np.inf


@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(2, 6)),
                  elements=st.floats(-10.0, 10.0, width=32)), st.data())
def test_cross_entropy_is_the_mean_negative_log_probability_of_the_targets(logits, data):
    B, T, V = logits.shape
    targets = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=B * T,
                                          max_size=B * T))).reshape(B, T)
    logp = np.log(reference_softmax(logits))                                 # [B, T, V]
    want = -np.mean(np.take_along_axis(logp, targets[..., None], axis=-1))
    got = cross_entropy(logits, targets)
    assert type(got) is float
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


@given(hnp.arrays(np.float32, st.tuples(st.integers(2, 4), st.integers(1, 6)),
                  elements=st.floats(-5.0, 5.0, width=32)), st.integers(0, 1))
def test_each_row_is_shifted_by_its_own_maximum(x, axis):
    """Rows (along ``axis``) thousands apart in scale: each is normalised on its own, as if it
    were alone — a shift by one maximum for all rows would underflow the low rows to 0 / 0."""
    offsets = np.float32(3000.0) * np.arange(x.shape[1 - axis], dtype=np.float32)   # [n rows]
    big = x + (offsets[:, None] if axis == 1 else offsets[None, :])
    for f in (softmax, log_softmax):
        got = f(big, axis=axis)
        want = np.stack([f(np.take(big, i, axis=1 - axis)) for i in range(x.shape[1 - axis])],
                        axis=1 - axis)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)



@example(np.array([[0.0, 0.0], [0.0, -3e7]], np.float32), [0, 1])
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 8), st.integers(2, 4)),
                  elements=st.floats(-1e7, 1e7, width=32)),
       st.lists(st.integers(0, 1), min_size=8, max_size=8))
def test_cross_entropy_averages_the_float32_log_probabilities_in_float64(logits, targets):
    """The mean over positions loses no digits to float32: the loss is the exact mean (to float64)
    of the float32 log-probabilities picked, even when they are millions apart in scale (a float32
    sum of -3e7 and -0.69 drops the 0.69)."""
    targets = np.array(targets[:len(logits)])                                     # [N]
    picked = log_softmax(logits)[np.arange(len(logits)), targets]                 # [N] float32
    want = -math.fsum(float(v) for v in picked) / len(picked)
    assert cross_entropy(logits, targets) == pytest.approx(want, rel=1e-12, abs=1e-12)
