"""The weighted draw and every sampler's draws, checked against the distributions they claim.

Goodness of fit: Pearson's chi-square over the support, with cells whose expected count is below 5
pooled into one (the usual validity rule), fixed seed 0, N = 20 000 draws, α = 0.001. The critical
value is computed without scipy by the Wilson–Hilferty approximation
    χ²_{df, 1-α} ≈ df · (1 - 2/(9 df) + z_{1-α} · sqrt(2/(9 df)))³,
z from ``statistics.NormalDist`` — checked below against the textbook table (within 4 %; for
df = 1 it is slightly above the true 10.83, i.e. conservative).
"""
import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from minillm.sampling import PRESETS, Sampler, categorical

ALPHA, N = 0.001, 20_000
TABLE_0_001 = {1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515, 10: 29.588}


def chi2_critical(df: int, alpha: float = ALPHA) -> float:
    z = NormalDist().inv_cdf(1 - alpha)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def test_wilson_hilferty_matches_the_table():
    for df, exact in TABLE_0_001.items():
        assert abs(chi2_critical(df) - exact) / exact < 0.04


def chi2_statistic(draws: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic and degrees of freedom, small cells pooled."""
    observed = np.bincount(draws, minlength=len(probs)).astype(np.float64)   # [V]
    expected = N * probs.astype(np.float64)                                   # [V]
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    return float(((obs - exp) ** 2 / exp).sum()), len(exp) - 1


Z = np.array([2.0, 1.5, 1.5, 0.3, -0.5, -1.0, -np.inf, 0.9], np.float32)   # [V=8], id 6 masked
SAMPLERS = {
    "plain": Sampler(), "T=0.5": Sampler(temperature=0.5), "T=2": Sampler(temperature=2.0),
    "top_k=3": Sampler(top_k=3), "top_p=0.8": Sampler(top_p=0.8), "min_p=0.2": Sampler(min_p=0.2),
    "penalties": Sampler(repetition_penalty=1.3, frequency_penalty=0.4, presence_penalty=0.2),
    **{f"preset {name}": s for name, s in PRESETS.items()},
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_draws_fit_the_claimed_distribution(name):
    sampler, history = SAMPLERS[name], [0, 0, 3, 1]
    probs = sampler.probs(Z, history)                                        # [V]
    batch = np.broadcast_to(Z, (N, Z.size))                                  # [N, V]
    draws = sampler.sample(batch, np.random.default_rng(0), [history] * N)   # [N]
    assert (probs[draws] > 0).all(), "a draw fell outside the support"
    stat, df = chi2_statistic(draws, probs)
    if df > 0:
        assert stat < chi2_critical(df), f"{name}: chi2 {stat:.1f} >= {chi2_critical(df):.1f}"


def test_the_articles_intervals_pick_the_token_that_owns_u():
    """p = [0.5, 0.3, 0.15, 0.05]: u in [0, .5) -> 0, [.5, .8) -> 1, [.8, .95) -> 2, else 3."""
    p = np.array([0.5, 0.3, 0.15, 0.05])
    for seed in range(200):
        u = np.random.default_rng(seed).random()
        want = int(np.searchsorted([0.5, 0.8, 0.95], u, side="right"))
        assert categorical(p, np.random.default_rng(seed)) == want


def test_zero_probability_tokens_are_never_drawn():
    p = np.array([[0.0, 0.7, 0.0, 0.3, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    draws = categorical(np.tile(p, (5000, 1)), np.random.default_rng(1))   # [10000]
    assert set(draws[0::2].tolist()) <= {1, 3} and set(draws[1::2].tolist()) == {4}


def test_unnormalised_float32_rows_are_sampled_in_proportion():
    p = np.full(4, 0.2499999, np.float32)                                  # sums to < 1
    draws = categorical(np.broadcast_to(p, (N, 4)), np.random.default_rng(2))
    stat, df = chi2_statistic(draws, np.full(4, 0.25))
    assert stat < chi2_critical(df)


def test_same_seed_same_draws_and_batched_equals_row_by_row():
    probs = Sampler(top_k=5).probs(np.tile(Z, (6, 1)))                      # [6, V]
    a = categorical(probs, np.random.default_rng(7))
    b = categorical(probs, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    rows = [categorical(row, rng) for row in probs]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, rows)


@pytest.mark.parametrize("probs, rng, error, message", [
    (np.array([0.5, 0.5]), 0, TypeError, "rng must be"),
    (np.array([0.5, np.nan]), np.random.default_rng(0), ValueError, "finite"),
    (np.array([0.5, np.inf]), np.random.default_rng(0), ValueError, "finite"),
    (np.array([0.5, -0.1]), np.random.default_rng(0), ValueError, ">= 0"),
    (np.zeros(3), np.random.default_rng(0), ValueError, "sums to 0"),
])
def test_bad_draw_arguments_raise(probs, rng, error, message):
    with pytest.raises(error, match=message):
        categorical(probs, rng)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12),
       st.sampled_from([-900, 1020, 1023]) | st.integers(-900, 1023),
       st.integers(0, 2**32 - 1))
def test_scaling_the_weights_by_a_power_of_two_changes_no_draw(weights, power, seed):
    """The draw depends on the proportions only: weights times 2^power (exact in float64) give
    the same draws with the same seed, even where their sum overflows float64 (2^1023 · V) or is
    tiny. A draw that summed the raw weights would land past the end on an infinite sum."""
    p = np.array(weights)                                                     # [V] float64
    assume(p.max() > 2.0 ** -100)
    scaled = p * 2.0 ** power                                                 # [V] exact
    assume(np.isfinite(scaled).all() and (scaled[p > 0] > 0).all())
    assume(np.array_equal(scaled / 2.0 ** power, p))                          # nothing rounded
    batch = np.broadcast_to(p, (64, len(p)))                                  # [64, V]
    want = categorical(batch, np.random.default_rng(seed))
    np.testing.assert_array_equal(categorical(batch * 2.0 ** power, np.random.default_rng(seed)),
                                  want)
    assert (p[want] > 0).all()


def test_weights_whose_sum_overflows_are_drawn_in_proportion():
    p = np.array([1.5e308, 1.5e308, 0.0, 0.75e308])                           # sum overflows
    draws = categorical(np.broadcast_to(p, (N, 4)), np.random.default_rng(3))
    stat, df = chi2_statistic(draws, np.array([0.4, 0.4, 0.0, 0.2]))
    assert stat < chi2_critical(df) and not (draws == 2).any()


@given(st.lists(st.sampled_from([0.0, 0.0, 1e-300, 1e-30, 0.1, 0.3, 1.0, 7.0, 1e30]),
                min_size=1, max_size=10), st.integers(0, 2**32 - 1))
def test_zero_weight_tokens_are_never_drawn_even_at_u_close_to_one(weights, seed):
    """u · total < total for every u < 1 (round to nearest), so the count of cdf entries <= u ·
    total stops at the last positive weight: trailing zeros included, no fallback needed. Checked
    with the largest u the generator can return (1 - 2^-53) and with random ones."""
    p = np.array(weights)                                                     # [V]
    assume(p.max() > 0)

    class LargestU(np.random.Generator):                                     # u = 1 - 2^-53
        def random(self, size=None, dtype=np.float64, out=None):
            return np.full(size, 1.0 - 2.0 ** -53)

    drawn = categorical(p, LargestU(np.random.PCG64(0)))                     # the top of [0, 1)
    assert p[drawn] > 0 and drawn <= np.flatnonzero(p > 0)[-1]
    draws = categorical(np.broadcast_to(p, (500, len(p))), np.random.default_rng(seed))
    assert (p[draws] > 0).all()


def test_one_row_gives_a_python_int_a_batch_an_int64_array():
    p = np.array([0.2, 0.8], np.float32)
    one = categorical(p, np.random.default_rng(0))
    assert type(one) is int
    many = categorical(np.stack([p, p, p]), np.random.default_rng(0))
    assert type(many) is np.ndarray and many.dtype == np.int64 and many.shape == (3,)
    empty = categorical(np.zeros((0, 2)), np.random.default_rng(0))          # an empty batch
    assert empty.dtype == np.int64 and empty.shape == (0,)


@pytest.mark.parametrize("probs", [np.zeros(0), np.zeros((2, 0)), np.zeros((1, 2, 2)), [0.5, 0.5],
                                   np.array([[0.5, 0.5], [0.0, 0.0]])])
def test_draws_without_tokens_or_of_bad_shape_are_refused(probs):
    with pytest.raises(ValueError, match="probs"):
        categorical(probs, np.random.default_rng(0))
