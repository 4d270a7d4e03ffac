"""Penalties, logit bias and the allowed set on hand-worked examples (docstrings of penalties.py
and bias.py)."""
import numpy as np
import pytest

from minillm.sampling import (allow_only, frequency_presence_penalty, logit_bias,
                              repetition_penalty, token_counts)


def test_repetition_penalty_divides_positive_and_multiplies_negative():
    z = np.array([2.0, -1.0, 0.5, 0.0], np.float32)
    out = repetition_penalty(z, [0, 1, 1, 3], 2.0)       # seen {0, 1, 3}; counts do not matter
    np.testing.assert_array_equal(out, [1.0, -2.0, 0.5, 0.0])
    assert out.dtype == np.float32


def test_repetition_penalty_below_one_encourages():
    z = np.array([2.0, -1.0], np.float32)
    np.testing.assert_array_equal(repetition_penalty(z, [0, 1], 0.5), [4.0, -0.5])


def test_frequency_and_presence_follow_openai():
    """z - α_f · count - α_p · [count > 0]: [1, 1, 1], history [0, 0, 2], 0.5, 1 -> [-1, 1, -0.5]."""
    z = np.ones(3, np.float32)
    out = frequency_presence_penalty(z, [0, 0, 2], frequency=0.5, presence=1.0)
    np.testing.assert_array_equal(out, [-1.0, 1.0, -0.5])
    assert out.dtype == np.float32


def test_penalties_batched_take_one_history_per_row():
    z = np.zeros((2, 3), np.float32)
    out = frequency_presence_penalty(z, [[0], [2, 2]], frequency=1.0)
    np.testing.assert_array_equal(out, [[-1, 0, 0], [0, 0, -2]])
    np.testing.assert_array_equal(token_counts(np.array([[1, 1], [0, 2]]), (2, 3)),
                                  [[0, 2, 0], [1, 0, 1]])


def test_masked_tokens_stay_masked_under_penalties():
    z = np.array([-np.inf, 1.0], np.float32)
    assert np.isneginf(repetition_penalty(z, [0], 3.0)[0])
    assert np.isneginf(frequency_presence_penalty(z, [0], -2.0, -2.0)[0])


def test_logit_bias_and_allowed_set():
    z = np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(logit_bias(z, {2: 1.5, 0: -np.inf})[1], [-np.inf, 0, 1.5])
    np.testing.assert_array_equal(allow_only(np.array([1, 2, 3], np.float32), [0, 2]),
                                  [1, -np.inf, 3])


@pytest.mark.parametrize("call, error, message", [
    (lambda z: repetition_penalty(z, [0], 0.0), ValueError, "repetition_penalty must be > 0"),
    (lambda z: repetition_penalty(z, [5], 1.2), ValueError, r"token ids must be in \[0, 3\)"),
    (lambda z: frequency_presence_penalty(z, [0], np.nan), ValueError, "frequency_penalty"),
    (lambda z: frequency_presence_penalty(z, [0.5], 1.0), TypeError, "1-D sequence of ints"),
    (lambda z: logit_bias(z, {3: 1.0}), ValueError, "outside the vocabulary"),
    (lambda z: logit_bias(z, {0: np.inf}), ValueError, "finite or -inf"),
    (lambda z: allow_only(z, []), ValueError, "allowed_ids is empty"),
])
def test_bad_penalty_arguments_raise(call, error, message):
    with pytest.raises(error, match=message):
        call(np.zeros(3, np.float32))
