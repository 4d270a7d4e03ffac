"""Properties of each filter: the support its definition gives, and logits (so the kept tokens'
relative probabilities) unchanged. Tests the docstrings of top_k.py, top_p.py and min_p.py."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm.sampling import Sampler, apply_temperature, min_p, top_k, top_p
from minillm.sampling.top_k import top_k_sorted
from minillm.sampling.top_p import top_p_sorted
from tests.sampling.strategies import logits, order_desc, probs64


def kept(out: np.ndarray) -> set[int]:
    return set(np.flatnonzero(np.isfinite(out)).tolist())


def assert_kept_logits_unchanged(z, out):
    keep = np.isfinite(out)
    assert out.dtype == z.dtype and out.shape == z.shape
    np.testing.assert_array_equal(out[keep], z[keep])   # same logits -> proportional probs
    assert np.isneginf(out[~keep]).all()


@given(logits(), st.integers(0, 12))
def test_top_k_keeps_the_k_largest_with_lower_id_on_ties(z, k):
    out = top_k(z, k)
    finite = set(np.flatnonzero(np.isfinite(z)).tolist())
    expected = finite if k == 0 or k >= len(z) else set(order_desc(z)[:k]) & finite
    assert kept(out) == expected
    assert_kept_logits_unchanged(z, out)


def test_top_k_tie_break_example():
    z = np.array([1, 3, 3, 2], np.float32)
    assert kept(top_k(z, 1)) == {1} and kept(top_k(z, 2)) == {1, 2} and kept(top_k(z, 3)) == {1, 2, 3}


@given(logits(), st.floats(0.01, 1.0))
def test_top_p_keeps_the_minimal_prefix_with_mass_at_least_p(z, p):
    out = top_p(z, p)
    probs = probs64(z)
    K = kept(out)
    order = [i for i in order_desc(z) if np.isfinite(z[i])]
    assert K == set(order[:len(K)])                          # a prefix, ties by lower id
    mass = probs[sorted(K)].sum()
    if p == 1.0:
        assert K == set(order)                               # off: every finite token kept
    else:
        smallest_kept = order[len(K) - 1]                    # the last token of the prefix
        assert mass >= p - 1e-9                              # enough mass
        assert mass - probs[smallest_kept] < p + 1e-9        # minimal: without it, below p
    assert_kept_logits_unchanged(z, out)


def test_top_p_boundary_includes_the_crossing_token():
    """p = [0.5, 0.3, 0.15, 0.05]: top_p 0.8 keeps {0, 1}; 0.81 keeps {0, 1, 2}; 0.3 keeps {0}."""
    z = np.log(np.array([0.5, 0.3, 0.15, 0.05]))            # float64 here: exact boundary
    assert kept(top_p(z, 0.8)) == {0, 1}
    assert kept(top_p(z, 0.81)) == {0, 1, 2}
    assert kept(top_p(z, 0.3)) == {0}
    assert kept(top_p(z, 1.0)) == {0, 1, 2, 3}


def test_top_p_exact_tie_at_the_boundary_keeps_the_lower_id():
    z = np.zeros(4, np.float32)                              # four tokens of 0.25
    assert kept(top_p(z, 0.5)) == {0, 1}
    assert kept(top_p(z, 0.51)) == {0, 1, 2}


@given(logits(), st.floats(0.0, 1.0))
def test_min_p_keeps_tokens_at_least_min_p_times_the_max(z, m):
    probs = probs64(z)
    ratio = probs / probs.max()
    assume(np.all(np.abs(ratio - m) > 1e-9))                 # not exactly on the threshold
    out = min_p(z, m)
    assert kept(out) == set(np.flatnonzero(ratio >= m).tolist()) & kept(z)
    assert int(np.argmax(z)) in kept(out)                    # the most likely always survives
    assert_kept_logits_unchanged(z, out)


def test_min_p_example():
    z = np.log(np.array([0.5, 0.3, 0.15, 0.05], np.float32))
    assert kept(min_p(z, 0.2)) == {0, 1, 2}
    assert kept(min_p(z, 1.0)) == {0}


@given(logits(batch=True), st.integers(0, 5), st.floats(0.05, 1.0), st.floats(0.0, 1.0))
def test_filters_batched_equal_row_by_row(z, k, p, m):
    for f, arg in ((top_k, k), (top_p, p), (min_p, m)):
        out = f(z, arg)
        for b in range(z.shape[0]):
            np.testing.assert_array_equal(out[b], f(z[b], arg))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_filters_keep_the_dtype(dtype):
    z = np.array([[0.1, 2.0, -1.0, 0.7]], dtype)
    for out in (top_k(z, 2), top_p(z, 0.5), min_p(z, 0.3)):
        assert out.dtype == dtype


@pytest.mark.parametrize("call, message", [
    (lambda z: top_k(z, -1), "top_k must be >= 0"),
    (lambda z: top_p(z, 0.0), r"top_p must be in \(0, 1\]"),
    (lambda z: top_p(z, 1.5), r"top_p must be in \(0, 1\]"),
    (lambda z: min_p(z, -0.1), r"min_p must be in \[0, 1\]"),
    (lambda z: min_p(z, 1.01), r"min_p must be in \[0, 1\]"),
])
def test_bad_filter_parameters_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call(np.zeros(3, np.float32))


@pytest.mark.parametrize("bad", [[0.0, np.nan], [0.0, np.inf], [-np.inf, -np.inf]])
def test_bad_logits_raise(bad):
    with pytest.raises(ValueError):
        top_k(np.array(bad, np.float32), 1)


@given(logits(batch=True, max_v=300), st.floats(0.01, 1.0), st.integers(0, 3))
def test_top_p_equals_the_sorted_definition(z, p, rounding):
    """Candidates grown from 64 (V up to 300: several rounds), ties and -inf included."""
    z = np.round(z * rounding) / rounding if rounding else z      # coarse values: many ties
    np.testing.assert_array_equal(top_p(z, p), top_p_sorted(z, p))


@pytest.mark.parametrize("seed", range(3))
def test_top_k_and_top_p_on_a_large_vocabulary_with_many_ties(seed):
    """V = 2000 logits rounded to 0.5 (hundreds of ties), one row partly masked: the supports
    equal the stable-sort reference of the definitions."""
    rng = np.random.default_rng(seed)
    z = (np.round(rng.standard_normal((2, 2000)) * 6) / 2).astype(np.float32)    # [2, 2000]
    z[1, rng.random(2000) < 0.5] = -np.inf
    zk = top_k(z, 150)                                                           # [2, V]
    for b in range(2):
        order = np.argsort(-z[b], kind="stable")                                 # [V]
        for k in (1, 7, 150):
            assert kept(top_k(z, k)[b]) == set(order[:k].tolist()) & kept(z[b])
        for x in (z, zk):                       # top-p alone, and on top-k's survivors
            order = np.argsort(-x[b], kind="stable")                             # [V]
            cum = np.cumsum(probs64(x[b])[order])                                # [V]
            for p in (0.3, 0.9):
                n = int(np.searchsorted(cum, p - 1e-12)) + 1     # shortest prefix with mass >= p
                assert kept(top_p(x, p)[b]) == set(order[:n].tolist())


@given(st.integers(4096, 70000), st.integers(1, 400),
       st.sampled_from(["normal", "ties", "sorted", "masked", "strided", "sampled"]),
       st.integers(0, 2**32 - 1))
def test_top_k_ids_on_long_rows_equal_the_sorted_definition(V, k, kind, seed):
    """Long rows take the threshold shortcut (top_k.candidates); the ids must still be exactly
    the first k of the order (logit descending, lower id first), ascending — also on rows made
    to mislead its sample (every 16th logit the largest: too few reach its threshold; the k
    largest all in the sample: exactly k reach it)."""
    from minillm.sampling.top_k import top_k_ids
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(V).astype(np.float32)                  # [V]
    if kind == "ties":
        z = np.round(2 * z)                                        # a few distinct values
    elif kind == "sorted":
        z = np.sort(z)                                             # every 16th value misleads
    elif kind == "masked":
        z[rng.random(V) < 0.99] = -np.inf                          # ~1 % finite
    elif kind == "strided":
        z[::16] += 100.0                                           # the sample: all the largest
    elif kind == "sampled":
        z[np.arange(0, V, 16)[:k]] = 100.0                         # the k largest: in the sample
    finite = int(np.isfinite(z).sum())
    assume(finite >= k)
    want = np.sort(np.lexsort((np.arange(V), -z))[:k])             # [k] the definition
    np.testing.assert_array_equal(top_k_ids(z, k), want)


@given(logits(batch=True, max_v=300), st.integers(0, 310), st.integers(0, 3))
def test_top_k_equals_the_sorted_definition(z, k, rounding):
    """top_k (partition, candidates) against top_k_sorted (the stable sort of the definition),
    ties and -inf included."""
    from minillm.sampling.top_k import top_k_sorted
    z = np.round(z * rounding) / rounding if rounding else z      # coarse values: many ties
    np.testing.assert_array_equal(top_k(z, k), top_k_sorted(z, k))


FILTERS = {"top_k": lambda z, a: top_k(z, a), "top_p": lambda z, a: top_p(z, a),
           "top_p_sorted": lambda z, a: top_p_sorted(z, a), "min_p": lambda z, a: min_p(z, a),
           "top_k_sorted": lambda z, a: top_k_sorted(z, a),
           "temperature": lambda z, a: apply_temperature(z, a)}
OFF = {"top_k": 0, "top_p": 1.0, "top_p_sorted": 1.0, "min_p": 0.0, "top_k_sorted": 0,
       "temperature": 1.0}


@pytest.mark.parametrize("name", FILTERS)
@pytest.mark.parametrize("bad", ["0.5", True, False, None, [1], np.bool_(True)])
def test_every_filter_refuses_a_setting_that_is_not_a_number(name, bad):
    """A string, a bool or a list where the number belongs is a TypeError naming the setting, in
    each filter and in Sampler (not only values out of range)."""
    with pytest.raises(TypeError, match=name.removesuffix("_sorted")):
        FILTERS[name](np.zeros(3, np.float32), bad)
    if name in ("top_k", "top_p", "min_p", "temperature"):
        with pytest.raises(TypeError, match=name):
            Sampler(**{name: bad})


def test_top_k_refuses_a_float_count():
    for bad in (2.0, np.float32(2.0)):
        with pytest.raises(TypeError, match="top_k must be an int"):
            top_k(np.zeros(3, np.float32), bad)


@pytest.mark.parametrize("call, message", [
    (lambda z: top_p_sorted(z, 0.0), r"top_p must be in \(0, 1\]"),
    (lambda z: top_p_sorted(z, 1.0 + 1e-9), r"top_p must be in \(0, 1\]"),
    (lambda z: top_p_sorted(z, float("nan")), r"top_p must be in \(0, 1\]"),
    (lambda z: top_k_sorted(z, -1), "top_k must be >= 0"),
    (lambda z: top_p(z, float("nan")), r"top_p must be in \(0, 1\]"),
    (lambda z: min_p(z, float("nan")), r"min_p must be in \[0, 1\]"),
])
def test_the_reference_forms_check_their_settings_like_the_fast_ones(call, message):
    with pytest.raises(ValueError, match=message):
        call(np.zeros(3, np.float32))


@pytest.mark.parametrize("name", FILTERS)
def test_every_filter_refuses_rows_without_tokens_or_bad_logits(name):
    arg = {"top_k": 1, "top_k_sorted": 1, "top_p": 0.5, "top_p_sorted": 0.5, "min_p": 0.5,
           "temperature": 0.7}[name]
    for bad in (np.zeros(0, np.float32), np.zeros((2, 0), np.float32)):
        with pytest.raises(ValueError, match="V >= 1"):
            FILTERS[name](bad, arg)
    for bad in (np.array([0.0, np.nan], np.float32), np.array([[0.0, 1.0], [-np.inf, -np.inf]])):
        with pytest.raises(ValueError, match="NaN|-inf"):
            FILTERS[name](bad, arg)
    with pytest.raises(TypeError, match="floating"):
        FILTERS[name](np.arange(3), arg)


@pytest.mark.parametrize("name", FILTERS)
@pytest.mark.parametrize("off", [False, True])
def test_every_filter_keeps_an_empty_batch_empty(name, off):
    arg = OFF[name] if off else {"top_k": 2, "top_k_sorted": 2, "top_p": 0.5, "top_p_sorted": 0.5,
                                 "min_p": 0.5, "temperature": 0.7}[name]
    out = FILTERS[name](np.zeros((0, 5), np.float32), arg)
    assert out.shape == (0, 5) and out.dtype == np.float32


@pytest.mark.parametrize("name", OFF)
@given(logits(batch=True), st.floats(-1e4, 0.0, width=32))
def test_off_leaves_every_logit_untouched_even_far_below_the_maximum(name, z, low):
    """top_p = 1, top_k = 0, min_p = 0 return the logits as they are (a copy), even tokens whose
    probability underflows to 0 in float64 (a logit 1000 below the maximum): "off" is off, not
    "almost everything". Temperature 1 keeps every logit finite, shifted by the row's maximum."""
    z = z.copy()
    z[..., 0] = low                                            # a tail far below the rest
    out = FILTERS[name](z, OFF[name])
    assert out is not z and out.dtype == z.dtype
    if name == "temperature":
        np.testing.assert_array_equal(out, z - z.max(axis=-1, keepdims=True))
    else:
        np.testing.assert_array_equal(out, z)


