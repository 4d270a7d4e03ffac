"""Top-p at its edges: the tolerance at p is inclusive, the bar is p times the row total, the top
token always stays, and a batch is rows, not tokens."""
import numpy as np
import pytest

from minillm.functional import softmax
from minillm.sampling import top_p
from minillm.sampling.top_p import TOL, top_p_sorted


@pytest.mark.parametrize("f", [top_p, top_p_sorted])
def test_a_mass_exactly_tol_below_p_has_reached_it(f):
    """Two equal logits: token 0 alone has mass 0.5 = (p − TOL) · 1 for p = 0.5 + TOL (exactly,
    in float64), so token 1 is dropped; a p just above that keeps it."""
    p = 0.5 + TOL
    assert (p - TOL) * 1.0 == 0.5                                  # the boundary, exactly
    z = np.zeros(2, np.float32)
    np.testing.assert_array_equal(f(z, p), [0.0, -np.inf])
    np.testing.assert_array_equal(f(z, 0.5 + 4 * TOL), [0.0, 0.0])


def a_row_whose_total_rounds_above_1() -> tuple[np.ndarray, float]:
    """100 distinct logits whose float64 softmax sums to more than 1, and a p whose p − TOL is
    exactly the mass of the 64 largest: with p · total, the 65th token still has less than that
    mass before it (kept); compared with p alone it would not."""
    for seed in range(200):
        z = np.random.default_rng(seed).normal(size=100) * 0.3                 # [V] float64
        probs = softmax(z.copy())
        total = probs.sum()
        top64 = np.cumsum(probs[np.argsort(-z, kind="stable")[:64]])[-1]
        p = top64 + TOL
        while p - TOL < top64:
            p = np.nextafter(p, 2.0)
        while p - TOL > top64:
            p = np.nextafter(p, 0.0)
        if p - TOL == top64 and (p - TOL) * total > top64:
            return z, float(p)
    raise AssertionError("no row with a total above 1 among 200 seeds")


@pytest.mark.parametrize("f", [top_p, top_p_sorted])
def test_the_mass_is_compared_with_p_times_the_row_total_not_p(f):
    """The 64 largest tokens hold exactly p − TOL, but the row's total is 1 + 2⁻⁵²: the bar is
    (p − TOL) · total, which they do not reach, so the 65th token is kept too."""
    z, p = a_row_whose_total_rounds_above_1()
    out = f(z, p)
    assert np.isfinite(out).sum() == 65
    np.testing.assert_array_equal(out, top_p_sorted(z, p))


@pytest.mark.parametrize("f", [top_p, top_p_sorted])
@pytest.mark.parametrize("p", [1e-300, 1e-13, TOL, 2 * TOL])
def test_any_p_keeps_the_most_probable_token_even_p_below_tol(f, p):
    """The top token is always kept: for p <= TOL the bar (p − TOL) · total is <= 0, which
    even an empty prefix's mass 0 does not lie below."""
    z = np.array([[0.0, 3.0, 3.0, -1.0], [2.0, -np.inf, 1.0, 0.5]], np.float32)
    np.testing.assert_array_equal(f(z, p), [[-np.inf, 3.0, -np.inf, -np.inf],
                                            [2.0, -np.inf, -np.inf, -np.inf]])


@pytest.mark.parametrize("V", [1, 2, 5])
def test_top_p_on_batches_with_more_rows_than_tokens_equals_the_definition(V):
    """The batch size is not a vocabulary size: a batch of many short rows (B = 70 >> V) gives
    each row its own nucleus, as the sorted definition does (three values of p)."""
    z = np.random.default_rng(V).normal(size=(70, V)).astype(np.float32)      # [B, V]
    for p in (0.3, 0.75, 0.999):
        np.testing.assert_array_equal(top_p(z, p), top_p_sorted(z, p))
