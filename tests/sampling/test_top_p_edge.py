"""Top-p's tolerance is inclusive: a prefix whose mass is exactly (p − TOL) · total has reached p."""
import numpy as np
import pytest

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
