"""Greedy: the argmax, lowest id on ties, an int for one row and an int64 array for a batch."""
import numpy as np
import pytest
from hypothesis import given

from minillm.sampling import greedy
from minillm.sampling.greedy import greedy_mask
from tests.sampling.strategies import logits, order_desc


@given(logits(batch=True))
def test_greedy_is_the_first_of_the_order_lowest_id_on_ties(z):
    want = [order_desc(row)[0] for row in z]
    got = greedy(z)
    np.testing.assert_array_equal(got, want)
    assert [greedy(row) for row in z] == want
    out = greedy_mask(z)                                           # the same, in logit space
    assert (np.isfinite(out).sum(axis=-1) == 1).all()
    np.testing.assert_array_equal(out[np.arange(len(z)), want], z[np.arange(len(z)), want])


def test_greedy_ties_go_to_the_lowest_id():
    assert greedy(np.array([1.0, 3.0, 3.0], np.float32)) == 1
    assert greedy(np.array([-np.inf, 2.0, 2.0, 2.0])) == 1
    np.testing.assert_array_equal(greedy(np.zeros((2, 4), np.float32)), [0, 0])


def test_one_row_gives_a_python_int_a_batch_an_int64_array():
    one = greedy(np.array([0.1, 0.9], np.float32))
    assert type(one) is int and one == 1
    many = greedy(np.array([[0.1, 0.9], [2.0, 1.0]], np.float32))
    assert type(many) is np.ndarray and many.dtype == np.int64
    np.testing.assert_array_equal(many, [1, 0])
    empty = greedy(np.zeros((0, 3), np.float32))                   # an empty batch
    assert empty.dtype == np.int64 and empty.shape == (0,)


@pytest.mark.parametrize("bad", [np.zeros(0, np.float32), np.zeros((1, 0), np.float32)])
def test_greedy_refuses_rows_without_tokens(bad):
    with pytest.raises(ValueError, match="V >= 1"):
        greedy(bad)