@given(st.lists(st.floats(-30.0, 30.0), min_size=2, max_size=12), st.data())
def test_top_p_counts_a_mass_within_tol_of_p_as_reaching_it(values, data):
    """The documented tolerance, on both sides: with the mass before token j (in the sorted order)
    equal to m, top_p = m + 0.8·TOL keeps j out (m counts as reaching p), top_p = m + 1.2·TOL keeps
    it in. Float64 logits, so the boundary is as sharp as the rule says."""
    from minillm.functional import softmax
    from minillm.sampling.top_p import TOL
    assert TOL == 1e-12
    z = np.array(values)                                           # [V] float64
    probs = softmax(z)
    order = np.argsort(-z, kind="stable")                          # [V] the definition's order
    j = data.draw(st.integers(1, len(z) - 1))
    before = float(np.cumsum(probs[order])[j - 1])                 # the mass strictly before j
    assume(before + 1.2 * TOL <= 1.0 and probs[order[j]] > 1e-9)
    for f in (top_p, top_p_sorted):
        assert kept(f(z, before + 0.8 * TOL)) == set(order[:j].tolist())
        assert kept(f(z, before + 1.2 * TOL)) == set(order[:j + 1].tolist())


@given(st.floats(0.0, 20.0, width=32), st.integers(1, 6))
def test_min_p_boundary_is_inclusive_in_float64(gap, n_ties):
    """A token whose float64 ratio p_i / p_max equals min_p exactly is kept, even where the
    float32 ratio rounds below it; one float64 step above, it goes (the docstring's "computed in
    float64")."""
    z = np.zeros(n_ties + 1, np.float32)
    z[-1] = -gap                                                   # the token at the edge
    ratio = float(np.exp(np.float64(z[-1])))                       # its exact float64 ratio
    assert kept(min_p(z, ratio)) == set(range(n_ties + 1))
    if ratio < 1.0:
        assert kept(min_p(z, float(np.nextafter(ratio, 2.0)))) == set(range(n_ties))


