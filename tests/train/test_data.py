"""The data loader: windows, shifts, reproducibility, the split."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minillm.train.data import (bits_per_char, eval_windows, head_lines, random_batch,
                                split_text, token_array)


@given(st.integers(0, 100), st.integers(0, 10_000), st.integers(1, 8), st.integers(1, 16))
def test_targets_are_inputs_shifted_by_one(seed, step, batch, context):
    ids = np.arange(40, dtype=np.uint16)
    x, y = random_batch(ids, batch, context, seed, step)
    assert x.shape == y.shape == (batch, context) and x.dtype == np.int64
    np.testing.assert_array_equal(y, x + 1)                  # consecutive ids: a window is a range
    assert x.min() >= 0 and y.max() < 40


def test_batches_depend_only_on_seed_and_step():
    ids = np.random.default_rng(0).integers(0, 100, 1000)
    a = random_batch(ids, 4, 8, seed=1, step=7)
    random_batch(ids, 4, 8, seed=1, step=3)                 # no hidden state in between
    np.testing.assert_array_equal(a[0], random_batch(ids, 4, 8, seed=1, step=7)[0])
    assert not np.array_equal(a[0], random_batch(ids, 4, 8, seed=1, step=8)[0])


def test_every_start_is_reachable():
    ids = np.arange(10)
    starts = {int(random_batch(ids, 1, 4, 0, s)[0][0, 0]) for s in range(300)}
    assert starts == set(range(6))                          # 0 … N − T − 1


def test_eval_windows_tile_the_array_in_order():
    x, y = eval_windows(np.arange(10), 3)
    np.testing.assert_array_equal(x, [[0, 1, 2], [3, 4, 5], [6, 7, 8]])
    np.testing.assert_array_equal(y, x + 1)


def test_split_is_at_a_line_boundary_and_loses_nothing():
    text = "".join(f"line {i}\n" for i in range(100))
    train, val = split_text(text, 0.1)
    assert train + val == text and train.endswith("\n") and val.startswith("line")
    assert 0.08 < len(val) / len(text) < 0.12


def test_head_lines_and_token_array():
    assert head_lines("ab\ncd\nef\n", 7) == "ab\ncd\n"
    assert token_array([1, 2], 300).dtype == np.uint16
    assert token_array([1, 2], 70_000).dtype == np.int32


def test_bits_per_char():
    assert bits_per_char(np.log(2), n_tokens=10, n_chars=10) == 1.0    # 1 nat·ln2 per char = 1 bit
    assert abs(bits_per_char(np.log(2), 10, 20) - 0.5) < 1e-12


def test_bad_arguments_raise():
    for call in (lambda: split_text("abc\n", 1.5), lambda: random_batch(np.arange(3), 1, 5, 0, 0),
                 lambda: eval_windows(np.arange(3), 5)):
        try:
            call()
        except ValueError:
            continue
        raise AssertionError("expected ValueError")
