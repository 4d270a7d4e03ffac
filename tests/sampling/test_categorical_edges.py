"""The weighted draw at its edges: its intervals are half-open, [cdf_{i-1}, cdf_i) (a u landing
exactly on a boundary belongs to the token that starts there, u = 0 to the first token with
weight > 0), and probs are a [V] or [B, V] array, nothing else."""
import itertools

import numpy as np
import pytest

from minillm.sampling import categorical


class FixedU(np.random.Generator):
    """A Generator whose uniform draws are all ``u`` (everything else is PCG64's)."""

    def random(self, size=None, dtype=np.float64, out=None):
        return np.full(size, self.u)


def fixed(u: float) -> FixedU:
    rng = FixedU(np.random.PCG64(0))
    rng.u = u
    return rng


def test_u_on_a_boundary_belongs_to_the_token_that_starts_there():
    """Every 0/1 weight row of up to 6 tokens, u = j / k (k ones, so u · total = j exactly): the
    draw is the (j+1)-th token of weight 1, never a zero-weight token before it, at u = 0 too."""
    for V in range(1, 7):
        for weights in itertools.product([0.0, 1.0], repeat=V):
            ones = np.flatnonzero(weights)
            k = len(ones)
            for j in range(k):
                assert j / k * k == j                               # the boundary, exactly
                assert categorical(np.array(weights), fixed(j / k)) == ones[j], (weights, j)


def test_the_articles_boundaries_open_each_tokens_interval():
    """p = [0.5, 0.25, 0.125, 0.125] (exact in binary): u = 0, .5, .75, .875 start tokens 0 … 3."""
    p = np.array([0.5, 0.25, 0.125, 0.125])
    assert [categorical(p, fixed(u)) for u in (0.0, 0.5, 0.75, 0.875)] == [0, 1, 2, 3]
    batch = categorical(np.stack([p, p[::-1]]), fixed(0.5))         # [0.125, 0.125, 0.25, 0.5]
    assert batch.tolist() == [1, 3]


@pytest.mark.parametrize("probs", [np.float64(1.0), np.ones((2, 2, 3)), np.ones((1, 1, 1, 2))])
def test_a_draw_refuses_probs_with_no_axis_or_more_than_two(probs):
    with pytest.raises(ValueError, match=r"shape \[V\] or \[B, V\]"):
        categorical(probs, np.random.default_rng(0))