@pytest.mark.parametrize("V", [5, 300, 5000])
def test_top_k_of_logits_that_all_tie_keeps_the_lowest_ids(V):
    """Every logit equal: the first k ids survive, in every form (the O(V) path's tie fill and
    the threshold shortcut of long rows included)."""
    from minillm.sampling.top_k import top_k_ids
    z = np.full((2, V), 1.5, np.float32)
    for k in (1, 3, V - 1):
        assert kept(top_k(z, k)[1]) == set(range(k)) == kept(top_k_sorted(z, k)[0])
        np.testing.assert_array_equal(top_k_ids(z, k), np.tile(np.arange(k), (2, 1)))


@given(st.integers(4096, 9000), st.data(), st.sampled_from(["normal", "ties"]),
       st.integers(0, 2**32 - 1))
def test_top_k_on_long_rows_with_k_near_v_equals_the_sorted_definition(V, data, kind, seed):
    """k from a few thousand up to V - 1 on long rows (where the threshold shortcut's sample is
    too short to rank k): the same k ids as the definition."""
    from minillm.sampling.top_k import top_k_ids
    k = data.draw(st.integers(2000, V - 1))
    z = np.random.default_rng(seed).standard_normal(V).astype(np.float32)   # [V]
    z = np.round(2 * z) if kind == "ties" else z
    want = np.sort(np.lexsort((np.arange(V), -z))[:k])                      # [k] the definition
    np.testing.assert_array_equal(top_k_ids(z, k), want)
    assert kept(top_k(z, k)) == set(want.tolist())


