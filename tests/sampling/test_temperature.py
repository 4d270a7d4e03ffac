"""Temperature: the explainer articles' worked example against the exact formula, and the T -> 0 / T = 1 limits."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.functional import softmax
from minillm.sampling import apply_temperature, greedy
from tests.sampling.strategies import logits


@pytest.mark.parametrize("T, expected", [
    (0.5, [0.684931506849, 0.246575342466, 0.061643835616, 0.006849315068]),
    (1.0, [0.5, 0.3, 0.15, 0.05]),
    (2.0, [0.378996, 0.293569, 0.207585, 0.119849]),
])
def test_the_articles_example_matches_the_exact_formula(T, expected):
    """p = [0.5, 0.3, 0.15, 0.05] (the explainer articles), p_i^(1/T) / Σ_j p_j^(1/T):

    T = 0.5: [0.25, 0.09, 0.0225, 0.0025] / 0.365 = [0.684932, 0.246575, 0.061644, 0.006849]
    T = 2:   [0.707107, 0.547723, 0.387298, 0.223607] / 1.865734
           = [0.378996, 0.293569, 0.207585, 0.119849]
    The article's own rounded figures ([0.64, 0.24, 0.09, 0.03] and [0.33, 0.27, 0.22, 0.18]) are
    illustrations and do not follow from the formula; the formula is what is implemented.
    """
    p = np.array([0.5, 0.3, 0.15, 0.05])
    formula = p ** (1 / T) / (p ** (1 / T)).sum()                     # [4]
    np.testing.assert_allclose(formula, expected, atol=1e-6)
    got = softmax(apply_temperature(np.log(p).astype(np.float32), T))   # [4]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, formula, rtol=1e-5)               # float32 tolerance


@given(logits(batch=True))
def test_temperature_zero_is_argmax_with_lowest_id(z):
    out = apply_temperature(z, 0.0)
    want = np.argmax(z, axis=-1)
    assert (np.isfinite(out).sum(axis=-1) == 1).all()
    np.testing.assert_array_equal(np.argmax(out, axis=-1), want)
    np.testing.assert_array_equal(greedy(z), want)


@given(st.lists(st.integers(-20, 20), min_size=1, max_size=8, unique=True))
def test_small_temperature_tends_to_argmax(values):
    z = np.array(values, np.float32) / 2                       # distinct, at least 0.5 apart
    probs = softmax(apply_temperature(z, 1e-2))
    assert float(probs[np.argmax(z)]) > 1 - 1e-6              # e^(-50) is lost in float32


@given(logits(batch=True))
def test_temperature_one_is_the_identity(z):
    np.testing.assert_allclose(softmax(apply_temperature(z, 1.0)), softmax(z), rtol=1e-6,
                               atol=1e-7)


def test_tiny_temperature_does_not_overflow():
    z = np.array([30.0, 29.0, -5.0], np.float32)
    out = apply_temperature(z, 1e-40)                          # rounds to 0 in float32: greedy
    assert np.isfinite(out).sum() == 1 and out.dtype == np.float32
    probs = softmax(apply_temperature(z, 1e-30))               # 30 / 1e-30 would overflow
    np.testing.assert_array_equal(probs, [1.0, 0.0, 0.0])


@pytest.mark.parametrize("T", [-0.1, float("nan"), float("inf")])
def test_bad_temperature_raises(T):
    with pytest.raises(ValueError, match="temperature"):
        apply_temperature(np.zeros(3, np.float32), T)


def test_a_checked_temperature_is_a_python_float():
    from minillm.sampling.temperature import check_temperature
    for t in (1, np.float32(0.5), np.int64(2), 0):
        assert type(check_temperature(t)) is float and check_temperature(t) == float(t)