@pytest.mark.parametrize("name", FILTERS)
@given(logits(), st.integers(1, 12), st.floats(0.05, 1.0))
def test_every_filter_takes_one_row_as_a_batch_of_one(name, z, k, a):
    """Every form takes ``[V]`` as its docstring says, and gives what it gives that row in a
    ``[1, V]`` batch (one distribution is a batch of one)."""
    arg = k if name.startswith("top_k") else a
    one = FILTERS[name](z, arg)
    assert one.shape == z.shape and one.dtype == z.dtype
    np.testing.assert_array_equal(one, FILTERS[name](z[None], arg)[0])


@pytest.mark.parametrize("k", [2, 8, 40, 100])
def test_top_k_ids_when_exactly_k_distinct_logits_reach_the_shortcuts_threshold(k):
    """A long row built so that the threshold of top_k.candidates (the r-th largest of every 16th
    logit, r = 2k/16 + 1) is reached by exactly k logits, all different: those k are the answer,
    ascending (the partition then runs on a pool of exactly k)."""
    from minillm.sampling.top_k import top_k_ids
    V, r = 5000, 2 * k // 16 + 1
    z = np.random.default_rng(k).standard_normal(V).astype(np.float32)      # [V] all below 10
    z[16 * np.arange(r)] = 100.0 + np.arange(r, 0, -1)            # the sample's r largest: t = 101
    z[16 * np.arange(k - r) + 1] = 200.0 + np.arange(k - r)       # k - r more above t, off-sample
    want = np.sort(np.lexsort((np.arange(V), -z))[:k])                      # [k] the definition
    assert (z >= 101.0).sum() == k
    np.testing.assert_array_equal(top_k_ids(z, k), want)
    np.testing.assert_array_equal(top_k(z[None], k), top_k_sorted(z[None], k))


@given(logits(batch=True), st.booleans(), st.data())
def test_top_k_ids_are_the_kept_ids_ascending_as_int64(z, one_row, data):
    """``top_k_ids``: the ids ``top_k`` keeps, ascending, an int64 array ``[k]`` for a row and
    ``[B, k]`` for a batch (the sampler's batch of ids comes from it: int64, like greedy's and the
    draw's); a row with fewer than k finite logits fills up with its lowest -inf ids."""
    from minillm.sampling.top_k import top_k_ids
    z = z[0] if one_row else z                                     # [V] or [B, V]
    k = data.draw(st.integers(1, z.shape[-1]))
    ids = top_k_ids(z, k)
    assert type(ids) is np.ndarray and ids.dtype == np.int64 and ids.shape == z.shape[:-1] + (k,)
    for row, got in zip(np.atleast_2d(z), np.atleast_2d(ids)):
        want, finite = kept(top_k_sorted(row, k)), np.isfinite(row[got])
        assert (np.diff(got) > 0).all()                            # ascending, no repeats
        assert set(got[finite].tolist()) == want
        assert got[~finite].tolist() == np.flatnonzero(~np.isfinite(row))[:k - len(want)].tolist()
